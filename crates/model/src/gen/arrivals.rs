//! Poisson arrivals: exponential inter-arrival times, the first coflow at time 0 (as in the FB
//! trace). Times are rounded to whole milliseconds, because the trace formats and the simulators
//! that read them (CoflowSim, Sincronia) expect integral ms; the rounding does not accumulate,
//! it is applied to the exact running time.

use rand::Rng;

use crate::trace::num::arrival_s_of_ms;
use crate::trace::MAX_EXACT_MS;

/// How many means `coflows` Poisson arrivals may span: n means expected, plus 10 standard
/// deviations (sqrt(n) means each) and 40 means of slack, a tail no seed reaches in practice
/// (trace writers refuse a later arrival all the same).
fn span_means(coflows: usize) -> f64 {
    let n = coflows as f64;
    n + 10.0 * n.sqrt() + 40.0
}

/// The largest mean inter-arrival (ms) that keeps `coflows` arrivals within 2^53 ms, where
/// trace readers stop taking them (milliseconds are no longer exact).
pub(crate) fn max_mean_ms(coflows: usize) -> f64 {
    MAX_EXACT_MS / span_means(coflows)
}

/// Why `mean_ms` is too long for `coflows` arrivals, if it is.
pub(crate) fn too_late(mean_ms: f64, coflows: usize) -> Option<String> {
    (mean_ms > max_mean_ms(coflows)).then(|| {
        format!(
            "{coflows} coflows would arrive up to about {:.3e} ms, past the 2^53 ms (285,000 \
             years) a trace holds exactly",
            mean_ms * span_means(coflows)
        )
    })
}

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
    fn a_mean_that_carries_arrivals_past_2_53_ms_is_refused() {
        assert!(too_late(1e3, 5260).is_none());
        // 5260 + 10 x 72.5 + 40 = 6025.3 means.
        assert!(too_late(MAX_EXACT_MS / 6026.0, 5260).is_none());
        let e = too_late(MAX_EXACT_MS / 6025.0, 5260).unwrap();
        assert!(
            e.starts_with("5260 coflows would arrive up to about 9.008e15 ms"),
            "{e}"
        );
        assert!(too_late(f64::INFINITY, 1).is_some());
    }

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
