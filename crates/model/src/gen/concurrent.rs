//! The offline workload of Varys's load experiments (§5.7, "varying concurrency"; row 15 of the
//! key results: with 100 concurrent coflows 37% still meet their deadlines under Varys): N
//! coflows drawn from a trace without replacement, all arriving at once in a random order.
//! The thesis averages over random arrival orders; each seed is one order (and one draw).
//!
//! All coflows arrive at t = 0; their order is their ids, renumbered 1..=N in the drawn
//! order (simulators break arrival ties by id), so a policy that admits in arrival order,
//! like Varys's deadline mode, sees them in the drawn order.
//!
//! A trace with parents (DAGs) is refused: a draw of coflows at once has no dependencies to
//! keep (a parent may not be drawn, and all arrive at 0), and dropping them silently lost the
//! jobs and their compute times (adversarial pass 34, C5). `--max-waves` refuses them too.

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
    if let Some(c) = trace.coflows.iter().find(|c| !c.parents.is_empty()) {
        return Err(GenError::BadSpec {
            field: "coflow parents",
            why: format!(
                "coflow {} has parents (the trace is a DAG workload): coflows drawn to arrive \
                 at once have no dependencies between them, so its parents and compute times \
                 would be lost; run the DAG trace without --concurrent",
                c.id
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

    /// Adversarial pass 34, C5: the parents and compute times of a DAG trace were cleared
    /// without a word; such a trace is refused, naming a coflow with parents.
    #[test]
    fn a_dag_trace_is_refused_not_stripped_of_its_parents() {
        let f = Flow {
            src: 0,
            dst: 1,
            bytes: 1.0,
        };
        let mut child = Coflow::new(2, 0.0, vec![f]);
        child.parents = vec![1];
        child.compute_s = 0.01;
        let t = Trace {
            ports: 2,
            coflows: vec![Coflow::new(1, 0.0, vec![f]), child],
        };
        let e = concurrent(&t, 2, 1).unwrap_err().to_string();
        assert!(e.contains("coflow 2 has parents"), "{e}");
        assert!(e.contains("without --concurrent"), "{e}");
    }
}
