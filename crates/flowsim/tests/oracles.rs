//! The worked examples of the coflow thesis (specs/coflow.md §9) as exact oracles.

mod common;

use coflowkit_sched::alloc::Backfill;
use coflowkit_sched::{FlowCompletion, SchedOptions, SchedulerKind as K};
use common::*;

fn opts() -> SchedOptions {
    let mut o = SchedOptions::default();
    o.varys.starvation = None; // toy examples are far shorter than T
    o
}

/// O2 (Fig 2.3): one link; app-1 has three unit flows, app-2 one; deadline 1 for all.
fn fig_2_3(app2_first: bool) -> (coflowkit_model::Trace, coflowkit_model::Fabric) {
    let app1 = coflow(1, 0.0, &[(0, 1, 1.0), (0, 2, 1.0), (0, 3, 1.0)]);
    let app2 = coflow(2, 0.0, &[(0, 4, 1.0)]);
    let mut cs = if app2_first {
        vec![app2, app1]
    } else {
        vec![app1, app2]
    };
    for c in &mut cs {
        c.deadline_s = Some(1.0);
    }
    toy(5, cs)
}

#[test]
fn o2_fair_sharing_misses_every_deadline() {
    let out = run(&fig_2_3(false), K::Fair, &opts());
    assert_close(&ccts(&out), &[4.0, 4.0]);
    assert_near(avg_fct(&out), 4.0);
    assert!(out.coflows.iter().all(|c| c.met_deadline == Some(false)));
}

#[test]
fn o2_varys_serves_app2_first_and_meets_its_deadline() {
    let mut o = opts();
    // Without deadlines: SEBF alone picks app-2 (Γ = 1 < 3): average CCT 2.5.
    let mut t = fig_2_3(false);
    for c in &mut t.0.coflows {
        c.deadline_s = None;
    }
    let out = run(&t, K::Varys, &o);
    assert_close(&ccts(&out), &[4.0, 1.0]);
    // MADD runs app-1's three flows side by side, so all end at 4 (the table's 2.5 average
    // FCT is for serving them one by one; the CCTs are the same).
    assert_near(avg_fct(&out), 3.25);
    // With deadlines: admission rejects app-1 (Γ = 3 > 1), admits app-2, which meets it.
    o.backfill = Backfill::Greedy;
    let out = run(&fig_2_3(false), K::Varys, &o);
    assert_close(&ccts(&out), &[4.0, 1.0]);
    let met: Vec<_> = out.coflows.iter().map(|c| c.met_deadline).collect();
    assert_eq!(met, vec![Some(false), Some(true)]);
}

#[test]
fn o2_edf_with_app2_second_meets_one_flow_deadline() {
    // Per-flow EDF/SFF with equal deadlines and sizes serves in coflow order: app-1's three
    // flows, then app-2: app-1 = 3, app-2 = 4. With app-2 listed first: app-2 = 1, app-1 = 4.
    let out = run(&fig_2_3(false), K::Pfp, &opts());
    assert_close(&ccts(&out), &[3.0, 4.0]);
    assert_near(avg_fct(&out), 2.5);
    let out = run(&fig_2_3(true), K::Pfp, &opts());
    assert_close(&ccts(&out), &[1.0, 4.0]);
}

/// O3 (Fig 3.2): senders 0,1,2; receivers 3,4; s3 holds 2 units for each receiver.
fn fig_3_2() -> (coflowkit_model::Trace, coflowkit_model::Fabric) {
    toy(
        5,
        vec![coflow(
            1,
            0.0,
            &[
                (0, 3, 1.0),
                (0, 4, 1.0),
                (1, 3, 1.0),
                (1, 4, 1.0),
                (2, 3, 2.0),
                (2, 4, 2.0),
            ],
        )],
    )
}

