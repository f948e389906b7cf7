//! Poisson arrivals: exponential inter-arrival times, the first coflow at time 0 (as in the FB
//! trace). Times are rounded to whole milliseconds, because the trace formats and the simulators
//! that read them (CoflowSim, Sincronia) expect integral ms; the rounding does not accumulate,
//! it is applied to the exact running time.

use rand::Rng;

use crate::trace::num::arrival_s_of_ms;

pub(crate) struct PoissonArrivals {
    mean_ms: f64,
    next_ms: f64,
}

impl PoissonArrivals {
    pub fn new(mean_interarrival_ms: f64) -> Self {
        PoissonArrivals {
            mean_ms: mean_interarrival_ms,
            next_ms: 0.0,
        }
    }

    /// The next arrival in seconds.
    pub fn next_s(&mut self, rng: &mut impl Rng) -> f64 {
        let now = self.next_ms.round();
        // 1 - u lies in (0, 1], so the logarithm is finite.
        let u: f64 = rng.gen();
        self.next_ms += -self.mean_ms * (1.0 - u).ln();
        arrival_s_of_ms(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn starts_at_zero_with_the_requested_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut a = PoissonArrivals::new(100.0);
        let times: Vec<f64> = (0..20_000).map(|_| a.next_s(&mut rng)).collect();
        assert_eq!(times[0], 0.0);
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        let mean_ms = times.last().unwrap() * 1000.0 / (times.len() - 1) as f64;
        assert!((mean_ms - 100.0).abs() < 3.0, "{mean_ms}");
        assert!(times
            .iter()
            .all(|t| (t * 1000.0 - (t * 1000.0).round()).abs() < 1e-6));
    }
}
