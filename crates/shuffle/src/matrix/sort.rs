//! The sort-based generator (thesis §5.1): MilliSort's final bucket sort. Every node draws M
//! keys; all keys are sorted with (key, node) so the node breaks ties; node j receives the keys
//! of ranks [jM, (j+1)M); the message i -> j is the number of node i's keys among them.
//! Skewness comes only from duplicate keys.
//!
//! Key distribution (the thesis gives none, spec §7.1): a mixture, each key independently the
//! one hot key (the smallest) with probability d, else uniform over the rest of the u32 range.
//! The hot keys of node i are then one run of about dM ranks (one or two receivers), and the
//! uniform keys spread evenly over the other receivers; `expected_skewness` computes the
//! skewness this gives and `hot_fraction_for` inverts it: d = 0 gives about 0 (only counting
//! noise), d = 1 exactly 1 (everything stays local before the shuffle of rows and columns).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{permutation, MatrixError, ShuffleMatrix};

/// Options of the sort-based generator; `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SortOptions {
    /// M = keys_factor x N keys per node (thesis: 100 "appears to be sufficient").
    pub keys_factor: usize,
    /// The hot-key probability d; `None` derives it from the target skewness.
    pub hot_fraction: Option<f64>,
    /// Randomly permute rows and columns afterwards so data does not stay on the diagonal.
    pub shuffle: bool,
}

impl Default for SortOptions {
    fn default() -> Self {
        SortOptions {
            keys_factor: 100,
            hot_fraction: None,
            shuffle: true,
        }
    }
}

/// Expected skewness of the sort generator for `n` nodes, hot fraction `d` and `m` keys per
/// node. Node i's hot keys are the run [i dN, (i+1) dN) in normalized units (receiver intervals
/// of length N), cut at interval boundaries; its uniform keys spread at density 1/N over the
/// rest; counting noise (Poisson, about 1/sqrt(keys) per cell) adds (1 - d) N^3 / m to the sum
/// of squares.
pub fn expected_skewness(n: usize, d: f64, m: usize) -> f64 {
    if n <= 1 {
        return 0.0;
    }
    let nf = n as f64;
    let b = d * nf;
    let mut sum_sq = 0.0;
    for i in 0..n {
        let (start, end) = (i as f64 * b, (i + 1) as f64 * b);
        let mut x = start;
        while x < end {
            let boundary = ((x / nf).floor() + 1.0) * nf;
            let piece = end.min(boundary) - x;
            sum_sq += piece * piece;
            x = end.min(boundary);
        }
    }
    let hot_total = nf * b;
    for k in 0..n {
        let (lo, hi) = (k as f64 * nf, (k + 1) as f64 * nf);
        let overlap = (hi - lo.max(hot_total)).max(0.0);
        let c = overlap / nf;
        sum_sq += nf * c * c;
    }
    sum_sq += (1.0 - d) * nf.powi(3) / m.max(1) as f64;
    let var = (sum_sq / (nf * nf) - 1.0).max(0.0);
    (var / (nf - 1.0)).sqrt()
}

/// The hot-key probability whose expected skewness is `target` (bisection over d in [0, 1] on
/// `expected_skewness`).
pub fn hot_fraction_for(n: usize, target: f64, m: usize) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if expected_skewness(n, mid, m) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Most keys the sort generator draws in all (n x M, 8 bytes each: 16 GiB). Its default, 100
/// keys per node per node, is 1.9 x 10^9 keys at the largest matrix (4,400 nodes).
pub const MAX_KEYS: usize = 1 << 31;

/// Bytes the sort generator holds for `n` nodes and a keys factor: its n x M keys (8 bytes
/// each) and n^2 counts and weights (16 bytes each). Saturates.
pub fn sort_bytes(n: usize, keys_factor: usize) -> u64 {
    let n = n as u64;
    let keys = n.saturating_mul(n).saturating_mul(keys_factor as u64);
    keys.saturating_mul(8)
        .saturating_add(n.saturating_mul(n).saturating_mul(16))
}

fn too_many_keys(n: usize, keys_factor: usize) -> MatrixError {
    MatrixError::spec(
        "keys per node factor",
        &format!(
            "{keys_factor} x {n} nodes is {} keys per node and {} in all (about {:.1} GB): at \
             most {MAX_KEYS} keys in all",
            (keys_factor as u128) * (n as u128),
            (keys_factor as u128) * (n as u128) * (n as u128),
            sort_bytes(n, keys_factor) as f64 / 1e9,
        ),
    )
}

