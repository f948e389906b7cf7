//! The sort-based generator (thesis §5.1): MilliSort's final bucket sort. Every node draws M
//! keys; all keys are sorted with (key, node) so the node breaks ties; node j receives the keys
//! of ranks [jM, (j+1)M); the message i -> j is the number of node i's keys among them.
//! Skewness comes only from duplicate keys.
//!
//! Key distribution (the thesis gives none, spec §7.1): a mixture, each key independently the
//! one hot key (the smallest) with probability d, else uniform over the rest of the u32 range.
//! The hot keys of node i are then one run of about dM ranks (one or two receivers), and the
//! uniform keys spread evenly over the other receivers, so the expected skewness is
//! sqrt(d (dN - 1) / (N - 1)), which `hot_fraction_for` inverts: d = 1/N gives about 0, d = 1
//! gives exactly 1 (everything stays local before the shuffle of rows and columns).

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

/// The hot-key probability whose expected skewness is `target` for `n` nodes.
pub fn hot_fraction_for(n: usize, target: f64) -> f64 {
    if n <= 1 {
        return 1.0;
    }
    let nf = n as f64;
    let d = (1.0 + (1.0 + 4.0 * nf * (nf - 1.0) * target * target).sqrt()) / (2.0 * nf);
    d.clamp(0.0, 1.0)
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
    let d = opts
        .hot_fraction
        .unwrap_or_else(|| hot_fraction_for(n, target));
    if !(0.0..=1.0).contains(&d) {
        return Err(MatrixError::spec(
            "hot fraction",
            &format!("{d} is outside [0, 1]"),
        ));
    }
    let m = opts.keys_factor * n;
    // (key << 32 | node): one u64 sort orders by key, then node (the thesis' tie-break).
    let mut keys: Vec<u64> = Vec::with_capacity(n * m);
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
    fn hot_fraction_ends() {
        assert!((hot_fraction_for(10, 0.0) - 0.1).abs() < 1e-12);
        assert!((hot_fraction_for(10, 1.0) - 1.0).abs() < 1e-12);
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
}
