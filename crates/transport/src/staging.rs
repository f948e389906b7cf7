//! Datagrams of operations not started here yet (thesis §3.2: no setup phase, so a fast peer's
//! packets may arrive first). Bounded in bytes, each datagram's bookkeeping counted as well as
//! its payload; unclaimed datagrams expire in O(1) each (a flood of one op id stays linear).

use std::collections::{HashMap, VecDeque};

/// Memory a kept datagram costs besides its bytes: its `Vec` header in the op's deque (room
/// for twice as many slots while the deque grows) and the allocator's header and rounding.
const ENTRY_COST: usize = 2 * std::mem::size_of::<Vec<u8>>() + 32;
/// Memory an entry of `order` costs (twice, for the deque's growth); counted until it leaves.
const ORDER_COST: usize = 2 * std::mem::size_of::<(u64, u64)>();

#[derive(Debug)]
pub struct Staging {
    by_op: HashMap<u64, VecDeque<Vec<u8>>>,
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
        let cost = dgram.len() + ENTRY_COST + ORDER_COST;
        if self.bytes + cost > self.max_bytes {
            return false;
        }
        self.bytes += cost;
        self.by_op.entry(op).or_default().push_back(dgram.to_vec());
        self.order.push_back((now, op));
        true
    }

    /// Everything kept for `op`, in arrival order.
    pub fn take(&mut self, op: u64) -> Vec<Vec<u8>> {
        let got: Vec<Vec<u8>> = self.by_op.remove(&op).unwrap_or_default().into();
        // Their `order` entries stay (and stay counted) until they expire.
        self.bytes -= got.iter().map(|d| d.len() + ENTRY_COST).sum::<usize>();
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
            self.bytes -= ORDER_COST;
            // The op's datagrams arrived no earlier than its first entry in `order`: drop the
            // oldest one left (an op already taken has none).
            if let Some(v) = self.by_op.get_mut(&op) {
                let d = v.pop_front().expect("an op's deque is never left empty");
                self.bytes -= d.len() + ENTRY_COST;
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
        let per = ENTRY_COST + ORDER_COST;
        let mut s = Staging::new(100 + 3 * per, 1000);
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

    #[test]
    fn small_datagrams_are_bounded_by_their_real_cost() {
        // 64 KiB of 60-byte datagrams: counting payload only would keep 1,092 of them.
        let mut s = Staging::new(64 << 10, 1000);
        let kept = (0..2000).take_while(|_| s.push(0, 1, &[0; 60])).count();
        let real = 60 + std::mem::size_of::<Vec<u8>>() + std::mem::size_of::<(u64, u64)>();
        assert!(kept > 0 && kept * real <= 64 << 10, "kept {kept}");
    }

    #[test]
    fn a_flood_of_one_op_expires_whole_and_in_order() {
        // 200,000 datagrams of one op id (the adversarial flood's shape): expiry pops each
        // from the front; with a Vec this took O(n^2) moves.
        let mut s = Staging::new(usize::MAX / 2, 1000);
        for i in 0..200_000u64 {
            assert!(s.push(i / 1000, 9, &(i as u32).to_le_bytes()));
        }
        assert_eq!(s.expire(1000 + 99), 100_000);
        let left = s.take(9);
        assert_eq!(left.len(), 100_000);
        assert_eq!(left[0], 100_000u32.to_le_bytes());
        assert_eq!(
            s.expire(u64::MAX),
            0,
            "only the taken op's order entries were left"
        );
        assert_eq!(s.bytes, 0);
    }
}