/// The sort-based generator's normalized n x n matrix.
pub fn sort_based(
    n: usize,
    target: f64,
    opts: &SortOptions,
    rng: &mut impl Rng,
) -> Result<ShuffleMatrix, MatrixError> {
    if opts.keys_factor == 0 {
        return Err(MatrixError::spec(
            "keys per node factor",
            "must be at least 1",
        ));
    }
    // n x M keys of 8 bytes each, then n^2 counts: checked, and reserved without aborting, so
    // a factor of 2^64 - 1 (a multiplication overflow) or one past memory is an error.
    let Some(m) = opts.keys_factor.checked_mul(n) else {
        return Err(too_many_keys(n, opts.keys_factor));
    };
    if n.checked_mul(m).is_none_or(|k| k > MAX_KEYS) {
        return Err(too_many_keys(n, opts.keys_factor));
    }
    let d = opts
        .hot_fraction
        .unwrap_or_else(|| hot_fraction_for(n, target, m));
    if !(0.0..=1.0).contains(&d) {
        return Err(MatrixError::spec(
            "hot fraction",
            &format!("{d} is outside [0, 1]"),
        ));
    }
    // (key << 32 | node): one u64 sort orders by key, then node (the thesis' tie-break).
    let mut keys: Vec<u64> = Vec::new();
    keys.try_reserve_exact(n * m)
        .map_err(|_| too_many_keys(n, opts.keys_factor))?;
    for node in 0..n as u64 {
        for _ in 0..m {
            let key: u64 = if rng.gen_bool(d) {
                0
            } else {
                rng.gen_range(1..=u32::MAX as u64)
            };
            keys.push(key << 32 | node);
        }
    }
    keys.sort_unstable();
    let mut count = vec![0u64; n * n];
    for (rank, k) in keys.iter().enumerate() {
        let src = (k & 0xffff_ffff) as usize;
        count[src * n + rank / m] += 1;
    }
    let (rows, cols) = if opts.shuffle {
        (permutation(n, rng), permutation(n, rng))
    } else {
        ((0..n).collect(), (0..n).collect())
    };
    let scale = n as f64 / m as f64;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = count[rows[i] * n + cols[j]] as f64 * scale;
        }
    }
    Ok(ShuffleMatrix { n, w })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn expected_skewness_ends() {
        // d = 1: every node keeps everything, a scaled identity.
        assert!((expected_skewness(10, 1.0, 1000) - 1.0).abs() < 1e-12);
        // d = 0 and no counting noise: exactly uniform.
        assert!(expected_skewness(10, 0.0, usize::MAX) < 1e-9);
        assert!((hot_fraction_for(10, 1.0, 1000) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn mostly_equal_keys_give_diagonal_and_last_column() {
        // Figure 5.3: before the shuffle of rows and columns, non-zeros sit on the diagonal
        // and in the last column.
        let n = 8;
        let opts = SortOptions {
            keys_factor: 100,
            hot_fraction: Some(0.97),
            shuffle: false,
        };
        let m = sort_based(n, 0.0, &opts, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        let mut off = 0.0;
        for i in 0..n {
            for j in 0..n {
                let on_pattern = j == i || j == n - 1 || j + 1 == i || j == i + 1;
                if !on_pattern {
                    off += m.get(i, j);
                }
            }
        }
        let diag: f64 = (0..n).map(|i| m.get(i, i)).sum();
        assert!(diag > 0.9 * (n * n) as f64 * 0.9, "diagonal {diag}");
        assert!(off < 0.02 * (n * n) as f64, "off-pattern {off}");
        assert!((0..n - 1).all(|i| m.get(i, n - 1) > 0.0));
    }

    #[test]
    fn key_counts_past_the_bound_are_errors_not_panics() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for kf in [usize::MAX, 1 << 62, 1 << 29] {
            let opts = SortOptions {
                keys_factor: kf,
                ..SortOptions::default()
            };
            let e = sort_based(4, 0.5, &opts, &mut rng).unwrap_err().to_string();
            assert!(
                e.contains("keys per node factor") && e.contains("at most"),
                "{e}"
            );
            assert!(e.contains(&kf.to_string()), "{e}");
        }
        // One key past the bound is refused; the default runs.
        let opts = SortOptions {
            keys_factor: MAX_KEYS / 4 + 1,
            ..SortOptions::default()
        };
        assert!(sort_based(2, 0.5, &opts, &mut rng).is_err());
        assert!(sort_based(2, 0.5, &SortOptions::default(), &mut rng).is_ok());
        assert_eq!(
            sort_bytes(4, 100),
            4 * 400 * 8 + 16 * 16,
            "4 nodes x 400 keys each"
        );
        assert_eq!(sort_bytes(usize::MAX, usize::MAX), u64::MAX);
    }
}
