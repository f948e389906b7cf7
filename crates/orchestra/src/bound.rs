//! The lower bound the thesis compares broadcasts with (Table 4.1): a pipelined binomial tree on
//! the same links.
//!
//! With `n` machines (the source and the receivers) a binomial tree reaches everyone in
//! `L = ceil(log2 n)` rounds. Cut the data into `k` pieces and pipeline them: in each round every
//! machine sends one piece and receives one, so the last piece arrives after `k + L - 1` rounds
//! of `alpha + B / (k r)` each (`r` the one-way link rate, `alpha` a per-round latency). The bound
//! is that time at the best `k`. As `alpha -> 0` it tends to `B / r`, the time for any receiver
//! just to download the data; the thesis' 1 GB to 100 receivers in 15.4 s "within 33%" puts its
//! bound at about 11.6 s, i.e. `B / r` at 0.75 Gbps each way of its "1.5 Gbps bidirectional".

/// Per-round latency used by the command's `lower_bound_s`: a request's round trip on a loaded
/// host of this machine (what one more pipeline round costs), 1 ms.
pub const DEFAULT_ALPHA_S: f64 = 1e-3;

/// Rounds and time of the pipelined binomial tree for `bytes` to `receivers` at `rate_bps`.
pub fn pipelined_binomial_tree_s(bytes: u64, receivers: u32, rate_bps: f64, alpha_s: f64) -> f64 {
    let n = receivers as u64 + 1;
    if receivers == 0 || bytes == 0 {
        return 0.0;
    }
    let rounds = 64 - (n - 1).leading_zeros() as u64; // ceil(log2 n) for n >= 2
    let byte_s = 8.0 / rate_bps;
    let t = |k: u64| (k + rounds - 1) as f64 * (alpha_s + bytes as f64 * byte_s / k as f64);
    if alpha_s <= 0.0 {
        return bytes as f64 * byte_s;
    }
    // T(k) is convex in k; its real minimum is at sqrt((L-1) B byte_s / alpha).
    let k_star =
        (((rounds - 1) as f64 * bytes as f64 * byte_s / alpha_s).sqrt() as u64).clamp(1, bytes);
    [
        k_star.saturating_sub(1).max(1),
        k_star,
        (k_star + 1).min(bytes),
    ]
    .into_iter()
    .map(t)
    .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_receiver_is_one_transfer_and_many_cost_rounds() {
        // One receiver: L = 1, best k = 1: alpha + B/r.
        let t = pipelined_binomial_tree_s(1_000_000, 1, 8e6, 0.01);
        assert!((t - 1.01).abs() < 1e-9, "{t}");
        // Never below B/r, and more receivers never cost less.
        let mut last = 0.0;
        for n in [1, 2, 3, 7, 15, 31, 100] {
            let t = pipelined_binomial_tree_s(1 << 30, n, 1e9, 1e-3);
            assert!(t >= (1u64 << 30) as f64 * 8.0 / 1e9);
            assert!(t >= last, "{n}: {t} < {last}");
            last = t;
        }
        assert_eq!(pipelined_binomial_tree_s(1000, 5, 8000.0, 0.0), 1.0);
    }

    #[test]
    fn the_thesis_bound_is_about_b_over_r() {
        // 1 GiB to 100 receivers at 0.75 Gbps each way with 1 ms rounds: 7 rounds, about
        // 260 pieces, 12.0 s (B/r alone is 11.45 s); the thesis' 15.4 s is 1.29x of it, about
        // its "within 33%".
        let t = pipelined_binomial_tree_s(1 << 30, 100, 0.75e9, 1e-3);
        assert!((11.9..12.1).contains(&t), "{t}");
    }
}
