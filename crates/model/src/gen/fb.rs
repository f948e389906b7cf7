//! FB-derived workloads: a base trace (normally the FB2010 hour) resampled to any number of
//! coflows at any load, the way coflow papers upscale it.
//!
//! - coflows are drawn uniformly with replacement from the base; flow sizes and structure are
//!   kept exactly;
//! - each drawn coflow gets its own random relabelling of ports: a random permutation of the
//!   base fabric, or a random injective map into a larger target fabric; this keeps a coflow's
//!   shape while spreading repeated draws over different ports;
//! - arrivals are Poisson with mean `base mean inter-arrival / load`, the first at 0.
//!
//! So `coflows = 5260, load = 1` is a 10x upscaled FB workload (about ten hours) and `load = 2`
//! packs it into about half the time. Dependencies (`parents`) name base ids and are dropped;
//! deadlines, weights and tenants are kept.

use rand::seq::index::sample;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::arrivals::{max_mean_ms, too_late, PoissonArrivals};
use super::GenError;
use crate::coflow::{Coflow, Flow, Trace};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FbScaleSpec {
    pub coflows: usize,
    /// Arrival-rate multiplier relative to the base trace.
    pub load: f64,
    /// Target fabric size; the base's when `None`. Must not be smaller than the base's.
    pub ports: Option<u32>,
    pub seed: u64,
}

impl FbScaleSpec {
    /// Coflows with ids 1..=coflows.
    pub fn generate(&self, base: &Trace) -> Result<Trace, GenError> {
        let mean_ms = self.mean_interarrival_ms(base)?;
        if let Some(why) = too_late(mean_ms, self.coflows) {
            // The load that brings the mean down to the largest that fits.
            let min = self.load * mean_ms / max_mean_ms(self.coflows);
            return Err(GenError::BadSpec {
                field: "load",
                why: format!(
                    "{} is too low: {why}; for {} coflows the load must be at least {min:.3e}",
                    crate::units::short_num(self.load),
                    self.coflows
                ),
            });
        }
        let ports = self.ports.unwrap_or(base.ports);
        if ports < base.ports {
            return Err(GenError::BadSpec {
                field: "ports",
                why: format!(
                    "{ports} is smaller than the base trace's {} ports",
                    base.ports
                ),
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut arrivals = PoissonArrivals::new(mean_ms);
        let mut coflows = Vec::with_capacity(self.coflows);
        for id in 1..=self.coflows as u64 {
            let arrival_s = arrivals.next_s(&mut rng);
            let from = &base.coflows[rng.gen_range(0..base.coflows.len())];
            let map = sample(&mut rng, ports as usize, base.ports as usize).into_vec();
            let flows = from
                .flows
                .iter()
                .map(|f| Flow {
                    src: map[f.src as usize] as u32,
                    dst: map[f.dst as usize] as u32,
                    bytes: f.bytes,
                })
                .collect();
            coflows.push(Coflow {
                id,
                arrival_s,
                flows,
                deadline_s: from.deadline_s,
                weight: from.weight,
                tenant: from.tenant,
                parents: Vec::new(),
                compute_s: 0.0,
            });
        }
        Ok(Trace { ports, coflows })
    }

    /// Target mean inter-arrival: the base's `(last - first) / (n - 1)`, divided by the load.
    pub fn mean_interarrival_ms(&self, base: &Trace) -> Result<f64, GenError> {
        let bad = |field, why: &str| GenError::BadSpec {
            field,
            why: why.to_string(),
        };
        if !(self.load.is_finite() && self.load > 0.0) {
            return Err(bad("load", "must be positive and finite"));
        }
        let n = base.coflows.len();
        let first = base.coflows.iter().map(|c| c.arrival_s).reduce(f64::min);
        let last = base.coflows.iter().map(|c| c.arrival_s).reduce(f64::max);
        match (first, last) {
            (Some(first), Some(last)) if n >= 2 && last > first => {
                Ok((last - first) * 1000.0 / (n - 1) as f64 / self.load)
            }
            _ => Err(bad(
                "base trace",
                "needs at least two coflows arriving at different times",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tests::fb;

    fn spec(coflows: usize, load: f64, seed: u64) -> FbScaleSpec {
        FbScaleSpec {
            coflows,
            load,
            ports: None,
            seed,
        }
    }

    #[test]
    fn same_seed_same_trace() {
        let base = fb();
        let a = spec(300, 1.0, 5).generate(&base).unwrap();
        assert_eq!(a, spec(300, 1.0, 5).generate(&base).unwrap());
        assert_ne!(a, spec(300, 1.0, 6).generate(&base).unwrap());
    }

    #[test]
    fn upscaled_trace_has_the_requested_count_rate_and_ports() {
        let base = fb();
        let base_mean_ms = 3_629_235.0 / 525.0;
        for load in [1.0, 2.0] {
            let t = spec(5000, load, 42).generate(&base).unwrap();
            assert_eq!((t.ports, t.coflows.len()), (150, 5000));
            let mean_ms = t.coflows.last().unwrap().arrival_s * 1000.0 / 4999.0;
            let target = base_mean_ms / load;
            assert!(
                (mean_ms / target - 1.0).abs() < 0.10,
                "{mean_ms} vs {target}"
            );
            assert!(t
                .coflows
                .iter()
                .all(|c| c.flows.iter().all(|f| f.src < 150 && f.dst < 150)));
        }
    }

    #[test]
    fn relabelling_keeps_sizes_and_shape() {
        let base = fb();
        let t = FbScaleSpec {
            ports: Some(400),
            ..spec(200, 1.0, 9)
        }
        .generate(&base)
        .unwrap();
        assert_eq!(t.ports, 400);
        for c in &t.coflows {
            assert!(c.flows.iter().all(|f| f.src < 400 && f.dst < 400));
            // Some base coflow has the same sorted flow sizes and self-flow count.
            let key = |c: &Coflow| {
                let mut b: Vec<u64> = c.flows.iter().map(|f| f.bytes.to_bits()).collect();
                b.sort_unstable();
                (b, c.flows.iter().filter(|f| f.src == f.dst).count())
            };
            assert!(base.coflows.iter().any(|b| key(b) == key(c)));
        }
    }

    #[test]
    fn bad_specs_are_refused() {
        let base = fb();
        assert!(spec(10, 0.0, 1).generate(&base).is_err());
        let small = FbScaleSpec {
            ports: Some(100),
            ..spec(10, 1.0, 1)
        };
        assert!(small
            .generate(&base)
            .unwrap_err()
            .to_string()
            .contains("ports"));
        let one = Trace {
            ports: 150,
            coflows: base.coflows[..1].to_vec(),
        };
        assert!(spec(10, 1.0, 1).generate(&one).is_err());
    }
}