#[test]
fn o3_madd_fair_and_prioritization_on_a_shuffle() {
    let t = fig_3_2();
    let madd = run(&t, K::Varys, &opts());
    assert_close(&ccts(&madd), &[4.0]);
    assert_near(avg_fct(&madd), 4.0);
    let fair = run(&t, K::Fair, &opts());
    assert_close(&ccts(&fair), &[5.0]);
    assert_near(avg_fct(&fair), 11.0 / 3.0);
    let prio = run(&t, K::Pfp, &opts());
    assert_close(&ccts(&prio), &[6.0]);
    assert_near(avg_fct(&prio), 8.0 / 3.0);
}

#[test]
fn o4_madd_beats_fair_by_1_495_for_n_100() {
    let n = 100u32;
    // Senders 0..n into r1, n..2n into r2, sender 2n with n units to each; r1 = 2n+1, r2 = 2n+2.
    let (r1, r2, s) = (2 * n + 1, 2 * n + 2, 2 * n);
    let mut flows: Vec<(u32, u32, f64)> = (0..n).map(|i| (i, r1, 1.0)).collect();
    flows.extend((n..2 * n).map(|i| (i, r2, 1.0)));
    flows.push((s, r1, n as f64));
    flows.push((s, r2, n as f64));
    let t = toy(2 * n + 3, vec![coflow(1, 0.0, &flows)]);
    let fair = ccts(&run(&t, K::Fair, &opts()))[0];
    let madd = ccts(&run(&t, K::Varys, &opts()))[0];
    assert_near(fair, (3 * n - 1) as f64);
    assert_near(madd, (2 * n) as f64);
    assert_near(fair / madd, 1.495);
}

/// O5 (Fig 5.1): ports X=0, Y=1, Z=2 send; receivers are distinct (3..8).
fn fig_5_1(c2_first: bool) -> (coflowkit_model::Trace, coflowkit_model::Fabric) {
    let c1 = coflow(1, 0.0, &[(0, 3, 1.0), (1, 4, 2.0), (2, 5, 4.0)]);
    let c2 = coflow(2, 0.0, &[(0, 6, 2.0), (1, 7, 2.0)]);
    toy(8, if c2_first { vec![c2, c1] } else { vec![c1, c2] })
}

#[test]
fn o5_every_policy_on_fig_5_1() {
    let t = fig_5_1(false);
    let fair = run(&t, K::Fair, &opts());
    assert_close(&ccts(&fair), &[4.0, 4.0]);
    assert_near(avg_fct(&fair), 3.4);
    let wss = run(&t, K::Wss, &opts());
    assert_close(&ccts(&wss), &[4.0, 4.0]);
    assert_near(avg_fct(&wss), 3.6);
    let varys = run(&t, K::Varys, &opts());
    assert_close(&ccts(&varys), &[4.0, 2.0]);
    // The digest's 3.2 has C1's X flow end at 4; our greedy backfill (CoflowSim's) tops it up
    // with X's leftover after C2 is done, so it ends at 3. CCTs are unchanged.
    assert_near(avg_fct(&varys), 3.0);
    // SRPT with the tie on Y broken for C2 (C2 listed first): C2 = 3, C1 = 4.
    let prio = run(&fig_5_1(true), K::Pfp, &opts());
    assert_close(&ccts(&prio), &[3.0, 4.0]);
    assert_near(avg_fct(&prio), 2.8);
}

#[test]
fn o5_deadline_admission_rejects_c1_and_c2_always_meets() {
    let mut t = fig_5_1(false);
    for c in &mut t.0.coflows {
        c.deadline_s = Some(2.0);
    }
    let out = run(&t, K::Varys, &opts());
    let met: Vec<_> = out.coflows.iter().map(|c| c.met_deadline).collect();
    assert_eq!(met, vec![Some(false), Some(true)]);
}

#[test]
fn o6_sebf_beats_size_based_orders() {
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 0, 2.0), (1, 0, 2.0)]),
            coflow(2, 0.0, &[(2, 0, 3.0), (0, 1, 1.0), (1, 1, 1.0)]),
        ],
    );
    for kind in [K::Sebf, K::Varys] {
        let out = run(&t, kind, &opts());
        assert_close(&ccts(&out), &[7.0, 3.0]);
    }
    for kind in [K::Scf, K::Ncf, K::Tcf] {
        let out = run(&t, kind, &opts());
        assert_close(&ccts(&out), &[4.0, 7.0]);
        assert_near(avg_cct(&out), 5.5);
    }
}

