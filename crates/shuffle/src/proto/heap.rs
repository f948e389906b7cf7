//! An indexed 4-ary max-heap over small integer ids (message peers) with `u64` keys and a
//! `u32` tie-break (by default the lower id wins). Four 16-byte children fill one cache line,
//! and the tree is half as deep as a binary heap: sifting is what the simulator waits on. The
//! protocols keep their messages in these so that picking the next message to send or grant is
//! O(log n) instead of a scan over every peer (thesis Listing 3 scans; same result, faster).

const NONE: u32 = u32::MAX;

/// One heap slot: the key and its tie-break compare as a pair; the id rides along. Keys live
/// beside their ids in the heap array (16 bytes a slot), so sifting touches one array.
#[derive(Debug, Clone, Copy)]
struct Slot {
    rank: (u64, u32),
    id: u32,
}

#[derive(Debug, Clone)]
pub struct IndexedHeap {
    heap: Vec<Slot>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    /// A heap for ids `0..n`.
    pub fn new(n: usize) -> Self {
        IndexedHeap {
            heap: Vec::with_capacity(n.min(64)),
            pos: vec![NONE; n],
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn contains(&self, id: usize) -> bool {
        self.pos[id] != NONE
    }

    /// The id with the greatest key, and that key.
    #[inline]
    pub fn peek(&self) -> Option<(usize, u64)> {
        self.heap.first().map(|s| (s.id as usize, s.rank.0))
    }

    /// Inserts `id` or changes its key; on equal keys the lower id comes first.
    pub fn set(&mut self, id: usize, key: u64) {
        self.set_tie(id, key, u32::MAX - id as u32);
    }

    /// Inserts `id` or changes its key; on equal keys the greater `tie` comes first.
    pub fn set_tie(&mut self, id: usize, key: u64, tie: u32) {
        let item = Slot {
            rank: (key, tie),
            id: id as u32,
        };
        let p = self.pos[id];
        if p == NONE {
            self.heap.push(item);
            let last = self.heap.len() - 1;
            self.up(last, item);
        } else {
            let p = p as usize;
            let old = self.heap[p].rank;
            if item.rank > old {
                self.up(p, item);
            } else if item.rank < old {
                self.down(p, item);
            }
        }
    }

    pub fn pop(&mut self) -> Option<usize> {
        let top = self.heap.first()?.id as usize;
        self.remove(top);
        Some(top)
    }

    pub fn remove(&mut self, id: usize) {
        let p = self.pos[id];
        if p == NONE {
            return;
        }
        let p = p as usize;
        let last = self.heap.pop().expect("non-empty");
        self.pos[id] = NONE;
        if p < self.heap.len() {
            if last.rank > self.heap[p].rank {
                self.up(p, last);
            } else {
                self.down(p, last);
            }
        }
    }

    /// Moves `item` from slot `i` towards the root until its parent's key is not smaller.
    fn up(&mut self, mut i: usize, item: Slot) {
        while i > 0 {
            let parent = (i - 1) / 4;
            let pk = self.heap[parent];
            if pk.rank >= item.rank {
                break;
            }
            self.heap[i] = pk;
            self.pos[pk.id as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = item;
        self.pos[item.id as usize] = i as u32;
    }

    /// Moves `item` from slot `i` towards the leaves until no child's key is greater.
    fn down(&mut self, mut i: usize, item: Slot) {
        let n = self.heap.len();
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut c = first;
            for k in first + 1..(first + 4).min(n) {
                if self.heap[k].rank > self.heap[c].rank {
                    c = k;
                }
            }
            let ck = self.heap[c];
            if ck.rank <= item.rank {
                break;
            }
            self.heap[i] = ck;
            self.pos[ck.id as usize] = i as u32;
            i = c;
        }
        self.heap[i] = item;
        self.pos[item.id as usize] = i as u32;
    }
}

/// The tie-break of node `id` for peer `j` of `n`: peers in increasing `(id + j) mod n`.
/// Across nodes this is a Latin square (also when senders and receivers are disjoint blocks of
/// indices, as in Figure 3.3), so nodes whose keys tie (deterministic priorities at the start
/// of a shuffle) do not all pick the same peer. Pass it to `set_tie`.
pub fn rotated(id: usize, j: usize, n: usize) -> u32 {
    u32::MAX - ((id + j) % n) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pops_in_key_order(ops in proptest::collection::vec((0usize..20, 0u64..50, any::<bool>()), 1..200)) {
            let mut h = IndexedHeap::new(20);
            let mut model = std::collections::BTreeMap::new();
            for (id, k, ins) in ops {
                if ins { h.set(id, k); model.insert(id, k); }
                else { h.remove(id); model.remove(&id); }
                prop_assert_eq!(h.len(), model.len());
            }
            // Greatest key first, the lower id on ties.
            let mut want: Vec<_> = model.iter().map(|(&i, &k)| (k, std::cmp::Reverse(i))).collect();
            want.sort_by(|a, b| b.cmp(a));
            let got: Vec<_> = std::iter::from_fn(|| h.pop()).collect();
            prop_assert_eq!(got, want.into_iter().map(|(_, i)| i.0).collect::<Vec<_>>());
        }
    }
}
