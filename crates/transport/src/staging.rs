//! Datagrams of operations not started here yet (thesis §3.2: no setup phase, so a fast peer's
//! packets may arrive first). Bounded in bytes; unclaimed datagrams expire.

use std::collections::{HashMap, VecDeque};

#[derive(Debug)]
pub struct Staging {
    by_op: HashMap<u64, Vec<Vec<u8>>>,
    /// Arrival order, for expiry: (arrival ns, op).
    order: VecDeque<(u64, u64)>,
    bytes: usize,
    max_bytes: usize,
    ttl_ns: u64,
}

impl Staging {
    pub fn new(max_bytes: usize, ttl_ns: u64) -> Staging {
        Staging {
            by_op: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            max_bytes,
            ttl_ns,
        }
    }

    /// Keep `dgram` for `op`; false (dropped) when the area is full.
    pub fn push(&mut self, now: u64, op: u64, dgram: &[u8]) -> bool {
        if self.bytes + dgram.len() > self.max_bytes {
            return false;
        }
        self.bytes += dgram.len();
        self.by_op.entry(op).or_default().push(dgram.to_vec());
        self.order.push_back((now, op));
        true
    }

    /// Everything kept for `op`, in arrival order.
    pub fn take(&mut self, op: u64) -> Vec<Vec<u8>> {
        let got = self.by_op.remove(&op).unwrap_or_default();
        self.bytes -= got.iter().map(Vec::len).sum::<usize>();
        got
    }

    /// Drop datagrams older than the time to live; how many.
    pub fn expire(&mut self, now: u64) -> usize {
        let mut dropped = 0;
        while let Some(&(at, op)) = self.order.front() {
            if now.saturating_sub(at) < self.ttl_ns {
                break;
            }
            self.order.pop_front();
            // The op's datagrams arrived no earlier than its first entry in `order`: drop the
            // oldest one left (an op already taken has none).
            if let Some(v) = self.by_op.get_mut(&op) {
                let d = v.remove(0);
                self.bytes -= d.len();
                dropped += 1;
                if v.is_empty() {
                    self.by_op.remove(&op);
                }
            }
        }
        dropped
    }

    /// When the oldest datagram expires, if any is kept.
    pub fn next_expiry(&self) -> Option<u64> {
        // Entries of taken ops linger in `order` until their time; harmless wake-ups.
        self.order.front().map(|&(at, _)| at + self.ttl_ns)
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.by_op.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_until_claimed_or_expired_and_bounded() {
        let mut s = Staging::new(100, 1000);
        assert!(s.push(0, 7, &[1; 40]));
        assert!(s.push(10, 8, &[2; 40]));
        assert!(!s.push(20, 9, &[3; 40]), "over the byte bound");
        assert!(s.push(500, 7, &[4; 20]));
        assert_eq!(s.expire(999), 0);
        assert_eq!(s.next_expiry(), Some(1000));
        // Op 7's first datagram expires; its second stays.
        assert_eq!(s.expire(1005), 1);
        assert_eq!(s.take(7), vec![vec![4; 20]]);
        assert_eq!(s.take(7), Vec::<Vec<u8>>::new());
        assert_eq!(s.take(8), vec![vec![2; 40]]);
        // Entries of taken operations expire without dropping anything.
        assert_eq!(s.expire(1600), 0);
        assert!(s.is_empty());
        assert!(s.push(2000, 9, &[3; 100]), "room again");
    }
}