/// O7 (Fig 6.1): ingress only; C1 = {P1: 3, P2: 4} and C3 = {P1: 3} at 0, C2 = {P2: 2} at 1.
fn fig_6_1(c3_first: bool) -> (coflowkit_model::Trace, coflowkit_model::Fabric) {
    let c1 = coflow(1, 0.0, &[(0, 2, 3.0), (1, 3, 4.0)]);
    let c3 = coflow(3, 0.0, &[(0, 4, 3.0)]);
    let c2 = coflow(2, 1.0, &[(1, 5, 2.0)]);
    toy(
        6,
        if c3_first {
            vec![c3, c1, c2]
        } else {
            vec![c1, c3, c2]
        },
    )
}

#[test]
fn o7_fair_fifo_and_varys_on_fig_6_1() {
    let fair = run(&fig_6_1(false), K::Fair, &opts());
    assert_close(&ccts(&fair), &[6.0, 6.0, 4.0]);
    // The figure's FIFO is non-preemptive: C1, blocked behind C3 on P1, keeps P2 and C2 waits.
    let fifo = run(&fig_6_1(false), K::FifoStrict, &opts());
    assert_close(&ccts(&fifo), &[4.0, 6.0, 5.0]);
    let fifo = run(&fig_6_1(true), K::FifoStrict, &opts());
    assert_close(&ccts(&fifo), &[3.0, 6.0, 5.0]);
    // The simulations' FIFO (`fifo`, the reference's): C1 first is not blocked (C3 gets MADD on
    // the quarter of P1 C1 leaves), so the same; C3 first blocks C1 on P1, C1 only backfills P2,
    // and at t = 1 C2 takes P2 by MADD ahead of the blocked C1: C2 ends at 3 (CCT 2), C1 at 6.
    let fifo = run(&fig_6_1(false), K::Fifo, &opts());
    assert_close(&ccts(&fifo), &[4.0, 6.0, 5.0]);
    let fifo = run(&fig_6_1(true), K::Fifo, &opts());
    assert_close(&ccts(&fifo), &[3.0, 6.0, 2.0]);
    let varys = run(&fig_6_1(false), K::Varys, &opts());
    assert_close(&ccts(&varys), &[6.0, 3.0, 2.0]);
    assert_near(avg_cct(&varys), 11.0 / 3.0);
}

/// The reference's FIFO gives a blocked coflow the leftovers of the coflows ahead of it before
/// anyone backfills: C1 = {P0: 4, P1: 1} and C2 = {P0: 1, P1: 2} at 0, senders 0 and 1. C1's
/// MADD fills P0 and leaves 3/4 of P1; C2 is blocked on P0. With the share C2's P1 flow runs on
/// those 3/4 (done at 8/3) while C1's P1 flow keeps its MADD quarter (C1 still ends at 4); then
/// C2's P0 flow runs 4 -> 5. Backfilling C1 instead ends its P1 flow at 1, which does not end C1
/// sooner, and with freed bandwidth idle until a coflow event C2 starts only at 4 and ends at 6.
#[test]
fn fifo_blocked_coflows_share_the_leftovers_before_backfill() {
    let t = toy(
        6,
        vec![
            coflow(1, 0.0, &[(0, 2, 4.0), (1, 3, 1.0)]),
            coflow(2, 0.0, &[(0, 4, 1.0), (1, 5, 2.0)]),
        ],
    );
    let ignore = opts().with_flow_completion(FlowCompletion::Ignore);
    let out = run(&t, K::Fifo, &ignore);
    assert_close(&ccts(&out), &[4.0, 5.0]);
    let mut greedy = ignore.clone();
    greedy.blocked_share = Some(false);
    let out = run(&t, K::Fifo, &greedy);
    assert_close(&ccts(&out), &[4.0, 6.0]);
    // Handing freed bandwidth on lets the greedy variant catch up here (C2's P1 flow gets P1
    // from 1 and ends at 3), so by default both give the same CCTs.
    for share in [None, Some(false)] {
        let mut o = opts();
        o.blocked_share = share;
        assert_close(&ccts(&run(&t, K::Fifo, &o)), &[4.0, 5.0]);
    }
    // SEBF keeps its greedy backfill unless asked: C1 (Γ 4) goes after C2 (Γ 2), nobody blocks.
    let out = run(&t, K::Sebf, &ignore);
    assert_close(&ccts(&out), &[6.0, 2.0]);
}

