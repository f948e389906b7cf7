//! Transfer controllers (spec §2.0, §2.3 "size-aware"): one per transfer picks its
//! mechanism from what the controller knows globally (size, receivers, senders' loads).
//!
//! Broadcast: with little data or few receivers a pipelined chain (or tree) beats Cornet,
//! whose large blocks and swarm bookkeeping only pay off when there is much to share. The
//! thresholds are named options; their defaults come from this machine's measurements
//! (docs/orchestra.md, "Size-aware selection").
//! Shuffle: MADD when the data is skewed enough that fair sharing leaves a bottleneck idle,
//! fair sharing otherwise (MADD reduces to it on balanced data, spec §2.5).

use crate::mechanism::Mechanism;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BroadcastRule {
    /// At most this many bytes: `small` (measured here: chain beat tree and Cornet at 1 MB
    /// and 8 MB to 15 receivers; docs/orchestra.md).
    pub small_bytes: u64,
    pub small: Mechanism,
    /// At most this many receivers: a chain (every receiver gets the full upload of one
    /// other; nothing to gain from a swarm).
    pub few_receivers: u32,
}

impl Default for BroadcastRule {
    fn default() -> Self {
        BroadcastRule {
            small_bytes: 8 << 20,
            small: Mechanism::Chain,
            few_receivers: 2,
        }
    }
}

impl BroadcastRule {
    pub fn choose(&self, bytes: u64, receivers: u32) -> Mechanism {
        if receivers <= self.few_receivers {
            Mechanism::Chain
        } else if bytes <= self.small_bytes {
            self.small
        } else {
            Mechanism::Cornet
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShuffleMechanism {
    Fair,
    Madd,
}

/// The shuffle of `d[i][j]` bytes from sender i to receiver j: MADD when its optimum (the
/// most loaded port's bytes, Γ up to the rate) beats what per-flow fair sharing achieves by
/// more than `gain` (a fraction), else fair. Fair sharing's time is computed by progressive
/// filling of equal per-flow rates on the ports (the hose model).
pub fn choose_shuffle(d: &[Vec<f64>], gain: f64) -> ShuffleMechanism {
    let fair = fair_time(d);
    let gamma = bottleneck(d);
    if gamma > 0.0 && fair / gamma > 1.0 + gain {
        ShuffleMechanism::Madd
    } else {
        ShuffleMechanism::Fair
    }
}

/// The most loaded port's bytes (unit rate: time), the optimum any schedule can reach.
pub fn bottleneck(d: &[Vec<f64>]) -> f64 {
    let m = d.len();
    let r = d.iter().map(Vec::len).max().unwrap_or(0);
    let up = d
        .iter()
        .map(|row| row.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let down = (0..r)
        .map(|j| {
            d.iter()
                .map(|row| row.get(j).copied().unwrap_or(0.0))
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    let _ = m;
    up.max(down)
}

/// Completion time of per-flow max-min fair sharing on unit-rate ports (events at each flow's
/// end; rates recomputed by water filling).
pub fn fair_time(d: &[Vec<f64>]) -> f64 {
    let mut left: Vec<(usize, usize, f64)> = d
        .iter()
        .enumerate()
        .flat_map(|(i, row)| {
            row.iter()
                .enumerate()
                .filter(|(_, &v)| v > 0.0)
                .map(move |(j, &v)| (i, j, v))
        })
        .collect();
    let senders = d.len();
    let receivers = d.iter().map(Vec::len).max().unwrap_or(0);
    let mut t = 0.0;
    while !left.is_empty() {
        // Water filling over ports 0..senders (up) and senders.. (down).
        let ports = senders + receivers;
        let mut cap = vec![1.0; ports];
        let mut rate = vec![None::<f64>; left.len()];
        loop {
            let mut count = vec![0usize; ports];
            for (k, &(i, j, _)) in left.iter().enumerate() {
                if rate[k].is_none() {
                    count[i] += 1;
                    count[senders + j] += 1;
                }
            }
            let Some((p, share)) = (0..ports)
                .filter(|&p| count[p] > 0)
                .map(|p| (p, cap[p] / count[p] as f64))
                .min_by(|a, b| a.1.total_cmp(&b.1))
            else {
                break;
            };
            for (k, &(i, j, _)) in left.iter().enumerate() {
                if rate[k].is_none() && (i == p || senders + j == p) {
                    rate[k] = Some(share);
                    cap[i] -= share;
                    cap[senders + j] -= share;
                }
            }
        }
        let dt = left
            .iter()
            .zip(&rate)
            .map(|(&(_, _, v), r)| v / r.unwrap_or(f64::MIN_POSITIVE))
            .fold(f64::INFINITY, f64::min);
        t += dt;
        for (f, r) in left.iter_mut().zip(&rate) {
            f.2 -= r.unwrap_or(0.0) * dt;
        }
        left.retain(|f| f.2 > 1e-9);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_or_narrow_broadcasts_use_trees_and_chains() {
        let r = BroadcastRule::default();
        assert_eq!(r.choose(1 << 30, 1), Mechanism::Chain);
        assert_eq!(r.choose(1 << 20, 30), Mechanism::Chain);
        assert_eq!(r.choose(1 << 30, 30), Mechanism::Cornet);
        let tree = BroadcastRule {
            small: Mechanism::Tree { d: 2 },
            ..r
        };
        assert_eq!(tree.choose(8 << 20, 30), Mechanism::Tree { d: 2 });
        assert_eq!(tree.choose((8 << 20) + 1, 30), Mechanism::Cornet);
    }

    /// Fig 4.6 with N senders per receiver and one more sending N to both (spec §2.5): fair
    /// sharing takes 3N - 1 units, MADD 2N; for N = 100 that is the thesis' 1.495x.
    #[test]
    fn figure_4_6_fair_sharing_is_1_495_times_madd() {
        let n = 100;
        let mut d = vec![vec![0.0; 2]; 2 * n + 1];
        for (i, row) in d.iter_mut().enumerate().take(2 * n) {
            row[i / n] = 1.0;
        }
        d[2 * n] = vec![n as f64, n as f64];
        let fair = fair_time(&d);
        assert!((fair - 299.0).abs() < 1e-6, "{fair}");
        assert_eq!(bottleneck(&d), 200.0);
        assert_eq!(choose_shuffle(&d, 0.1), ShuffleMechanism::Madd);
        // Balanced all-to-all: fair is optimal, so fair it is.
        let even = vec![vec![1.0; 4]; 4];
        assert!((fair_time(&even) - bottleneck(&even)).abs() < 1e-9);
        assert_eq!(choose_shuffle(&even, 0.1), ShuffleMechanism::Fair);
    }
}
