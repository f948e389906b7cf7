//! Merging sorted lists: pivots as they arrive at a pivot sorter (spec §2.5 step 2), and the
//! k-way merge of received record runs (spec §2.9).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Two sorted lists into one (the combine of a merge-on-arrival gather).
pub fn merge_two<T: Ord + Copy>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// k sorted runs into one order: returns `(run, index in run)` for each item, smallest first,
/// ties by run (a binary heap of the runs' heads: O(n log k)).
pub fn kway_order<T: Ord + Copy>(runs: &[&[T]]) -> Vec<(u32, u32)> {
    let total = runs.iter().map(|r| r.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut heap: BinaryHeap<Reverse<(T, u32, u32)>> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .map(|(k, r)| Reverse((r[0], k as u32, 0)))
        .collect();
    while let Some(Reverse((_, k, i))) = heap.pop() {
        out.push((k, i));
        let run = runs[k as usize];
        if let Some(&next) = run.get(i as usize + 1) {
            heap.push(Reverse((next, k, i + 1)));
        }
    }
    out
}

/// k sorted lists into one sorted list.
pub fn merge_all<T: Ord + Copy>(lists: &[Vec<T>]) -> Vec<T> {
    let runs: Vec<&[T]> = lists.iter().map(|l| l.as_slice()).collect();
    kway_order(&runs)
        .into_iter()
        .map(|(k, i)| runs[k as usize][i as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn merges_equal_a_sort(mut lists in proptest::collection::vec(
            proptest::collection::vec(0u32..50, 0..20), 0..6)) {
            for l in &mut lists { l.sort(); }
            let mut want: Vec<u32> = lists.concat();
            want.sort();
            prop_assert_eq!(&merge_all(&lists), &want);
            let two = lists.iter().fold(Vec::new(), |acc, l| merge_two(&acc, l));
            prop_assert_eq!(&two, &want);
        }
    }
}
