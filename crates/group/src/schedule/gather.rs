//! Gather over the k-nomial tree (MilliSort §4: k = 6 "to utilize as much network bandwidth as
//! possible at each step"): every node combines its own value with its children's results and
//! sends one message up. The fold order is fixed (children in increasing relative rank, after
//! the node's own value), so the result never depends on arrival order, and a concatenating
//! combine yields relative-rank order because subtrees are contiguous ranges.

use super::knomial::Knomial;

/// MilliSort's gather radix ([P] §5.1).
pub const GATHER_K: u32 = 6;
/// MilliSort's broadcast radix (`BRANCH_FACTOR 10` in the code snapshot).
pub const BCAST_K: u32 = 10;

/// The children of `v` in the order their results are folded into `v`'s own.
pub fn fold_order(tree: &Knomial, v: usize) -> Vec<usize> {
    let mut c = tree.children(v);
    c.sort_unstable();
    c
}

/// Run a gather on plain values without any I/O (the reference the tests compare the real
/// one against, and a worked example of the fold order).
pub fn simulate<T: Clone>(tree: &Knomial, values: &[T], combine: &mut impl FnMut(T, T) -> T) -> T {
    fn up<T: Clone>(
        tree: &Knomial,
        v: usize,
        values: &[T],
        combine: &mut impl FnMut(T, T) -> T,
    ) -> T {
        let mut acc = values[v].clone();
        for c in fold_order(tree, v) {
            let sub = up(tree, c, values, combine);
            acc = combine(acc, sub);
        }
        acc
    }
    up(tree, 0, values, combine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenation_comes_out_in_rank_order_for_every_size_and_radix() {
        for size in 1..=40usize {
            for k in 2..=11 {
                let t = Knomial::new(size, k).unwrap();
                let values: Vec<Vec<usize>> = (0..size).map(|v| vec![v]).collect();
                let got = simulate(&t, &values, &mut |mut a: Vec<usize>, b: Vec<usize>| {
                    a.extend(b);
                    a
                });
                assert_eq!(got, (0..size).collect::<Vec<_>>(), "size {size} k {k}");
            }
        }
    }

    #[test]
    fn every_node_combines_once_per_child() {
        for size in 1..=30usize {
            let t = Knomial::new(size, GATHER_K).unwrap();
            let mut calls = 0;
            simulate(&t, &vec![0u8; size], &mut |a, _| {
                calls += 1;
                a
            });
            assert_eq!(calls, size - 1);
        }
    }
}
