//! An indexed binary max-heap over small integer ids (message peers) with `u128` keys. The
//! protocols keep their messages in these so that picking the next message to send or grant is
//! O(log n) instead of a scan over every peer (thesis Listing 3 scans; same result, faster).

const NONE: u32 = u32::MAX;

/// Keys live beside their ids in the heap array, so sifting touches one array.
#[derive(Debug, Clone)]
pub struct IndexedHeap {
    heap: Vec<(u128, u32)>,
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
    pub fn peek(&self) -> Option<(usize, u128)> {
        self.heap.first().map(|&(k, i)| (i as usize, k))
    }

    /// Inserts `id` or changes its key.
    pub fn set(&mut self, id: usize, key: u128) {
        let p = self.pos[id];
        if p == NONE {
            self.heap.push((key, id as u32));
            let last = self.heap.len() - 1;
            self.up(last, (key, id as u32));
        } else {
            let p = p as usize;
            let old = self.heap[p].0;
            if key > old {
                self.up(p, (key, id as u32));
            } else if key < old {
                self.down(p, (key, id as u32));
            }
        }
    }

    pub fn pop(&mut self) -> Option<usize> {
        let top = self.heap.first()?.1 as usize;
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
            if last.0 > self.heap[p].0 {
                self.up(p, last);
            } else {
                self.down(p, last);
            }
        }
    }

    /// Moves `item` from slot `i` towards the root until its parent's key is not smaller.
    fn up(&mut self, mut i: usize, item: (u128, u32)) {
        while i > 0 {
            let parent = (i - 1) / 2;
            let pk = self.heap[parent];
            if pk.0 >= item.0 {
                break;
            }
            self.heap[i] = pk;
            self.pos[pk.1 as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = item;
        self.pos[item.1 as usize] = i as u32;
    }

    /// Moves `item` from slot `i` towards the leaves until no child's key is greater.
    fn down(&mut self, mut i: usize, item: (u128, u32)) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.heap[r].0 > self.heap[l].0 {
                r
            } else {
                l
            };
            let ck = self.heap[c];
            if ck.0 <= item.0 {
                break;
            }
            self.heap[i] = ck;
            self.pos[ck.1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = item;
        self.pos[item.1 as usize] = i as u32;
    }
}

/// A heap key: `prio` first (greater wins), then the lower id (the thesis' strict `>` keeps
/// the first message in list order on ties).
pub fn key(prio: u128, id: usize) -> u128 {
    (prio << 32) | (u32::MAX - id as u32) as u128
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pops_in_key_order(ops in proptest::collection::vec((0usize..20, 0u128..50, any::<bool>()), 1..200)) {
            let mut h = IndexedHeap::new(20);
            let mut model = std::collections::BTreeMap::new();
            for (id, k, ins) in ops {
                if ins { h.set(id, key(k, id)); model.insert(id, key(k, id)); }
                else { h.remove(id); model.remove(&id); }
                prop_assert_eq!(h.len(), model.len());
            }
            let mut want: Vec<_> = model.iter().map(|(&i, &k)| (k, i)).collect();
            want.sort_by(|a, b| b.cmp(a));
            let got: Vec<_> = std::iter::from_fn(|| h.pop()).collect();
            prop_assert_eq!(got, want.into_iter().map(|(_, i)| i).collect::<Vec<_>>());
        }
    }
}
