//! An `Exchange` that counts what this process sends through the one below it (messages and
//! payload bytes), so an application (MilliSort, MilliQuery) reports its traffic per phase;
//! every sub-group shares the world's exchange, so one counter sees it all.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::{Exchange, GroupError, WireProto};

pub struct Counted {
    inner: Arc<dyn Exchange>,
    messages: AtomicU64,
    bytes: AtomicU64,
}

impl Counted {
    pub fn new(inner: Arc<dyn Exchange>) -> Arc<Counted> {
        Arc::new(Counted {
            inner,
            messages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// Messages and payload bytes this process has sent so far (empty messages included).
    pub fn sent(&self) -> (u64, u64) {
        (
            self.messages.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

impl Exchange for Counted {
    fn exchange(
        &self,
        op: u64,
        sends: Vec<(u32, Vec<u8>)>,
        recv_from: &[u32],
        proto: &WireProto,
    ) -> Result<Vec<(u32, Vec<u8>)>, GroupError> {
        let bytes: usize = sends.iter().map(|(_, b)| b.len()).sum();
        self.messages
            .fetch_add(sends.len() as u64, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        self.inner.exchange(op, sends, recv_from, proto)
    }

    fn world_rank(&self) -> u32 {
        self.inner.world_rank()
    }

    fn world_size(&self) -> u32 {
        self.inner.world_size()
    }
}
