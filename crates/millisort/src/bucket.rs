//! Which records go where: bucket j holds the keys in (s_{j-1}, s_j], the last bucket the keys
//! above the last splitter.

use std::ops::Range;

/// The index ranges of a sorted key array, one per bucket (`splitters.len() + 1` of them).
pub fn ranges(sorted: &[u128], splitters: &[u128]) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(splitters.len() + 1);
    let mut start = 0;
    for s in splitters {
        let end = start + sorted[start..].partition_point(|k| k <= s);
        out.push(start..end);
        start = end;
    }
    out.push(start..sorted.len());
    out
}

/// Bucket of one key.
pub fn bucket_of(key: u128, splitters: &[u128]) -> usize {
    splitters.partition_point(|s| *s < key)
}

/// Largest bucket over the mean bucket, minus one (spec §2.6 "excess records in the largest
/// partition, relative to the average partition size").
pub fn excess(sizes: &[u64]) -> f64 {
    let total: u64 = sizes.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let max = *sizes.iter().max().expect("non-empty") as f64;
    max * sizes.len() as f64 / total as f64 - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_agree_with_bucket_of_and_include_the_splitter() {
        let keys: Vec<u128> = vec![1, 3, 3, 5, 8, 9];
        let s = [3, 7];
        assert_eq!(ranges(&keys, &s), vec![0..3, 3..4, 4..6]);
        for (j, r) in ranges(&keys, &s).into_iter().enumerate() {
            assert!(keys[r].iter().all(|&k| bucket_of(k, &s) == j));
        }
        assert!((excess(&[3, 1, 2]) - 0.5).abs() < 1e-12);
    }
}
