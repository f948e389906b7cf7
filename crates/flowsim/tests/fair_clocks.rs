//! `fair` in the pair world moves progress by one virtual clock per bottleneck resource and,
//! after completions, re-solves only the resources' levels when every pair keeps its
//! bottleneck (refilling from the present levels otherwise). The straightforward computation
//! is the per-flow world (a whole max-min fill at every event, progress per flow): on random
//! workloads busy enough for many completions per fill, every coflow must end at the same time
//! up to 1e-9 (relative), the tolerance docs/speed.md states.

use coflowkit_flowsim::{simulate_with, SimOptions};
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_sched::{build, SchedOptions, SchedulerKind};
use proptest::prelude::*;

/// Up to 8 ports, 10 coflows of up to 16 flows; `whole` sizes and capacities give ties.
fn workload(whole: bool) -> impl Strategy<Value = (Trace, Fabric)> {
    (2u32..9).prop_flat_map(move |ports| {
        let bytes = if whole {
            (1u32..9).prop_map(f64::from).boxed()
        } else {
            (0.01f64..8.0).boxed()
        };
        let flow =
            (0..ports, 0..ports, bytes).prop_map(|(src, dst, bytes)| Flow { src, dst, bytes });
        let coflow = (0u32..8, prop::collection::vec(flow, 1..16));
        let cap = if whole {
            Just(1.0).boxed()
        } else {
            (0.5f64..2.0).boxed()
        };
        let caps = prop::collection::vec(cap, ports as usize);
        (prop::collection::vec(coflow, 1..10), caps).prop_map(move |(cs, caps)| {
            let coflows = (cs.into_iter().enumerate())
                .map(|(i, (at, flows))| Coflow::new(i as u64 + 1, at as f64 * 0.7, flows))
                .collect();
            let fabric = Fabric {
                up_bytes_per_s: caps.clone(),
                down_bytes_per_s: caps.iter().rev().copied().collect(),
            };
            (Trace { ports, coflows }, fabric)
        })
    })
}

fn agrees((trace, fabric): &(Trace, Fabric)) -> Result<(), TestCaseError> {
    let run = |per_flow| {
        let opts = SimOptions {
            per_flow,
            ..Default::default()
        };
        let mut s = build(SchedulerKind::Fair, &SchedOptions::default());
        simulate_with(trace, fabric, s.as_mut(), &opts).expect("fair runs")
    };
    let (fast, reference) = (run(false), run(true));
    prop_assert_eq!(fast.coflows.len(), reference.coflows.len());
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    for (a, b) in fast.coflows.iter().zip(&reference.coflows) {
        prop_assert_eq!(a.id, b.id);
        prop_assert!(
            close(a.cct_s, b.cct_s) && close(a.avg_fct_s, b.avg_fct_s),
            "coflow {}: CCT {} vs {}, mean FCT {} vs {}",
            a.id,
            a.cct_s,
            b.cct_s,
            a.avg_fct_s,
            b.avg_fct_s
        );
    }
    prop_assert!(close(fast.makespan_s, reference.makespan_s));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fair_by_clocks_and_levels_equals_per_flow(t in workload(false)) {
        agrees(&t)?;
    }

    #[test]
    fn fair_by_clocks_and_levels_equals_per_flow_on_ties(t in workload(true)) {
        agrees(&t)?;
    }
}
