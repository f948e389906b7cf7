//! Deadline synthesis of the Varys evaluation (§5.7): the trace has no deadlines, so each coflow
//! gets `Γ_empty × (1 + U(0, x))`, at least 200 ms, where Γ_empty is its completion time alone.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{Fabric, Trace};

/// The thesis' floor on synthesized deadlines.
pub const MIN_DEADLINE_S: f64 = 0.2;

/// Give every coflow of `trace` a deadline (relative to its arrival), seeded.
pub fn synthesize(trace: &mut Trace, fabric: &Fabric, x: f64, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for c in &mut trace.coflows {
        let slack: f64 = if x > 0.0 { rng.gen_range(0.0..=x) } else { 0.0 };
        let d = c.isolated_cct_s(fabric) * (1.0 + slack);
        c.deadline_s = Some(d.max(MIN_DEADLINE_S));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Coflow, Flow};

    #[test]
    fn deadlines_lie_between_gamma_and_gamma_times_one_plus_x() {
        let fabric = Fabric::uniform(4, 1.0);
        let mut t = Trace {
            ports: 4,
            coflows: (0..50)
                .map(|i| {
                    Coflow::new(
                        i,
                        0.0,
                        vec![Flow {
                            src: 0,
                            dst: 1,
                            bytes: 1.0 + i as f64,
                        }],
                    )
                })
                .collect(),
        };
        synthesize(&mut t, &fabric, 1.0, 7);
        for c in &t.coflows {
            let g = c.isolated_cct_s(&fabric);
            let d = c.deadline_s.unwrap();
            assert!(d >= g.max(MIN_DEADLINE_S) && d <= 2.0 * g, "{d} vs {g}");
        }
        let mut again = t.clone();
        synthesize(&mut again, &fabric, 1.0, 7);
        assert_eq!(again, t);
    }
}
