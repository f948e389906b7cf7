//! An indexed binary max-heap over small integer ids (message peers) with `u128` keys. The
//! protocols keep their messages in these so that picking the next message to send or grant is
//! O(log n) instead of a scan over every peer (thesis Listing 3 scans; same result, faster).

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct IndexedHeap {
    heap: Vec<u32>,
    pos: Vec<u32>,
    key: Vec<u128>,
}

impl IndexedHeap {
    /// A heap for ids `0..n`.
    pub fn new(n: usize) -> Self {
        IndexedHeap {
            heap: Vec::with_capacity(n),
            pos: vec![NONE; n],
            key: vec![0; n],
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
    pub fn peek(&self) -> Option<(usize, u128)> {
        self.heap
            .first()
            .map(|&i| (i as usize, self.key[i as usize]))
    }

    /// Inserts `id` or changes its key.
    pub fn set(&mut self, id: usize, key: u128) {
        let p = self.pos[id];
        if p == NONE {
            self.key[id] = key;
            self.pos[id] = self.heap.len() as u32;
            self.heap.push(id as u32);
            self.up(self.heap.len() - 1);
        } else {
            let old = self.key[id];
            self.key[id] = key;
            if key > old {
                self.up(p as usize);
            } else {
                self.down(p as usize);
            }
        }
    }

    pub fn pop(&mut self) -> Option<usize> {
        let top = *self.heap.first()? as usize;
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
            self.heap[p] = last;
            self.pos[last as usize] = p as u32;
            self.up(p);
            self.down(self.pos[last as usize] as usize);
        }
    }

    fn up(&mut self, mut i: usize) {
        let id = self.heap[i];
        let k = self.key[id as usize];
        while i > 0 {
            let parent = (i - 1) / 2;
            let pid = self.heap[parent];
            if self.key[pid as usize] >= k {
                break;
            }
            self.heap[i] = pid;
            self.pos[pid as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = id;
        self.pos[id as usize] = i as u32;
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let id = self.heap[i];
        let k = self.key[id as usize];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.key[self.heap[r] as usize] > self.key[self.heap[l] as usize] {
                r
            } else {
                l
            };
            let cid = self.heap[c];
            if self.key[cid as usize] <= k {
                break;
            }
            self.heap[i] = cid;
            self.pos[cid as usize] = i as u32;
            i = c;
        }
        self.heap[i] = id;
        self.pos[id as usize] = i as u32;
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
