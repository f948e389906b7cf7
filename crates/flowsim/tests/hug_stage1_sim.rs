//! HUG's stage 1 in the simulator (`SchedOptions::hug_stage1`, `sim --hug-stage1`): Fig 7.2's
//! two coflows on a 3x3 fabric give the thesis' allocation under either stage 1 (both are held
//! by the most loaded links), and a coflow off those links tells them apart.

mod common;

use coflowkit_model::Coflow;
use coflowkit_sched::tenant::Stage1;
use coflowkit_sched::{
    build, CoflowState, FlowState, Rates, SchedOptions, SchedulerKind, Snapshot,
};

use common::{ccts, coflow, run, toy};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The scheduler's view of a coflow that has not started.
fn state(c: &Coflow) -> CoflowState {
    CoflowState {
        id: c.id,
        arrival_s: 0.0,
        deadline_s: None,
        weight: 1.0,
        total_flows: c.flows.len(),
        sent_bytes: 0.0,
        max_flow_sent_bytes: 0.0,
        flows: (c.flows.iter())
            .map(|f| FlowState {
                src: f.src,
                dst: f.dst,
                sent_bytes: 0.0,
                remaining_bytes: f.bytes,
            })
            .collect(),
        dag: None,
    }
}

fn hug(stage1: Stage1) -> SchedOptions {
    SchedOptions {
        hug_stage1: stage1,
        ..Default::default()
    }
}

#[test]
fn fig_7_2_under_either_stage_1() {
    // d_A = <1/2, 1, 0 | 1, 1/2, 0>: flows 0->0, 1->0, 1->1 of 1/2 byte each. d_B = <1, 1/6, 0
    // | 0, 1, 1/6>: 0->1 of 1 byte, 1->2 of 1/6. Uplink 0 and downlink 1 sum to 3/2: P* = 2/3,
    // a_A = <1/3, 2/3, 0 | 2/3, 1/3, 0>, a_B = <2/3, 1/9, 0 | 0, 2/3, 1/9>; stage 2 (caps 2/3)
    // lifts B on uplink 1 to 1/3 and on downlink 2 to 2/3: links used <1, 1, 0 | 2/3, 1, 2/3>
    // (the thesis' Fig 7.2). A flow gets the smaller of its two ends' parts: A's three flows
    // 1/3 each, B's 2/3 and 1/3 (B's small flow on the spare of uplink 1).
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 0, 0.5), (1, 0, 0.5), (1, 1, 0.5)]),
            coflow(2, 0.0, &[(0, 1, 1.0), (1, 2, 1.0 / 6.0)]),
        ],
    );
    for stage1 in [Stage1::Auto, Stage1::MultiRound, Stage1::ClosedForm] {
        let opts = hug(stage1);
        let states: Vec<_> = t.0.coflows.iter().map(state).collect();
        let mut r = Rates::default();
        r.reset(&states);
        build(SchedulerKind::Hug, &opts).allocate(
            &Snapshot {
                now_s: 0.0,
                fabric: &t.1,
                coflows: &states,
            },
            &mut r,
        );
        let want = [vec![1.0 / 3.0; 3], vec![2.0 / 3.0, 1.0 / 3.0]];
        for (got, want) in r.per_coflow.iter().zip(&want) {
            for (g, w) in got.iter().zip(want) {
                assert!(close(*g, *w), "{stage1:?}: {:?}", r.per_coflow);
            }
        }
        let mut up = [0.0; 3];
        let mut down = [0.0; 3];
        for (c, rs) in states.iter().zip(&r.per_coflow) {
            for (f, x) in c.flows.iter().zip(rs) {
                up[f.src as usize] += x;
                down[f.dst as usize] += x;
            }
        }
        // What flows can move: uplinks <1, 1, 0>, downlinks <2/3, 1, 1/3> (downlink 2's
        // allowance 2/3 is usable only to 1/3: B's flow there is held by uplink 1).
        for (g, w) in up
            .iter()
            .chain(&down)
            .zip([1.0, 1.0, 0.0, 2.0 / 3.0, 1.0, 1.0 / 3.0])
        {
            assert!(close(*g, w), "{stage1:?}: up {up:?} down {down:?}");
        }
        // Both coflows progress at 2/3 to the end: their bottleneck bytes (1) take 3/2.
        let out = run(&t, SchedulerKind::Hug, &opts);
        for c in ccts(&out) {
            assert!(close(c, 1.5), "{stage1:?}: {:?}", ccts(&out));
        }
    }
}

#[test]
fn multi_round_lets_a_coflow_off_the_bottleneck_rise() {
    // A: 0->0, B: 0->1, C: 1->2, 1 byte each. Eq 7.2: P* = 1/2 (uplink 0), C capped at 1/2:
    // every CCT 2. Multi-round DRF: C alone on its links rises to 1: CCT 1. DRF (multi-round
    // too, no stage 2) agrees with it.
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 0, 1.0)]),
            coflow(2, 0.0, &[(0, 1, 1.0)]),
            coflow(3, 0.0, &[(1, 2, 1.0)]),
        ],
    );
    let auto = ccts(&run(&t, SchedulerKind::Hug, &hug(Stage1::Auto)));
    let multi = ccts(&run(&t, SchedulerKind::Hug, &hug(Stage1::MultiRound)));
    let drf = ccts(&run(&t, SchedulerKind::Drf, &SchedOptions::default()));
    for (got, want) in [
        (auto, [2.0, 2.0, 2.0]),
        (multi, [2.0, 2.0, 1.0]),
        (drf, [2.0, 2.0, 1.0]),
    ] {
        assert!(
            got.iter().zip(want).all(|(g, w)| close(*g, w)),
            "{got:?} vs {want:?}"
        );
    }
}
