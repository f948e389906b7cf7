//! Aalo (D-CLAS) on the worked examples: coflow.md O7/O8 and bashuffler-saath.md D3.

mod common;

use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::policy::aalo::{Aalo, AaloConfig};
use coflowkit_sched::policy::dclas::{InterQueue, Queues, WithinCoflow};
use coflowkit_sched::{CoflowState, FlowState};
use common::toys::*;
use common::*;

/// Strict priority, instantaneous coordination, thresholds `q1_hi * E^i`.
fn strict(q1_hi: f64, e: f64, k: usize) -> AaloConfig {
    AaloConfig {
        queues: Queues {
            k,
            e,
            q1_hi_bytes: q1_hi,
        },
        inter_queue: InterQueue::Strict,
        within_coflow: WithinCoflow::MaxMin,
        sync_interval_s: 0.0,
        ..Default::default()
    }
}

/// Thresholds so high that nobody changes queue.
fn one_queue() -> AaloConfig {
    strict(1e9, 10.0, 10)
}

fn run_aalo(t: &(Trace, Fabric), cfg: AaloConfig) -> coflowkit_flowsim::SimOutput {
    run_with(t, &mut Aalo::new(cfg))
}

/// O7 (Fig 6.1): ingress ports P1=0, P2=1, distinct receivers. C1 = {P1:3, P2:4} and
/// C3 = {P1:3} at t=0 (C1 first in FIFO), C2 = {P2:2} at t=1. CCTs reported as C1, C2, C3.
fn fig_6_1() -> (Trace, Fabric) {
    toy(
        6,
        vec![
            coflow(1, 0.0, &[(0, 2, 3.0), (1, 3, 4.0)]),
            coflow(2, 1.0, &[(1, 5, 2.0)]),
            coflow(3, 0.0, &[(0, 4, 3.0)]),
        ],
    )
}

#[test]
fn o7_fine_grained_dclas_approaches_continuous_clas() {
    // Continuous CLAS is the limit of D-CLAS with tiny, closely spaced thresholds under strict
    // priority: C1=6, C2=2, C3=4 (avg 4). Inside a queue FIFO breaks the ties CLAS would share
    // (C1 and C3 leapfrog through the buckets; C2 catches up with C1 just as it finishes), so
    // the CCTs land within a few bucket widths (E-1 = 1%) of the continuous ones.
    let out = run_aalo(&fig_6_1(), strict(1e-3, 1.01, 2000));
    let c = ccts(&out);
    for (got, want) in c.iter().zip([6.0, 2.0, 4.0]) {
        assert!((got - want).abs() < 0.05, "CCTs {c:?}");
    }
    assert!((avg_cct(&out) - 4.0).abs() < 0.02, "CCTs {c:?}");
}

#[test]
fn o7_coarse_dclas_by_hand() {
    // Q1hi = 2, E = 10, strict: queues (0,2], (2,20], (20,inf). At t=0 C1 is ahead of C3 in
    // Q1, sends on P1 and P2 (rate 2) and reaches 2 at t=1: it drops to Q2 just as C2 arrives.
    // C3 takes P1 and C2 takes P2 (both Q1) until 3: C2 finishes (CCT 2), C3 reaches 2 and
    // drops to Q2 behind C1. C1 then holds P1 (2 left, done at 5) and P2 (3 left, done at 6);
    // C3 runs its last unit on P1 in [5, 6]. So C1=6, C2=2, C3=6: C2 gets its CLAS time but
    // C1 and C3 are FIFO inside Q2, where continuous CLAS would interleave them (C3 = 4).
    let out = run_aalo(&fig_6_1(), strict(2.0, 10.0, 10));
    assert_close(&ccts(&out), &[6.0, 2.0, 6.0]);
}

