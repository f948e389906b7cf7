//! Link bandwidth variation (thesis §3.1.6: "competing traffic makes some paths slow"): every
//! switch output port's capacity is redrawn at random times, uniformly between (1 - depth) and
//! 1 times its nominal capacity, and held for an interval of N(mu, mu/4) timesteps. The ports'
//! fractional credit counters (thesis §6.2) take any capacity. Seeded per (run seed, port).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::preempt::interval;

/// Bandwidth variation settings; `depth == 0` turns it off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Variation {
    /// Largest fraction of a port's capacity taken by competing traffic, in [0, 1).
    pub depth: f64,
    /// Mean time a capacity holds, in timesteps.
    pub mean_steps: f64,
}

impl Variation {
    pub const OFF: Variation = Variation {
        depth: 0.0,
        mean_steps: 0.0,
    };

    pub fn on(&self) -> bool {
        self.depth > 0.0
    }
}

/// One port's capacity over time.
#[derive(Debug, Clone)]
pub struct PortVariation {
    rng: ChaCha8Rng,
    nominal: u64,
    v: Variation,
    /// The current capacity holds until this timestep (exclusive).
    pub until: u64,
}

impl PortVariation {
    pub fn new(v: &Variation, seed: u64, port: usize, nominal_milli: u64) -> Self {
        let key = seed ^ 0x4257_5641_5249_4154 ^ (port as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        PortVariation {
            rng: ChaCha8Rng::seed_from_u64(key),
            nominal: nominal_milli,
            v: *v,
            until: 0,
        }
    }

    /// A new capacity (thousandths of a packet per timestep, at least 1) from `now` on.
    pub fn redraw(&mut self, now: u64) -> u64 {
        let share = 1.0 - self.v.depth * self.rng.gen::<f64>();
        self.until = now + interval(&mut self.rng, self.v.mean_steps.max(1.0));
        ((self.nominal as f64 * share).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_stay_in_range_and_average_to_one_minus_half_the_depth() {
        let v = Variation {
            depth: 0.4,
            mean_steps: 10.0,
        };
        let mut p = PortVariation::new(&v, 3, 5, 1000);
        let (mut t, mut sum, mut steps) = (0u64, 0u64, 0u64);
        while t < 200_000 {
            let c = p.redraw(t);
            assert!((600..=1000).contains(&c), "{c}");
            sum += c * (p.until - t);
            steps += p.until - t;
            t = p.until;
        }
        let mean = sum as f64 / steps as f64;
        assert!((mean - 800.0).abs() < 10.0, "{mean}");
    }
}