#[test]
fn o10_deadline_admission_on_one_port() {
    // A: 2 units, deadline 4 (reserves 1/2). B: 1 unit, deadline 1 -> Γ = 2 > 1, rejected;
    // deadline 2 -> Γ = 2 <= 2, admitted at 1/2.
    for (deadline_b, admitted) in [(1.0, false), (2.0, true)] {
        let mut a = coflow(1, 0.0, &[(0, 1, 2.0)]);
        a.deadline_s = Some(4.0);
        let mut b = coflow(2, 0.0, &[(0, 2, 1.0)]);
        b.deadline_s = Some(deadline_b);
        let out = run(&toy(3, vec![a, b]), K::Varys, &opts());
        assert_eq!(out.coflows[0].met_deadline, Some(true));
        assert_eq!(out.coflows[1].met_deadline, Some(admitted));
    }
}

#[test]
fn o9_starvation_serves_every_coflow_within_t_plus_delta() {
    // A long coflow keeps port 0 busy; a bigger one behind it would starve under plain SEBF.
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 1, 10.0)]),
            coflow(2, 0.0, &[(0, 2, 20.0)]),
        ],
    );
    let mut o = opts();
    o.varys.starvation = Some(coflowkit_sched::policy::varys::Starvation {
        t_s: 2.0,
        delta_s: 0.2,
    });
    let out = run(&t, K::Varys, &o);
    // Coflow 2 gets δ = 0.2 units in each 2.2 of C1's run, so C1 takes 10 + 0.2 * 4 + ... :
    // C1 is paused during every δ-interval (0.2 per 2.2), C2 progresses 0.2 each time.
    let c1 = out.coflows[0].cct_s;
    assert!(c1 > 10.0 && c1 < 10.0 + 0.2 * 5.0 + 1e-9, "C1 = {c1}");
    assert_near(out.coflows[1].cct_s, 30.0); // work conserving overall: port 0 never idles
    let plain = run(&t, K::Sebf, &opts());
    assert_close(&ccts(&plain), &[10.0, 30.0]);
}

#[test]
fn o1_smallest_flow_first_delays_app2_that_coflow_order_finishes_at_1() {
    // One unit link (uplink of port 0); app-1 has flows 1-δ and 1+δ, app-2 one flow of 1.
    let d = 0.1;
    let t = toy(
        4,
        vec![
            coflow(1, 0.0, &[(0, 1, 1.0 - d), (0, 2, 1.0 + d)]),
            coflow(2, 0.0, &[(0, 3, 1.0)]),
        ],
    );
    // Smallest flow first: app-2 ends at 2 - δ.
    assert_near(run(&t, K::Pfp, &opts()).coflows[1].cct_s, 2.0 - d);
    // The coflow-aware optimum (and Varys): app-2 ends at 1.
    assert_near(run(&t, K::Varys, &opts()).coflows[1].cct_s, 1.0);
    // Per-flow fairness gives app-1 two thirds of the link while all three run: its short flow
    // ends at 3(1-δ), when app-2 has received (1-δ).
    let fair = run(&t, K::Fair, &opts());
    assert_near(
        fair.coflows[1].cct_s,
        3.0 * (1.0 - d) + (1.0 - (1.0 - d)) * 2.0,
    );
}
