//! Saath on the oracles of bashuffler-saath.md D3 (S1a, S1b, S2, S3, S4, S5) and ablations: each
//! switch turned off changes the numbers where the spec says it does.

mod common;

use coflowkit_flowsim::SimOutput;
use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::policy::aalo::{Aalo, AaloConfig};
use coflowkit_sched::policy::dclas::{InterQueue, Queues, WithinCoflow};
use coflowkit_sched::policy::saath::{
    contention, ContentionCount, ContentionScope, Saath, SaathConfig,
};
use coflowkit_sched::{CoflowState, FlowState};
use common::toys::*;
use common::*;

/// Thresholds so high that nobody changes queue; no starvation timer.
fn saath() -> SaathConfig {
    SaathConfig {
        queues: Queues {
            k: 10,
            e: 10.0,
            q1_hi_bytes: 1e9,
        },
        starvation: None,
        ..SaathConfig::default()
    }
}

fn aalo() -> AaloConfig {
    AaloConfig {
        queues: saath().queues,
        inter_queue: InterQueue::Strict,
        within_coflow: WithinCoflow::CoflowSim,
        sync_interval_s: 0.0,
        ..Default::default()
    }
}

fn run_saath(t: &(Trace, Fabric), cfg: SaathConfig) -> SimOutput {
    run_with(t, &mut Saath::new(cfg))
}

fn s3_queues() -> Queues {
    Queues {
        k: 10,
        e: 10.0,
        q1_hi_bytes: 4.0,
    }
}

#[test]
fn s1a_lcof_serves_c1_and_c3_first() {
    // Trace order C2, C1, C3.
    let out = run_saath(&s1(true), saath());
    assert_close(&ccts(&out), &[2.0, 1.0, 1.0]);
    assert_near(avg_cct(&out), 4.0 / 3.0);
    let out = run_with(&s1(true), &mut Aalo::new(aalo()));
    assert_close(&ccts(&out), &[1.0, 2.0, 2.0]);
    // Ablation: all-or-none with FIFO alone still gives 5/3.
    let fifo = SaathConfig {
        lcof: false,
        ..saath()
    };
    let out = run_saath(&s1(true), fifo);
    assert_close(&ccts(&out), &[1.0, 2.0, 2.0]);
    assert_near(avg_cct(&out), 5.0 / 3.0);
}

#[test]
fn s1b_all_or_none_alone_gives_4_3() {
    let out = run_saath(&s1(false), saath());
    assert_close(&ccts(&out), &[1.0, 2.0, 1.0]);
    let fifo = SaathConfig {
        lcof: false,
        ..saath()
    };
    assert_close(&ccts(&run_saath(&s1(false), fifo)), &[1.0, 2.0, 1.0]);
    // Neither idea: Aalo's out-of-sync schedule, 5/3.
    let neither = SaathConfig {
        lcof: false,
        all_or_none: false,
        ..saath()
    };
    assert_close(&ccts(&run_saath(&s1(false), neither)), &[1.0, 2.0, 2.0]);
    let out = run_with(&s1(false), &mut Aalo::new(aalo()));
    assert_close(&ccts(&out), &[1.0, 2.0, 2.0]);
}

#[test]
fn s2_saath_keeps_c2_in_sync() {
    let aalo_out = run_with(&s1(false), &mut Aalo::new(aalo()));
    // C2's flows end at 1 and 2: spread 1, normalized by its CCT 2.
    assert_near(aalo_out.coflows[1].fct_spread, 0.5);
    let out = run_saath(&s1(false), saath());
    assert_near(out.coflows[1].fct_spread, 0.0);
    // Without all-or-none C2's P2 flow runs early again.
    let no_aon = SaathConfig {
        lcof: false,
        all_or_none: false,
        ..saath()
    };
    assert_near(run_saath(&s1(false), no_aon).coflows[1].fct_spread, 0.5);
}

