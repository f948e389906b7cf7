//! An in-memory `Exchange` (threads and one map of messages keyed by (op, src, dst)), so the
//! distributed plans run in one process in tests: the group library's own is private to its
//! tests. A reused key, a message to oneself or a long wait is an error, not a hang.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use coflowkit_group::{Exchange, Group, GroupError, WireProto};

#[derive(Default)]
pub struct Hub {
    slots: Mutex<HashMap<(u64, u32, u32), Vec<u8>>>,
    cv: Condvar,
}

impl Hub {
    /// Messages sent but never received (should be none after a run).
    pub fn left_over(&self) -> usize {
        self.slots.lock().expect("hub").len()
    }
}

pub struct MemExchange {
    pub hub: Arc<Hub>,
    pub rank: u32,
    pub size: u32,
}

fn err(s: String) -> GroupError {
    GroupError::Exchange(s.into())
}

impl Exchange for MemExchange {
    fn exchange(
        &self,
        op: u64,
        sends: Vec<(u32, Vec<u8>)>,
        recv_from: &[u32],
        _proto: &WireProto,
    ) -> Result<Vec<(u32, Vec<u8>)>, GroupError> {
        let mut slots = self.hub.slots.lock().expect("hub");
        for (to, bytes) in sends {
            if to == self.rank || to >= self.size {
                return Err(err(format!("rank {} sends to {to}", self.rank)));
            }
            if slots.insert((op, self.rank, to), bytes).is_some() {
                return Err(err(format!("op {op:#x} {}->{to} used twice", self.rank)));
            }
        }
        self.hub.cv.notify_all();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if recv_from
                .iter()
                .all(|&f| slots.contains_key(&(op, f, self.rank)))
            {
                return Ok(recv_from
                    .iter()
                    .map(|&f| (f, slots.remove(&(op, f, self.rank)).expect("checked")))
                    .collect());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(err(format!(
                    "rank {} waited in vain for op {op:#x} from {recv_from:?}",
                    self.rank
                )));
            }
            slots = self
                .hub
                .cv
                .wait_timeout(slots, deadline - now)
                .expect("hub")
                .0;
        }
    }

    fn world_rank(&self) -> u32 {
        self.rank
    }

    fn world_size(&self) -> u32 {
        self.size
    }
}

/// Runs `f(rank, exchange)` on `m` in-memory ranks, one thread each; results in rank order.
pub fn run_world<T: Send>(
    m: usize,
    f: impl Fn(usize, Arc<dyn Exchange>) -> T + Sync,
) -> (Vec<T>, Arc<Hub>) {
    let hub = Arc::new(Hub::default());
    let out = std::thread::scope(|s| {
        let handles: Vec<_> = (0..m)
            .map(|r| {
                let ex: Arc<dyn Exchange> = Arc::new(MemExchange {
                    hub: hub.clone(),
                    rank: r as u32,
                    size: m as u32,
                });
                let f = &f;
                s.spawn(move || f(r, ex))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread panicked"))
            .collect()
    });
    (out, hub)
}

/// A world group over an exchange (a convenience for tests).
pub fn world(ex: Arc<dyn Exchange>) -> Result<Group, GroupError> {
    Group::world(ex)
}
