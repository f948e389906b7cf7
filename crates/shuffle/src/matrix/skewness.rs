//! Message skewness (spec §1.3): population standard deviation of the normalized sizes over all
//! N² entries, divided by its maximum sqrt(N - 1) under uniform data distribution.

/// Skewness of an `n` x `n` matrix of sizes in any unit: the entries are normalized by their
/// own mean first, so a normalized matrix and its packet instantiation are comparable.
/// 0 for n <= 1 or an all-zero matrix (no spread is possible).
pub fn skewness(w: &[f64], n: usize) -> f64 {
    assert_eq!(w.len(), n * n, "an n x n matrix");
    if n <= 1 {
        return 0.0;
    }
    let count = (n * n) as f64;
    let mean = w.iter().sum::<f64>() / count;
    if mean <= 0.0 {
        return 0.0;
    }
    // Two passes (mean first) keep the variance exact enough for skewness 0 to read as 0.
    let var = w.iter().map(|&x| (x / mean - 1.0).powi(2)).sum::<f64>() / count;
    // Not clamped: a matrix without uniform data distribution can exceed 1, and should say so.
    var.sqrt() / ((n - 1) as f64).sqrt()
}

/// Skewness of whole-packet counts.
pub fn skewness_of_counts(c: &[u64], n: usize) -> f64 {
    let w: Vec<f64> = c.iter().map(|&x| x as f64).collect();
    skewness(&w, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_is_zero_and_permutation_is_one() {
        let n = 7;
        assert_eq!(skewness(&vec![1.0; n * n], n), 0.0);
        let mut p = vec![0.0; n * n];
        for i in 0..n {
            p[i * n + (i + 3) % n] = n as f64;
        }
        assert!((skewness(&p, n) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn scale_free() {
        let w = [0.5, 1.5, 1.5, 0.5];
        let scaled: Vec<f64> = w.iter().map(|x| x * 16.0).collect();
        assert!((skewness(&w, 2) - skewness(&scaled, 2)).abs() < 1e-15);
        // stddev 0.5 over sqrt(1)
        assert!((skewness(&w, 2) - 0.5).abs() < 1e-15);
    }
}