#[test]
fn s3_per_flow_threshold_demotes_l_at_1() {
    let cfg = SaathConfig {
        queues: s3_queues(),
        ..saath()
    };
    let out = run_saath(&s3(), cfg);
    assert_close(&ccts(&out), &[9.0, 2.0]);
    assert_near(avg_cct(&out), 5.5);
    // With Aalo's total-bytes rule: demoted at 2.5, as under Aalo.
    let total = SaathConfig {
        per_flow_threshold: false,
        ..cfg
    };
    let out = run_saath(&s3(), total);
    assert_close(&ccts(&out), &[9.0, 3.5]);
    assert_near(avg_cct(&out), 6.25);
    // Same with max-min inside the coflow.
    let maxmin = SaathConfig {
        within_coflow: WithinCoflow::MaxMin,
        ..cfg
    };
    assert_close(&ccts(&run_saath(&s3(), maxmin)), &[9.0, 2.0]);
}

#[test]
fn s3_coordination_ticks_delay_the_demotion() {
    // Δ = 0.4: L's P1 flow passes 4/4 at 1, but the coordinator sees it at the tick 1.2
    // (the completions at 0.5 are not ticks and change no coflow, so they do not count).
    let cfg = SaathConfig {
        queues: s3_queues(),
        sync_interval_s: 0.4,
        ..saath()
    };
    assert_close(&ccts(&run_saath(&s3(), cfg)), &[9.0, 2.2]);
}

#[test]
fn s4_same_ccts_with_and_without_work_conservation() {
    for wc in [true, false] {
        let cfg = SaathConfig {
            work_conservation: wc,
            ..saath()
        };
        let out = run_saath(&s4(), cfg);
        assert_close(&ccts(&out), &[1.0, 2.0, 1.0, 1.0]);
        assert_near(avg_cct(&out), 1.25);
    }
    let out = run_with(&s4(), &mut Aalo::new(aalo()));
    assert_close(&ccts(&out), &[1.0, 2.0, 2.0, 1.0]);
}

/// The coflows of a trace as a scheduler sees them at t=0.
fn states(t: &Trace) -> Vec<CoflowState> {
    t.coflows
        .iter()
        .map(|c| CoflowState {
            id: c.id,
            arrival_s: c.arrival_s,
            deadline_s: None,
            weight: c.weight,
            total_flows: c.flows.len(),
            sent_bytes: 0.0,
            max_flow_sent_bytes: 0.0,
            dag: None,
            flows: c
                .flows
                .iter()
                .map(|f| FlowState {
                    src: f.src,
                    dst: f.dst,
                    sent_bytes: 0.0,
                    remaining_bytes: f64::INFINITY,
                })
                .collect(),
        })
        .collect()
}

#[test]
fn s4_work_conservation_runs_c2_p4_flow_during_0_1() {
    let (trace, fabric) = s4();
    let coflows = states(&trace);
    for (wc, want) in [(true, 1.0), (false, 0.0)] {
        let cfg = SaathConfig {
            work_conservation: wc,
            ..saath()
        };
        let rates = decide(&mut Saath::new(cfg), &fabric, &coflows);
        // C2 = {P1, P2, P4}: P1 and P2 go to C1 and C3; P4 is free.
        assert_close(&rates.per_coflow[1], &[0.0, 0.0, want]);
        assert_close(&rates.per_coflow[0], &[1.0]);
        assert_close(&rates.per_coflow[2], &[1.0]);
        assert_close(&rates.per_coflow[3], &[1.0]);
    }
}

fn as_f64(v: Vec<usize>) -> Vec<f64> {
    v.into_iter().map(|x| x as f64).collect()
}

#[test]
fn s5_contention_values() {
    let (t1, f1) = s1(false);
    let c = states(&t1);
    let same = vec![0; c.len()];
    let got = contention(
        &c,
        &same,
        ContentionScope::SameQueue,
        ContentionCount::DistinctCoflows,
        f1.ports(),
    );
    assert_close(&as_f64(got), &[1.0, 2.0, 1.0]);
    let (t4, f4) = s4();
    let c = states(&t4);
    let same = vec![0; c.len()];
    let got = contention(
        &c,
        &same,
        ContentionScope::SameQueue,
        ContentionCount::DistinctCoflows,
        f4.ports(),
    );
    assert_close(&as_f64(got), &[1.0, 2.0, 1.0, 0.0]);
    // Scope: put C1 in another queue; it no longer counts for C2 unless scope is all.
    let split = vec![1, 0, 0, 0];
    let got = contention(
        &c,
        &split,
        ContentionScope::SameQueue,
        ContentionCount::DistinctCoflows,
        f4.ports(),
    );
    assert_close(&as_f64(got), &[0.0, 1.0, 1.0, 0.0]);
    let got = contention(
        &c,
        &split,
        ContentionScope::AllActive,
        ContentionCount::DistinctCoflows,
        f4.ports(),
    );
    assert_close(&as_f64(got), &[1.0, 2.0, 1.0, 0.0]);
    // Per-port sum counts a coflow met at two ports twice.
    let t = toy(
        4,
        vec![
            coflow(1, 0.0, &[(0, 2, 1.0), (1, 3, 1.0)]),
            coflow(2, 0.0, &[(0, 3, 1.0)]),
        ],
    );
    let c = states(&t.0);
    let got = contention(
        &c,
        &[0, 0],
        ContentionScope::SameQueue,
        ContentionCount::PerPortSum,
        4,
    );
    assert_close(&as_f64(got), &[2.0, 2.0]);
    let got = contention(
        &c,
        &[0, 0],
        ContentionScope::SameQueue,
        ContentionCount::DistinctCoflows,
        4,
    );
    assert_close(&as_f64(got), &[1.0, 1.0]);
}

