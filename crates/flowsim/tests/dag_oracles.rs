//! DAG dependencies under Aalo (coflow.md §4.5): a DAG's coflows share one queue by the bytes
//! the whole DAG sent, FIFO across DAGs by the DAG's start, a child behind its parents. Toys on
//! unit links; each CCT worked out by hand below, and contrasted with the same trace without
//! its `parents`.

mod common;

use coflowkit_flowsim::{simulate_with, Dependencies, SimError, SimOptions};
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_sched::policy::aalo::{Aalo, AaloConfig};
use coflowkit_sched::policy::dclas::{InterQueue, Queues, WithinCoflow};
use coflowkit_sched::{DagError, SchedOptions, SchedulerKind};
use common::*;
use proptest::prelude::*;

/// Strict priority, Δ = 0, two queues: Q1 = (0, 2], Q2 = (2, inf).
fn two_queues() -> AaloConfig {
    AaloConfig {
        queues: Queues {
            k: 2,
            e: 10.0,
            q1_hi_bytes: 2.0,
        },
        inter_queue: InterQueue::Strict,
        within_coflow: WithinCoflow::MaxMin,
        sync_interval_s: 0.0,
        ..Default::default()
    }
}

fn aalo(t: &(Trace, Fabric)) -> Vec<f64> {
    ccts(&run_with(t, &mut Aalo::new(two_queues())))
}

fn without_parents(t: &(Trace, Fabric)) -> (Trace, Fabric) {
    let mut t = t.clone();
    for c in &mut t.0.coflows {
        c.parents.clear();
    }
    t
}

/// One link 0 -> 1. P (4 B) at 0; at 3 X (4 B, its own DAG) and Ch (2 B, child of P).
fn child_inherits() -> (Trace, Fabric) {
    let mut ch = coflow(3, 3.0, &[(0, 1, 2.0)]);
    ch.parents = vec![1];
    toy(
        2,
        vec![
            coflow(1, 0.0, &[(0, 1, 4.0)]),
            coflow(2, 3.0, &[(0, 1, 4.0)]),
            ch,
        ],
    )
}

#[test]
fn a_child_shares_its_dags_queue_and_waits_behind_its_parent() {
    // P alone: reaches 2 B at t=2 and drops to Q2; at t=3 it has sent 3 B. Ch joins P's DAG,
    // whose 3 B put it in Q2 at once; X is new (Q1) and takes the link to t=5, where it
    // reaches 2 B and drops to Q2. Q2 is FIFO by DAG start: P's DAG (t=0) before X's (t=3),
    // inside the DAG parent before child: P's last byte by 6 (CCT 6), Ch by 8 (CCT 5), X's
    // last 2 B by 10 (CCT 7).
    let t = child_inherits();
    assert_close(&aalo(&t), &[6.0, 7.0, 5.0]);
    // Without the dependency Ch is a new coflow in Q1: after X (FIFO, lower id), t=5..7
    // (CCT 4), ahead of P, which finishes at 8.
    assert_close(&aalo(&without_parents(&t)), &[8.0, 7.0, 4.0]);
}

/// P (3 B on 0 -> 1) finishes at 3; Y (0.5 B on 2 -> 3) keeps a decision going at 3 so the
/// DAG leaves the queues (Y arriving just as P finishes is also the regression test of a
/// simulator crash: `retire` once ran before the new arrival had a rate slot); at 4 Ch (2 B, child of P) and X (2 B) arrive, in that order.
fn child_after_parent_finished() -> (Trace, Fabric) {
    let mut ch = coflow(2, 4.0, &[(0, 1, 2.0)]);
    ch.parents = vec![1];
    toy(
        4,
        vec![
            coflow(1, 0.0, &[(0, 1, 3.0)]),
            ch,
            coflow(3, 4.0, &[(0, 1, 2.0)]),
            coflow(4, 3.0, &[(2, 3, 0.5)]),
        ],
    )
}

#[test]
fn a_child_inherits_the_bytes_of_finished_ancestors() {
    // P sent 3 B > Q1's 2 B before it finished: Ch enters Q2 with its DAG's history, X (new)
    // takes the link first: X done at 6 (CCT 2), Ch at 8 (CCT 4).
    let t = child_after_parent_finished();
    assert_close(&aalo(&t), &[3.0, 4.0, 2.0, 0.5]);
    // Without it Ch is new and first in FIFO: Ch at 6 (CCT 2), X at 8 (CCT 4).
    assert_close(&aalo(&without_parents(&t)), &[3.0, 2.0, 4.0, 0.5]);
}

#[test]
fn other_policies_ignore_dependencies() {
    for kind in [SchedulerKind::Varys, SchedulerKind::Fair] {
        let t = child_inherits();
        let opts = SchedOptions::default();
        assert_eq!(
            ccts(&run(&t, kind, &opts)),
            ccts(&run(&without_parents(&t), kind, &opts)),
            "{kind:?}"
        );
    }
}

#[test]
fn bad_parents_are_refused_with_the_coflow_named() {
    let mut t = child_inherits();
    t.0.coflows[2].parents = vec![9];
    let err = coflowkit_flowsim::simulate(&t.0, &t.1, &mut Aalo::new(two_queues())).unwrap_err();
    assert_eq!(
        err,
        SimError::Dag(DagError::UnknownParent {
            coflow: 3,
            parent: 9
        })
    );
    // A parent arriving after its child is unknown at the child's arrival.
    let mut t = child_inherits();
    t.0.coflows[0].parents = vec![3];
    t.0.coflows[2].parents.clear();
    let err = coflowkit_flowsim::simulate(&t.0, &t.1, &mut Aalo::new(two_queues())).unwrap_err();
    assert!(err.to_string().contains("parent 3 is unknown"), "{err}");
}