#[test]
fn o8_weighted_queues_split_a_port_10_to_8() {
    const MB: f64 = 1048576.0;
    let fabric = Fabric::uniform(3, 1.0);
    let state = |id, sent: f64, dst| CoflowState {
        id,
        arrival_s: 0.0,
        deadline_s: None,
        weight: 1.0,
        total_flows: 1,
        sent_bytes: sent,
        max_flow_sent_bytes: sent,
        dag: None,
        flows: vec![FlowState {
            src: 0,
            dst,
            sent_bytes: sent,
            remaining_bytes: f64::INFINITY,
        }],
    };
    // 500 MB is in Q3 (index 2); listed first to show that queues, not arrival, decide.
    let coflows = vec![state(1, 500.0 * MB, 2), state(2, 5.0 * MB, 1)];
    let rates = decide(&mut Aalo::new(AaloConfig::default()), &fabric, &coflows);
    assert_close(&rates.per_coflow[0], &[8.0 / 18.0]);
    assert_close(&rates.per_coflow[1], &[10.0 / 18.0]);
}

#[test]
fn s3_aalo_demotes_l_when_total_bytes_reach_4() {
    let out = run_aalo(&s3(), strict(4.0, 10.0, 10));
    assert_close(&ccts(&out), &[9.0, 3.5]);
    assert_near(avg_cct(&out), 6.25);
}

#[test]
fn s3_coordination_ticks_delay_the_demotion() {
    // Δ = 0.3: L crosses at 2.5 but the coordinator only sees it at the tick 2.7.
    let mut cfg = strict(4.0, 10.0, 10);
    cfg.sync_interval_s = 0.3;
    let out = run_aalo(&s3(), cfg);
    assert_close(&ccts(&out), &[9.0, 3.7]);
}

fn configs() -> Vec<AaloConfig> {
    let mut coflowsim = one_queue();
    coflowsim.within_coflow = WithinCoflow::CoflowSim;
    let mut weighted = one_queue();
    weighted.inter_queue = InterQueue::Weighted;
    // The defaults keep toy coflows (bytes = units) in Q1 forever.
    vec![one_queue(), coflowsim, weighted, AaloConfig::default()]
}

#[test]
fn s1a_s1b_s4_aalo_columns() {
    for cfg in configs() {
        // S1a: trace order C2, C1, C3.
        let out = run_aalo(&s1(true), cfg);
        assert_close(&ccts(&out), &[1.0, 2.0, 2.0]);
        // S1b: C2 goes out of sync: its P2 flow ends at 1, its P1 flow at 2.
        let out = run_aalo(&s1(false), cfg);
        assert_close(&ccts(&out), &[1.0, 2.0, 2.0]);
        assert_near(out.coflows[1].fct_spread, 0.5);
        let out = run_aalo(&s4(), cfg);
        assert_close(&ccts(&out), &[1.0, 2.0, 2.0, 1.0]);
        assert_near(avg_cct(&out), 1.5);
    }
}

#[test]
fn identical_coflows_in_one_queue_run_fifo() {
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 1, 1.0)]),
            coflow(2, 0.0, &[(0, 2, 1.0)]),
        ],
    );
    for cfg in configs() {
        assert_close(&ccts(&run_aalo(&t, cfg)), &[1.0, 2.0]);
    }
}

#[test]
fn identical_coflows_share_lower_queues_as_appendix_c2_says() {
    // Two coflows of 100 on one port, Q1hi = 4, E = 10: they leapfrog through (0,4] and
    // (4,40], then run FIFO in (40,400]: T_disc = 4 f(40) + 3 f(60) = 340 = 140 + 200.
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 1, 100.0)]),
            coflow(2, 0.0, &[(0, 2, 100.0)]),
        ],
    );
    assert_close(&ccts(&run_aalo(&t, strict(4.0, 10.0, 10))), &[140.0, 200.0]);
}

#[test]
fn aalo_never_reads_sizes_and_always_finishes() {
    // A mixed workload under every mode: the simulator checks capacities and stalls.
    let t = mixed();
    for inter in [InterQueue::Weighted, InterQueue::Strict] {
        for within in [WithinCoflow::MaxMin, WithinCoflow::CoflowSim] {
            for dt in [0.0, 0.01, 0.7] {
                let cfg = AaloConfig {
                    queues: Queues {
                        k: 4,
                        e: 3.0,
                        q1_hi_bytes: 2.0,
                    },
                    inter_queue: inter,
                    within_coflow: within,
                    sync_interval_s: dt,
                    ..Default::default()
                };
                let out = run_aalo(&t, cfg);
                assert_eq!(out.coflows.len(), 4);
            }
        }
    }
}
