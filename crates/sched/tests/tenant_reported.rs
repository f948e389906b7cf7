//! Reported correlation vectors (`tenant::Board`, the coordinator's `report_vector`): App. D.2
//! on a fabric. Ports 0 and 1 (capacity 1) are the example's two links, port 2 (capacity 100)
//! receives everything. A = <1/2, 1>, B = <1, 1/6>, C = <1, 0> on uplinks 0 and 1, each
//! coflow's sum on downlink 2. Sizes are unknown (non-clairvoyant), so only the reports tell
//! the policy the vectors.

use coflowkit_model::Fabric;
use coflowkit_sched::tenant::board::Board;
use coflowkit_sched::{
    build_with_board, CoflowState, FlowState, Rates, SchedOptions, SchedulerKind, Snapshot,
};

const PORTS: usize = 3;

fn fabric() -> Fabric {
    Fabric {
        up_bytes_per_s: vec![1.0, 1.0, 100.0],
        down_bytes_per_s: vec![1.0, 1.0, 100.0],
    }
}

fn coflow(id: u64, srcs: &[u32], remaining: f64) -> CoflowState {
    CoflowState {
        id,
        arrival_s: 0.0,
        deadline_s: None,
        weight: 1.0,
        total_flows: srcs.len(),
        sent_bytes: 0.0,
        max_flow_sent_bytes: 0.0,
        flows: (srcs.iter())
            .map(|&src| FlowState {
                src,
                dst: 2,
                sent_bytes: 0.0,
                remaining_bytes: remaining,
            })
            .collect(),
        dag: None,
    }
}

/// Report `ups` (per uplink 0, 1) and their sum on downlink 2.
fn report(board: &Board, id: u64, ups: [f64; 2]) {
    let mut v: Vec<(u32, f64)> = (0..2)
        .filter(|&p| ups[p] > 0.0)
        .map(|p| (p as u32, ups[p]))
        .collect();
    v.push(((PORTS + 2) as u32, ups[0] + ups[1]));
    let caps = [fabric().up_bytes_per_s, fabric().down_bytes_per_s].concat();
    board.report(id, PORTS, caps, v).unwrap();
}

fn decide(kind: SchedulerKind, opts: &SchedOptions, board: &Board, cs: &[CoflowState]) -> Rates {
    let f = fabric();
    let mut r = Rates::default();
    r.reset(cs);
    build_with_board(kind, opts, board).allocate(
        &Snapshot {
            now_s: 0.0,
            fabric: &f,
            coflows: cs,
        },
        &mut r,
    );
    r
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// A's true progress by <1/2, 1> from its two flows' rates.
fn progress_a(r: &Rates) -> f64 {
    (r.per_coflow[0][0] / 0.5).min(r.per_coflow[0][1])
}

fn d2(remaining: f64) -> Vec<CoflowState> {
    vec![
        coflow(1, &[0, 1], remaining),
        coflow(2, &[0, 1], remaining),
        coflow(3, &[0], remaining),
    ]
}

#[test]
fn reported_vectors_drive_hug_and_a_lie_gains_nothing() {
    let coop = SchedOptions {
        hug_cooperative: true,
        ..Default::default()
    };
    let noncoop = SchedOptions::default();
    // (options, A's progress truthful, lying <1, 1>)
    for (opts, truth, lie) in [(&noncoop, 0.4, 1.0 / 3.0), (&coop, 0.4, 0.5)] {
        let mut got = Vec::new();
        for a in [[0.5, 1.0], [1.0, 1.0]] {
            let board = Board::default();
            report(&board, 1, a);
            report(&board, 2, [1.0, 1.0 / 6.0]);
            report(&board, 3, [1.0, 0.0]);
            let r = decide(SchedulerKind::Hug, opts, &board, &d2(f64::INFINITY));
            got.push(progress_a(&r));
            if a == [0.5, 1.0] && !opts.hug_cooperative {
                // P* = 2/5; B rises on uplink 1 to its cap 2/5 (link at 4/5), C at 2/5.
                let want = [vec![0.2, 0.4], vec![0.4, 0.4], vec![0.4]];
                for (g, w) in r.per_coflow.iter().zip(&want) {
                    assert!(
                        g.iter().zip(w).all(|(g, w)| close(*g, *w)),
                        "{:?}",
                        r.per_coflow
                    );
                }
                let s = board.shares();
                assert!(close(s.p_star, 0.4), "{s:?}");
                let a0 = s.coflows[&1].iter().find(|l| l.link == 0).unwrap();
                assert!(close(a0.guarantee_bytes_per_s, 0.2) && close(a0.cap_bytes_per_s, 0.4));
                let b1 = s.coflows[&2].iter().find(|l| l.link == 1).unwrap();
                assert!(close(b1.guarantee_bytes_per_s, 1.0 / 15.0), "{b1:?}");
                assert!(close(b1.consumption_bytes_per_s, 0.4), "{b1:?}");
            }
        }
        assert!(close(got[0], truth) && close(got[1], lie), "{got:?}");
    }
}

#[test]
fn reports_count_only_where_sizes_are_unknown() {
    // Clairvoyant coflows keep their MADD vectors whatever they report: here every coflow has
    // 1 byte per flow (A = B = <1, 1>, C = <1, 0>), so A's lie <1, 1> is its MADD vector and
    // the truthful report <1/2, 1> is ignored: P* = 1/3, A gets 1/3 per flow either way.
    let board = Board::default();
    report(&board, 1, [0.5, 1.0]);
    let r = decide(
        SchedulerKind::Hug,
        &SchedOptions::default(),
        &board,
        &d2(1.0),
    );
    assert!(close(r.per_coflow[0][0], 1.0 / 3.0), "{:?}", r.per_coflow);
    // Without reports, unknown sizes count one unit per flow: the same vectors, same rates.
    let r2 = decide(
        SchedulerKind::Hug,
        &SchedOptions::default(),
        &Board::default(),
        &d2(f64::INFINITY),
    );
    assert_eq!(r.per_coflow, r2.per_coflow);
    // A withdrawn report (forgotten) is the default again.
    report(&board, 1, [0.5, 1.0]);
    board.forget(1);
    let r3 = decide(
        SchedulerKind::Hug,
        &SchedOptions::default(),
        &board,
        &d2(f64::INFINITY),
    );
    assert_eq!(r3.per_coflow, r2.per_coflow);
}
