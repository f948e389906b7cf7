//! The offline workload of Varys's load experiments (§5.7, "varying concurrency"; row 15 of the
//! key results: with 100 concurrent coflows 37% still meet their deadlines under Varys): N
//! coflows drawn from a trace without replacement, all arriving at once in a random order.
//! The thesis averages over random arrival orders; each seed is one order (and one draw).
//!
//! All coflows arrive at t = 0; their order is their ids, renumbered 1..=N in the drawn
//! order (simulators break arrival ties by id), so a policy that admits in arrival order,
//! like Varys's deadline mode, sees them in the drawn order.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::GenError;
use crate::Trace;

/// `n` coflows of `trace` at once, in a seeded random order (see the module docs).
pub fn concurrent(trace: &Trace, n: usize, seed: u64) -> Result<Trace, GenError> {
    if n == 0 || n > trace.coflows.len() {
        return Err(GenError::BadSpec {
            field: "concurrent coflows",
            why: format!(
                "{n}: the trace has {} coflows; ask for 1 to that many",
                trace.coflows.len()
            ),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut picked: Vec<_> = trace
        .coflows
        .choose_multiple(&mut rng, n)
        .cloned()
        .collect();
    picked.shuffle(&mut rng);
    for (i, c) in picked.iter_mut().enumerate() {
        c.id = i as u64 + 1;
        c.arrival_s = 0.0;
        c.parents.clear();
    }
    Ok(Trace {
        ports: trace.ports,
        coflows: picked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Coflow, Flow};

    #[test]
    fn n_distinct_coflows_at_once_in_a_seeded_order() {
        let t = Trace {
            ports: 2,
            coflows: (0..30)
                .map(|i| {
                    let f = Flow {
                        src: 0,
                        dst: 1,
                        bytes: 1.0 + i as f64,
                    };
                    Coflow::new(i, i as f64 * 3.0, vec![f])
                })
                .collect(),
        };
        let a = concurrent(&t, 10, 5).unwrap();
        assert_eq!(a.coflows.len(), 10);
        assert!(a.coflows.iter().all(|c| c.arrival_s == 0.0));
        assert_eq!(
            a.coflows.iter().map(|c| c.id).collect::<Vec<_>>(),
            (1..=10).collect::<Vec<_>>()
        );
        let mut sizes: Vec<f64> = a.coflows.iter().map(|c| c.bytes()).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        assert_eq!(sizes.len(), 10, "drawn without replacement");
        assert_eq!(concurrent(&t, 10, 5).unwrap(), a);
        assert_ne!(concurrent(&t, 10, 6).unwrap(), a);
        assert!(concurrent(&t, 31, 1).is_err() && concurrent(&t, 0, 1).is_err());
    }
}