#[test]
fn starvation_timer_promotes_a_passed_over_coflow() {
    // C2 = {P1, P2} blocks two coflows, C1 = {P1: 10} and C3 = {P2: 10} one each: LCoF runs C1
    // and C3 first and C2 waits until 10.
    let t = toy(
        6,
        vec![
            coflow(1, 0.0, &[(0, 2, 10.0)]),
            coflow(2, 0.0, &[(0, 3, 1.0), (1, 4, 1.0)]),
            coflow(3, 0.0, &[(1, 5, 10.0)]),
        ],
    );
    assert_close(&ccts(&run_saath(&t, saath())), &[10.0, 11.0, 10.0]);
    // With T_starve = 2, C2 starves at 2, goes first and runs [2, 3].
    let cfg = SaathConfig {
        starvation: Some(2.0),
        ..saath()
    };
    assert_close(&ccts(&run_saath(&t, cfg)), &[11.0, 3.0, 11.0]);
}

#[test]
fn every_mode_finishes_within_capacity() {
    let t = mixed();
    for inter in [InterQueue::Strict, InterQueue::Weighted] {
        for within in [WithinCoflow::CoflowSim, WithinCoflow::MaxMin] {
            for aon in [true, false] {
                for dt in [0.0, 0.3] {
                    let cfg = SaathConfig {
                        queues: Queues {
                            k: 4,
                            e: 3.0,
                            q1_hi_bytes: 2.0,
                        },
                        inter_queue: inter,
                        within_coflow: within,
                        all_or_none: aon,
                        sync_interval_s: dt,
                        starvation: Some(1.5),
                        contention: ContentionScope::AllActive,
                        contention_count: ContentionCount::PerPortSum,
                        ..SaathConfig::default()
                    };
                    assert_eq!(run_saath(&t, cfg).coflows.len(), 4);
                }
            }
        }
    }
}

#[test]
fn the_diagnostic_counts_what_each_idea_changes_and_changes_nothing() {
    // S1a (trace order C2, C1, C3): LCoF runs C1 and C3 first where FIFO would run C2; C2 has
    // no room left either way, so all-or-none changes nothing.
    let cfg = SaathConfig {
        diagnose: true,
        ..saath()
    };
    let mut s = Saath::new(cfg);
    let out = run_with(&s1(true), &mut s);
    assert_close(&ccts(&out), &[2.0, 1.0, 1.0]);
    assert!(s.stats.decisions >= 2, "{:?}", s.stats);
    assert!(s.stats.lcof_reordered >= 1 && s.stats.lcof_changed_rates >= 1);
    assert_eq!(s.stats.aon_changed_rates, 0, "{:?}", s.stats);
    // S1b under FIFO: all-or-none holds C2 back, which leaves P2 to C3; without it C2's P2 flow
    // would take P2.
    let fifo = SaathConfig { lcof: false, ..cfg };
    let mut s = Saath::new(fifo);
    let out = run_with(&s1(false), &mut s);
    assert_close(&ccts(&out), &[1.0, 2.0, 1.0]);
    assert_eq!((s.stats.lcof_reordered, s.stats.lcof_changed_rates), (0, 0));
    assert!(s.stats.aon_changed_rates >= 1, "{:?}", s.stats);
    assert_eq!(s.stats.aon_withheld, 0, "C2 had no room after C1 and C3");
}
