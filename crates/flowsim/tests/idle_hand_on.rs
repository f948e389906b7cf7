//! When flows end and leave nothing running (`Event::Idle`), a policy that can rate the
//! waiting flows exactly as a full decision would does so at a hand-on's cost
//! (`DecisionClock::idle`): pfp always, Sincronia when its last decision rated one coflow whose
//! flows all go to one downlink (an incast). An incast served one flow at a time then costs one
//! decision, not one per flow (docs/reliability.md, A4), with the same results bit for bit.
//!
//! The reference is the same policy behind `Probe`, which forwards everything but this
//! shortcut, so it decides in full at every idle point, as the code did before.

mod common;

use coflowkit_flowsim::SimOutput;
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_sched::probe::Probe;
use coflowkit_sched::{build, SchedOptions, SchedulerKind as K};
use common::*;
use proptest::prelude::*;

/// Every policy that hands bandwidth on by default (fair and wss recompute, and behind `Probe`
/// they would leave the pair world).
const HANDING_ON: &[K] = &[
    K::Pfp,
    K::Fifo,
    K::Scf,
    K::Ncf,
    K::Tcf,
    K::Sebf,
    K::Varys,
    K::Sincronia,
    K::Aalo,
    K::Saath,
    K::AaloUncoord,
    K::FifoStrict,
];

/// One coflow of `mappers` flows of `bytes` each, from ports 0.. to the reducer on the last
/// port, on uplinks of `up` and downlinks of 1.
fn incast(mappers: u32, bytes: f64, up: f64) -> (Trace, Fabric) {
    let flows = (0..mappers)
        .map(|src| Flow {
            src,
            dst: mappers,
            bytes,
        })
        .collect();
    let ports = mappers as usize + 1;
    (
        Trace {
            ports: mappers + 1,
            coflows: vec![Coflow::new(1, 0.0, flows)],
        },
        Fabric {
            up_bytes_per_s: vec![up; ports],
            down_bytes_per_s: vec![1.0; ports],
        },
    )
}

fn plain(t: &(Trace, Fabric), kind: K) -> SimOutput {
    run(t, kind, &SchedOptions::default())
}

/// The policy deciding in full at every idle point (the reference).
fn deciding(t: &(Trace, Fabric), kind: K) -> SimOutput {
    let mut probe = Probe::new(build(kind, &SchedOptions::default()));
    run_with(t, &mut probe)
}

fn cct_bits(out: &SimOutput) -> Vec<(u64, u64)> {
    let mut v: Vec<_> = (out.coflows.iter())
        .map(|c| (c.id, c.cct_s.to_bits()))
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn an_incast_served_one_flow_at_a_time_costs_one_decision_not_one_per_flow() {
    // Uplinks as fast as the reducer's downlink: one flow at a time, 600 idle points. Then
    // uplinks at 0.3: three flows at a time plus a tenth of the downlink for a fourth, so the
    // fabric empties only where a round ends together.
    for (up, serial) in [(1.0, true), (0.3, false)] {
        let t = incast(600, 1.0, up);
        for kind in [K::Pfp, K::Sincronia] {
            let out = plain(&t, kind);
            let reference = deciding(&t, kind);
            assert_eq!(cct_bits(&out), cct_bits(&reference), "{kind} up {up}");
            if serial {
                // Before: a full decision per flow (the reference still takes them); now a
                // hand-on per flow end.
                assert_eq!(reference.decisions, 600, "{kind}");
                assert_eq!(out.coflows[0].cct_s, 600.0, "{kind}");
                assert_eq!(out.redistributions, 599, "{kind}");
            }
            assert!(
                out.decisions <= 2,
                "{kind} up {up}: {} decisions ({} in the reference)",
                out.decisions,
                reference.decisions
            );
        }
    }
}

/// Incasts: coflows whose flows mostly share a reducer, whole sizes (ties), apart in time.
fn incasts() -> impl Strategy<Value = (Trace, Fabric)> {
    (3u32..9).prop_flat_map(|ports| {
        let flow =
            (0..ports, 1u32..5, 0u32..8).prop_map(move |(src, bytes, other)| (src, bytes, other));
        let coflow = (0u32..40, 0..ports, prop::collection::vec(flow, 1..10));
        let caps = prop::collection::vec(prop::sample::select(vec![0.5, 1.0, 2.0]), ports as usize);
        (prop::collection::vec(coflow, 1..4), caps).prop_map(move |(cs, caps)| {
            let coflows = (cs.into_iter().enumerate())
                .map(|(i, (arrival, reducer, flows))| {
                    let flows = (flows.into_iter())
                        .map(|(src, bytes, other)| Flow {
                            src,
                            // One flow in eight goes elsewhere.
                            dst: if other == 0 {
                                (reducer + 1) % ports
                            } else {
                                reducer
                            },
                            bytes: bytes as f64,
                        })
                        .collect();
                    Coflow::new(i as u64 + 1, arrival as f64, flows)
                })
                .collect();
            let fabric = Fabric {
                up_bytes_per_s: caps.clone(),
                down_bytes_per_s: caps.iter().rev().copied().collect(),
            };
            (Trace { ports, coflows }, fabric)
        })
    })
}

fn same_as_deciding(t: &(Trace, Fabric)) -> Result<(), TestCaseError> {
    for &kind in HANDING_ON {
        let out = plain(t, kind);
        let reference = deciding(t, kind);
        prop_assert_eq!(cct_bits(&out), cct_bits(&reference), "{}", kind);
        prop_assert!(out.decisions <= reference.decisions, "{}", kind);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn idle_hand_ons_give_the_ccts_of_full_decisions(t in common::random::workload(12.0, 8, 6)) {
        same_as_deciding(&t)?;
    }

    #[test]
    fn idle_hand_ons_give_the_ccts_of_full_decisions_on_incasts(t in incasts()) {
        same_as_deciding(&t)?;
    }
}
