//! Application preemption (thesis §3.1.6, §6.2): each node alternates running and preempted
//! intervals. While preempted it runs none of its logic (no receiving, granting or sending);
//! its NIC keeps queueing arriving packets. Interval lengths are N(mu, mu/4) (the thesis gives
//! this for preempted intervals; running intervals use the same shape with the mean that makes
//! the preempted fraction come out right, spec §13.10). Each node's schedule is a pure function
//! of (seed, node), so the oracles can replay it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Preemption settings; `fraction == 0` turns it off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Preemption {
    /// Long-run fraction of time a node is preempted, in [0, 1).
    pub fraction: f64,
    /// Mean preempted interval in timesteps (the thesis uses multiples of the 8-timestep RTT).
    pub mean_steps: f64,
}

impl Preemption {
    pub const OFF: Preemption = Preemption {
        fraction: 0.0,
        mean_steps: 0.0,
    };

    pub fn on(&self) -> bool {
        self.fraction > 0.0
    }
}

/// An interval length: N(mean, mean/4) rounded, at least 1 timestep (Box-Muller; no extra
/// crate for one normal draw).
pub(crate) fn interval(rng: &mut ChaCha8Rng, mean: f64) -> u64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen();
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    (mean + mean / 4.0 * z).round().max(1.0) as u64
}

/// One node's schedule, generated lazily: `preempted` holds until `until` (exclusive).
#[derive(Debug, Clone)]
pub struct NodeSchedule {
    rng: ChaCha8Rng,
    mean_run: f64,
    mean_pre: f64,
    pub preempted: bool,
    pub until: u64,
}

impl NodeSchedule {
    pub fn new(p: &Preemption, seed: u64, node: usize) -> NodeSchedule {
        let key = seed ^ 0x5052_4545_4d50_5431 ^ (node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = ChaCha8Rng::seed_from_u64(key);
        let mean_pre = p.mean_steps.max(1.0);
        let mean_run = mean_pre * (1.0 - p.fraction) / p.fraction;
        // Start in the stationary mix: preempted with probability `fraction`, part way through
        // an interval (a uniform share of a fresh draw), so nodes are not synchronized at 0.
        let preempted = rng.gen_bool(p.fraction.clamp(0.0, 1.0));
        let mut s = NodeSchedule {
            rng,
            mean_run,
            mean_pre,
            preempted,
            until: 0,
        };
        let first = s.draw(preempted);
        let part: f64 = s.rng.gen();
        s.until = ((first as f64 * part).ceil() as u64).max(1);
        s
    }

    fn draw(&mut self, preempted: bool) -> u64 {
        let mean = if preempted {
            self.mean_pre
        } else {
            self.mean_run
        };
        interval(&mut self.rng, mean)
    }

    /// Whether the node is preempted in timestep `t` (calls must not go back in time).
    pub fn at(&mut self, t: u64) -> bool {
        while t >= self.until {
            self.preempted = !self.preempted;
            let len = self.draw(self.preempted);
            // A running interval of a tiny fraction (mean_pre x (1 - p) / p) can be about
            // u64::MAX steps: the node then runs for ever (adversarial pass 34, C1).
            self.until = self.until.saturating_add(len);
        }
        self.preempted
    }
}

/// Every node's running/preempted state per timestep up to a horizon, replayed from the seeds.
pub struct Replay {
    pub horizon: u64,
    /// `running[node][t]`.
    pub running: Vec<Vec<bool>>,
}

impl Replay {
    pub fn new(p: &Preemption, seed: u64, n: usize, horizon: u64) -> Replay {
        let running = (0..n)
            .map(|i| {
                let mut s = NodeSchedule::new(p, seed, i);
                (0..horizon).map(|t| !s.at(t)).collect()
            })
            .collect();
        Replay { horizon, running }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fraction_and_interval_length_come_out_as_asked() {
        let p = Preemption {
            fraction: 0.5,
            mean_steps: 160.0,
        };
        let r = Replay::new(&p, 7, 20, 200_000);
        let pre: usize = r
            .running
            .iter()
            .map(|v| v.iter().filter(|&&x| !x).count())
            .sum();
        let frac = pre as f64 / (20.0 * 200_000.0);
        assert!((frac - 0.5).abs() < 0.02, "{frac}");
        // Mean preempted run length near 160 (interior intervals only).
        let v = &r.running[3];
        let mut lens = Vec::new();
        let mut i = 0;
        while i < v.len() && !v[i] {
            i += 1;
        }
        let mut start = None;
        for (t, &run) in v.iter().enumerate().skip(i) {
            match (run, start) {
                (false, None) => start = Some(t),
                (true, Some(s)) => {
                    lens.push((t - s) as f64);
                    start = None;
                }
                _ => {}
            }
        }
        let mean = lens.iter().sum::<f64>() / lens.len() as f64;
        assert!((mean - 160.0).abs() < 8.0, "{mean}");
        let sd = (lens.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / lens.len() as f64).sqrt();
        assert!((sd - 40.0).abs() < 6.0, "{sd}");
    }

    #[test]
    fn same_seed_same_schedule_other_seed_other() {
        let p = Preemption {
            fraction: 0.3,
            mean_steps: 40.0,
        };
        let a = Replay::new(&p, 1, 3, 5000);
        let b = Replay::new(&p, 1, 3, 5000);
        let c = Replay::new(&p, 2, 3, 5000);
        assert_eq!(a.running, b.running);
        assert_ne!(a.running, c.running);
    }
}