/// Starts-after (barriers) vs finishes-before (pipelined), on disjoint ports so only the
/// dependency matters: P (2 B, t=0) -> Ch (1 B, t=0.5) -> G (1 B, t=0.6), and Z (1 B, t=3.5,
/// child of P, whose parent is done by then).
#[test]
fn starts_after_holds_a_child_until_its_last_parent_finished() {
    let mut ch = coflow(2, 0.5, &[(2, 3, 1.0)]);
    ch.parents = vec![1];
    let mut g = coflow(3, 0.6, &[(4, 5, 1.0)]);
    g.parents = vec![2];
    let mut z = coflow(4, 3.5, &[(6, 7, 1.0)]);
    z.parents = vec![1];
    let t = toy(8, vec![coflow(1, 0.0, &[(0, 1, 2.0)]), ch, g, z]);
    let run_deps = |deps| {
        let opts = SimOptions {
            dependencies: deps,
            ..Default::default()
        };
        let mut fair = coflowkit_sched::build(SchedulerKind::Fair, &SchedOptions::default());
        simulate_with(&t.0, &t.1, fair.as_mut(), &opts).unwrap()
    };
    let finish = |o: &coflowkit_flowsim::SimOutput| -> Vec<f64> {
        o.coflows.iter().map(|c| c.finish_s).collect()
    };
    // Pipelined: everyone runs at once.
    let fb = run_deps(Dependencies::FinishesBefore);
    assert_close(&finish(&fb), &[2.0, 1.5, 1.6, 4.5]);
    // Barriers: Ch starts when P ends (2), G when Ch ends (3); Z arrives after P's end.
    let sa = run_deps(Dependencies::StartsAfter);
    assert_close(&finish(&sa), &[2.0, 3.0, 4.0, 4.5]);
    let arrivals: Vec<f64> = sa.coflows.iter().map(|c| c.arrival_s).collect();
    assert_close(&arrivals, &[0.0, 2.0, 3.0, 3.5]);
    // CCTs count from the release.
    assert_close(&ccts(&sa), &[2.0, 1.0, 1.0, 1.0]);
}

/// Random DAGs: each coflow (in arrival order) names up to two earlier ones as parents.
fn dag_workload() -> impl Strategy<Value = (Trace, Fabric)> {
    let flow =
        (0u32..4, 0u32..4, 0.01f64..6.0).prop_map(|(src, dst, bytes)| Flow { src, dst, bytes });
    let coflow = (
        0.0f64..4.0,
        prop::collection::vec(flow, 1..5),
        prop::collection::vec(any::<prop::sample::Index>(), 0..3),
    );
    prop::collection::vec(coflow, 1..8).prop_map(|mut cs| {
        cs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let coflows = cs
            .into_iter()
            .enumerate()
            .map(|(i, (arrival, flows, parents))| {
                let mut c = Coflow::new(i as u64 + 1, arrival, flows);
                if i > 0 {
                    c.parents = parents.iter().map(|p| p.index(i) as u64 + 1).collect();
                    c.parents.sort_unstable();
                    c.parents.dedup();
                }
                c
            })
            .collect();
        toy(4, coflows)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every policy finishes every DAG within the isolated bounds, deterministically; under
    /// starts-after no child starts before all its parents finished.
    #[test]
    fn dags_finish_and_barriers_hold(t in dag_workload()) {
        for deps in [Dependencies::FinishesBefore, Dependencies::StartsAfter] {
            let opts = SimOptions { dependencies: deps, ..Default::default() };
            let scheds = [
                (SchedulerKind::Aalo, SchedOptions::default()),
                (SchedulerKind::Aalo, SchedOptions { aalo: two_queues(), ..Default::default() }),
                (SchedulerKind::Varys, SchedOptions::default()),
                (SchedulerKind::Fair, SchedOptions::default()),
            ];
            for (kind, so) in &scheds {
                let go = || {
                    let mut s = coflowkit_sched::build(*kind, so);
                    simulate_with(&t.0, &t.1, s.as_mut(), &opts).unwrap()
                };
                let out = go();
                prop_assert_eq!(out.coflows.len(), t.0.coflows.len());
                for (o, c) in out.coflows.iter().zip(&t.0.coflows) {
                    prop_assert!(o.cct_s >= o.isolated_cct_s * (1.0 - 1e-9), "{:?} {:?}", kind, deps);
                    if deps == Dependencies::StartsAfter {
                        for &p in &c.parents {
                            let parent = &out.coflows[p as usize - 1];
                            prop_assert!(o.arrival_s >= parent.finish_s, "{} started before parent {}", c.id, p);
                        }
                    }
                }
                prop_assert_eq!(ccts(&go()), ccts(&out), "{:?} is not deterministic", kind);
            }
        }
    }
}

#[test]
fn hidden_dags_make_aalo_schedule_each_coflow_as_its_own() {
    // `hide_dags` (the row-24 ablation): the same replay, Aalo blind to the DAG, gives the
    // CCTs of the trace without parents, not those of its DAG rule.
    let t = child_inherits();
    let opts = SimOptions {
        hide_dags: true,
        ..Default::default()
    };
    let out = simulate_with(&t.0, &t.1, &mut Aalo::new(two_queues()), &opts).unwrap();
    assert_close(&ccts(&out), &aalo(&without_parents(&t)));
    assert_close(&ccts(&out), &[8.0, 7.0, 4.0]);
    assert!(aalo(&t) != ccts(&out), "the DAG rule changes them");
}
