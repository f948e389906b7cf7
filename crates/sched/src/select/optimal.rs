//! The online optimum of §4.3: P fetchers of one reduce task ask at the same moment, and every
//! multiset of P sources drawn from the M pending nodes (C(P+M-1, P) of them) is tried; the one
//! with the largest utilization wins. It sees only flows already scheduled, not future ones.
//! A node is picked at most as many times as it holds pending outputs (the paper counts
//! unbounded repetition; with enough outputs per node the two agree).

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::bandwidth::Bandwidth;
use super::{SelectError, Source};

/// C(p + m - 1, p): multisets of size `p` from `m` kinds (saturating).
pub fn multisets(m: u64, p: u64) -> u128 {
    if m == 0 {
        return u128::from(p == 0);
    }
    // C(n, k) with n = p + m - 1, k = min(p, m - 1), built up exactly term by term.
    let n = u128::from(p + m - 1);
    let k = u128::from(p.min(m - 1));
    let mut c: u128 = 1;
    for i in 0..k {
        c = match c.checked_mul(n - i) {
            Some(v) => v / (i + 1),
            None => return u128::MAX,
        };
    }
    c
}

/// The best multiset of `k` sources for `dst`, as a list of nodes (one per fetcher).
#[allow(clippy::too_many_arguments)]
pub fn pick(
    bw: &mut Bandwidth,
    pattern: &[(u32, u32)],
    dst: u32,
    candidates: &[Source],
    k: usize,
    rng: &mut ChaCha8Rng,
    tolerance: f64,
    max_combinations: u64,
) -> Result<Vec<u32>, SelectError> {
    let combinations = multisets(candidates.len() as u64, k as u64);
    if combinations > u128::from(max_combinations) {
        return Err(SelectError::TooManyCombinations {
            combinations,
            limit: max_combinations,
        });
    }
    let mut order = candidates.to_vec();
    order.shuffle(rng);
    let mut search = Search {
        bw,
        pattern,
        dst,
        order: &order,
        tolerance,
        extra: Vec::with_capacity(k),
        best: Vec::new(),
        best_util: f64::NEG_INFINITY,
    };
    search.walk(0, k);
    Ok(search.best.iter().map(|&(src, _)| src).collect())
}

struct Search<'a> {
    bw: &'a mut Bandwidth,
    pattern: &'a [(u32, u32)],
    dst: u32,
    order: &'a [Source],
    tolerance: f64,
    extra: Vec<(u32, u32)>,
    best: Vec<(u32, u32)>,
    best_util: f64,
}

impl Search<'_> {
    /// Extend `extra` with `left` more flows from `order[from..]` (non-decreasing index, so
    /// each multiset is visited once).
    fn walk(&mut self, from: usize, left: usize) {
        if left == 0 {
            let util = self.bw.total(self.pattern, &self.extra);
            if util > self.best_util + self.tolerance {
                self.best_util = util;
                self.best.clone_from(&self.extra);
            }
            return;
        }
        for i in from..self.order.len() {
            let s = self.order[i];
            let used = self.extra.iter().filter(|&&(n, _)| n == s.node).count();
            if used >= s.outputs as usize {
                continue;
            }
            self.extra.push((s.node, self.dst));
            self.walk(i, left - 1);
            self.extra.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiset_counts_match_spec_p9() {
        assert_eq!(multisets(4, 2), 10);
        assert_eq!(multisets(19, 5), 33_649);
        assert_eq!(multisets(1, 7), 1);
        assert_eq!(multisets(7, 1), 7);
        assert_eq!(multisets(0, 0), 1);
        assert_eq!(multisets(0, 3), 0);
        assert_eq!(multisets(1_000_000, 1_000_000), u128::MAX);
    }
}
