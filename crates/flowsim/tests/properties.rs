//! Invariants of every scheduler under random workloads: capacity is never exceeded (the engine
//! checks each decision and errors), every flow finishes, no coflow beats its isolated bound,
//! the makespan respects every port's load, and the same input gives the same result.

mod common;

use coflowkit_flowsim::{simulate_with, SimOptions};
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_sched::{build, FlowCompletion, SchedOptions, SchedulerKind};
use common::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_scheduler_finishes_everything_within_bounds(t in common::random::workload(6.0, 6, 7)) {
        for how in [FlowCompletion::Redistribute, FlowCompletion::Recompute, FlowCompletion::Ignore] {
        let mut opts = SchedOptions { on_flow_completion: how, ..Default::default() };
        opts.varys.on_flow_completion = how;
        for &kind in SchedulerKind::ALL {
            let out = run(&t, kind, &opts);
            prop_assert_eq!(out.coflows.len(), t.0.coflows.len(), "{}", kind);
            for (o, c) in out.coflows.iter().zip(&t.0.coflows) {
                prop_assert_eq!(o.id, c.id);
                prop_assert!(o.finish_s >= o.arrival_s);
                prop_assert!(
                    o.cct_s >= o.isolated_cct_s * (1.0 - 1e-9),
                    "{}: coflow {} took {} < its bound {}", kind, o.id, o.cct_s, o.isolated_cct_s
                );
            }
            // No port can move its total load faster than its capacity.
            let first = t.0.coflows.iter().map(|c| c.arrival_s).fold(f64::INFINITY, f64::min);
            let all = Coflow::new(0, 0.0, t.0.coflows.iter().flat_map(|c| c.flows.clone()).collect());
            let bound = first + all.isolated_cct_s(&t.1);
            prop_assert!(out.makespan_s >= bound * (1.0 - 1e-9), "{}: makespan {} < {}", kind, out.makespan_s, bound);
            let again = run(&t, kind, &opts);
            prop_assert_eq!(ccts(&again), ccts(&out), "{} is not deterministic", kind);
        }
        }
    }
}

/// pfp re-runs its greedy on a flow's end from the order it keeps; that must be the full
/// decision's answer (same CCTs up to float rounding).
fn pfp_paths_agree(t: &(Trace, Fabric)) -> Result<(), TestCaseError> {
    let with = |how| SchedOptions {
        on_flow_completion: how,
        ..Default::default()
    };
    let fast = run(t, SchedulerKind::Pfp, &with(FlowCompletion::Redistribute));
    let full = run(t, SchedulerKind::Pfp, &with(FlowCompletion::Recompute));
    for (a, b) in fast.coflows.iter().zip(&full.coflows) {
        prop_assert!(
            (a.cct_s - b.cct_s).abs() <= 1e-9 * b.cct_s.max(1.0),
            "coflow {}: {} vs {}",
            a.id,
            a.cct_s,
            b.cct_s
        );
    }
    Ok(())
}

/// Whole sizes and arrivals on unit ports: exact ties everywhere, which the keys must break the
/// same way on both paths.
fn integer_workload() -> impl Strategy<Value = (Trace, Fabric)> {
    (2u32..7).prop_flat_map(|ports| {
        let flow = (0..ports, 0..ports, 1u32..6).prop_map(|(src, dst, bytes)| Flow {
            src,
            dst,
            bytes: bytes as f64,
        });
        let coflow = (0u32..6, prop::collection::vec(flow, 1..8));
        prop::collection::vec(coflow, 1..9).prop_map(move |cs| {
            let coflows = cs
                .into_iter()
                .enumerate()
                .map(|(i, (arrival, flows))| Coflow::new(i as u64 + 1, arrival as f64, flows))
                .collect();
            (
                Trace { ports, coflows },
                Fabric::uniform(ports as usize, 1.0),
            )
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pfp_redistribution_equals_full_decisions(t in common::random::workload(6.0, 6, 7)) {
        pfp_paths_agree(&t)?;
    }

    #[test]
    fn pfp_redistribution_equals_full_decisions_on_ties(t in integer_workload()) {
        pfp_paths_agree(&t)?;
    }
}

/// fair and wss run in the pair world; kept per flow (the reference) they must end every coflow
/// at the same time and with the same flow completion times, up to float rounding.
fn pair_world_agrees(t: &(Trace, Fabric)) -> Result<(), TestCaseError> {
    for kind in [SchedulerKind::Fair, SchedulerKind::Wss] {
        let sched = || build(kind, &SchedOptions::default());
        let per_flow = SimOptions {
            per_flow: true,
            ..Default::default()
        };
        let pairs = simulate_with(&t.0, &t.1, sched().as_mut(), &SimOptions::default());
        let flows = simulate_with(&t.0, &t.1, sched().as_mut(), &per_flow);
        let (pairs, flows) = (pairs.expect("pair world"), flows.expect("per-flow world"));
        prop_assert_eq!(pairs.coflows.len(), flows.coflows.len());
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        for (a, b) in pairs.coflows.iter().zip(&flows.coflows) {
            prop_assert_eq!(a.id, b.id);
            prop_assert!(
                close(a.cct_s, b.cct_s) && close(a.avg_fct_s, b.avg_fct_s),
                "{}: coflow {}: CCT {} vs {}, mean FCT {} vs {}",
                kind,
                a.id,
                a.cct_s,
                b.cct_s,
                a.avg_fct_s,
                b.avg_fct_s
            );
        }
        prop_assert!(close(pairs.makespan_s, flows.makespan_s));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pair_world_equals_per_flow_world(t in common::random::workload(6.0, 6, 7)) {
        pair_world_agrees(&t)?;
    }

    #[test]
    fn pair_world_equals_per_flow_world_on_ties(t in integer_workload()) {
        pair_world_agrees(&t)?;
    }
}
