//! Operations finished here, remembered so a late packet of one is answered (a lost ACK: the
//! sender probes, we ACK again; thesis §3.5) or filtered, never staged for a new operation.
//! Bounded: the oldest are forgotten first.

use std::collections::{HashMap, VecDeque};

#[derive(Debug)]
pub struct Completed {
    /// Operation id -> whether it succeeded (only a success may be ACKed again).
    map: HashMap<u64, bool>,
    order: VecDeque<u64>,
    cap: usize,
}

impl Completed {
    pub fn new(cap: usize) -> Completed {
        Completed {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    pub fn insert(&mut self, op: u64, ok: bool) {
        if self.map.insert(op, ok).is_none() {
            self.order.push_back(op);
            if self.order.len() > self.cap {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }

    /// `Some(succeeded)` for a remembered operation.
    pub fn get(&self, op: u64) -> Option<bool> {
        self.map.get(&op).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_latest_ones() {
        let mut c = Completed::new(2);
        c.insert(1, true);
        c.insert(2, false);
        c.insert(2, false);
        assert_eq!((c.get(1), c.get(2)), (Some(true), Some(false)));
        c.insert(3, true);
        assert_eq!(
            (c.get(1), c.get(2), c.get(3)),
            (None, Some(false), Some(true))
        );
    }
}
