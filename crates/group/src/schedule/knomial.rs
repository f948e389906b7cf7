//! The k-nomial tree over relative ranks `0..size`, root 0 (rank r of a tree rooted at `root`
//! has relative rank `(r - root) mod size`). MPICH's numbering: the parent of `v` is `v` with
//! its lowest nonzero base-k digit cleared, and the children of `v` are `v + i k^d`
//! (i = 1..k-1) for every digit `d` below that lowest one (every `d` for the root). MilliSort's
//! snapshot clears the highest digit instead; both give the same depths (the number of nonzero
//! digits), but only this numbering makes every subtree a contiguous range of relative ranks,
//! so a gather whose combine concatenates comes out in rank order.

use crate::GroupError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knomial {
    size: usize,
    k: usize,
}

impl Knomial {
    pub fn new(size: usize, k: u32) -> Result<Knomial, GroupError> {
        if k < 2 {
            return Err(GroupError::BadRadix(k));
        }
        if size == 0 {
            return Err(GroupError::EmptyGroup);
        }
        Ok(Knomial {
            size,
            k: k as usize,
        })
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// The weight `k^d` of the lowest nonzero digit of `v > 0`; for the root, the first power
    /// of k at or above `size` (so every digit below it is the root's).
    fn low_weight(&self, v: usize) -> usize {
        let mut w = 1usize;
        if v == 0 {
            while w < self.size {
                w = w.saturating_mul(self.k);
            }
            return w;
        }
        while (v / w).is_multiple_of(self.k) {
            w *= self.k;
        }
        w
    }

    pub fn parent(&self, v: usize) -> Option<usize> {
        if v == 0 {
            return None;
        }
        let w = self.low_weight(v);
        Some(v - ((v / w) % self.k) * w)
    }

    /// Children, largest subtree first (the order a sender should start them in).
    pub fn children(&self, v: usize) -> Vec<usize> {
        let top = self.low_weight(v);
        let mut weights = Vec::new();
        let mut w = 1usize;
        while w < top {
            weights.push(w);
            match w.checked_mul(self.k) {
                Some(n) => w = n,
                None => break,
            }
        }
        let mut out = Vec::new();
        for &w in weights.iter().rev() {
            for i in 1..self.k {
                match i.checked_mul(w).and_then(|x| x.checked_add(v)) {
                    Some(c) if c < self.size => out.push(c),
                    _ => break,
                }
            }
        }
        out
    }

    /// The relative ranks of the subtree under `v` (itself included): `v .. v + low_weight(v)`.
    pub fn subtree(&self, v: usize) -> std::ops::Range<usize> {
        v..v.saturating_add(self.low_weight(v)).min(self.size)
    }

    /// Edges from the root to `v`: the number of nonzero base-k digits of `v`.
    pub fn depth(&self, v: usize) -> usize {
        let mut v = v;
        let mut d = 0;
        while v > 0 {
            if !v.is_multiple_of(self.k) {
                d += 1;
            }
            v /= self.k;
        }
        d
    }

    /// Rounds of the classical k-nomial broadcast (root sends to k-1 nodes, then every holder
    /// does): the number of base-k digits of `size - 1`, i.e. ceil(log_k size). Every depth is
    /// at most this.
    pub fn rounds(&self) -> usize {
        let mut r = 0;
        let mut span = 1usize;
        while span < self.size {
            span = span.saturating_mul(self.k);
            r += 1;
        }
        r
    }
}

/// Relative rank of `rank` in a tree rooted at `root`.
pub fn relative(rank: usize, root: usize, size: usize) -> usize {
    (rank + size - root) % size
}

/// Absolute rank of relative rank `v` in a tree rooted at `root`.
pub fn absolute(v: usize, root: usize, size: usize) -> usize {
    (v + root) % size
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn binomial_tree_of_eight_is_the_textbook_one() {
        let t = Knomial::new(8, 2).unwrap();
        assert_eq!(t.children(0), vec![4, 2, 1]);
        assert_eq!(t.children(4), vec![6, 5]);
        assert_eq!(t.children(6), vec![7]);
        assert_eq!(t.children(7), Vec::<usize>::new());
        assert_eq!(t.parent(7), Some(6));
        assert_eq!(t.parent(6), Some(4));
        assert_eq!(t.parent(5), Some(4));
        assert_eq!(t.rounds(), 3);
    }

    #[test]
    fn trinomial_tree_of_ten() {
        let t = Knomial::new(10, 3).unwrap();
        // Digits of 9 are 100 (base 3): the root's children are 9, then 3, 6, then 1, 2.
        assert_eq!(t.children(0), vec![9, 3, 6, 1, 2]);
        assert_eq!(t.children(3), vec![4, 5]);
        assert_eq!(t.parent(8), Some(6));
        assert_eq!(t.depth(8), 2);
        assert_eq!(t.rounds(), 3);
    }

    #[test]
    fn bad_radix_and_empty_group_are_errors() {
        assert!(matches!(Knomial::new(4, 1), Err(GroupError::BadRadix(1))));
        assert!(matches!(Knomial::new(0, 2), Err(GroupError::EmptyGroup)));
    }

    proptest! {
        /// Every node but the root has exactly one parent, which lists it as a child; depths
        /// grow by one along edges and never exceed the round count; subtrees are contiguous
        /// and partition their parent's.
        #[test]
        fn the_tree_spans_every_rank_once(size in 1usize..300, k in 2u32..12) {
            let t = Knomial::new(size, k).unwrap();
            let mut seen = vec![0u32; size];
            seen[0] += 1;
            for v in 0..size {
                let mut covered = vec![v];
                for c in t.children(v) {
                    prop_assert!(c > v && c < size);
                    prop_assert_eq!(t.parent(c), Some(v));
                    prop_assert_eq!(t.depth(c), t.depth(v) + 1);
                    seen[c] += 1;
                    covered.extend(t.subtree(c));
                }
                covered.sort();
                let sub: Vec<usize> = t.subtree(v).collect();
                prop_assert_eq!(covered, sub);
                prop_assert!(t.depth(v) <= t.rounds());
                prop_assert!(t.children(v).len() <= (k as usize - 1) * t.rounds().max(1));
            }
            prop_assert!(seen.iter().all(|&s| s == 1));
            // rounds = ceil(log_k size) by the definition: smallest r with k^r >= size.
            let r = t.rounds() as u32;
            prop_assert!((k as u128).pow(r) >= size as u128);
            prop_assert!(r == 0 || (k as u128).pow(r - 1) < size as u128);
        }

        #[test]
        fn relative_and_absolute_are_inverse(size in 1usize..100, root in 0usize..100, r in 0usize..100) {
            let root = root % size;
            let r = r % size;
            prop_assert_eq!(absolute(relative(r, root, size), root, size), r);
            prop_assert_eq!(relative(root, root, size), 0);
        }
    }
}
