//! An in-memory `Exchange`: one map of messages keyed by (op, src, dst) shared by threads, so
//! collectives and the applications built on them (MilliSort, MilliQuery) run in one process
//! in tests. A reused key, a message to oneself or a wait longer than 20 s is an error, so
//! schedule bugs fail the test instead of hanging it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::{Exchange, GroupError, WireProto};

#[derive(Default)]
pub struct Hub {
    slots: Mutex<HashMap<(u64, u32, u32), Vec<u8>>>,
    cv: Condvar,
    pub messages: AtomicU64,
}

impl Hub {
    pub fn left_over(&self) -> usize {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

pub struct MemEx {
    pub hub: Arc<Hub>,
    pub rank: u32,
    pub size: u32,
}

fn err(s: String) -> GroupError {
    GroupError::Exchange(s.into())
}

impl Exchange for MemEx {
    fn exchange(
        &self,
        op: u64,
        sends: Vec<(u32, Vec<u8>)>,
        recv_from: &[u32],
        _proto: &WireProto,
    ) -> Result<Vec<(u32, Vec<u8>)>, GroupError> {
        let mut slots = self.hub.slots.lock().unwrap_or_else(|p| p.into_inner());
        for (to, bytes) in sends {
            if to == self.rank || to >= self.size {
                return Err(err(format!("rank {} sends to {to}", self.rank)));
            }
            self.hub.messages.fetch_add(1, Ordering::Relaxed);
            if slots.insert((op, self.rank, to), bytes).is_some() {
                return Err(err(format!("op {op:#x} {}->{to} used twice", self.rank)));
            }
        }
        self.hub.cv.notify_all();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if recv_from
                .iter()
                .all(|&f| slots.contains_key(&(op, f, self.rank)))
            {
                return Ok(recv_from
                    .iter()
                    .map(|&f| (f, slots.remove(&(op, f, self.rank)).unwrap_or_default()))
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
                .unwrap_or_else(|p| p.into_inner())
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

/// Run `f` on a world of `m` in-memory ranks, one thread each; results in rank order, and the
/// hub (to check message counts and that nothing was left undelivered).
pub fn run<T: Send>(m: usize, f: impl Fn(crate::Group) -> T + Sync) -> (Vec<T>, Arc<Hub>) {
    run_world(m, |_, ex| {
        f(crate::Group::world(ex).expect("a world over a valid exchange"))
    })
}

/// Run `f(rank, exchange)` on `m` in-memory ranks, one thread each (for callers that wrap the
/// exchange, e.g. in a `Counted`); results in rank order, and the hub.
pub fn run_world<T: Send>(
    m: usize,
    f: impl Fn(usize, Arc<dyn Exchange>) -> T + Sync,
) -> (Vec<T>, Arc<Hub>) {
    let hub = Arc::new(Hub::default());
    let out = std::thread::scope(|s| {
        let handles: Vec<_> = (0..m)
            .map(|r| {
                let ex: Arc<dyn Exchange> = Arc::new(MemEx {
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
