//! The vector of a non-clairvoyant coflow that reports none (`SchedOptions::hug_vectors`,
//! `tenant::estimate`): one unit per flow (the default), all-ones on its links, or its flows'
//! measured rates. Oracles from Eq 7.2 by hand and App. D.2 (coflow spec §5.2).

use coflowkit_model::Fabric;
use coflowkit_sched::tenant::NcVector;
use coflowkit_sched::{
    build, CoflowState, FlowState, Rates, SchedOptions, SchedulerKind, Snapshot,
};

const INF: f64 = f64::INFINITY;

fn coflow(id: u64, flows: &[(u32, u32, f64)]) -> CoflowState {
    CoflowState {
        id,
        arrival_s: 0.0,
        deadline_s: None,
        weight: 1.0,
        total_flows: flows.len(),
        sent_bytes: flows.iter().map(|f| f.2).sum(),
        max_flow_sent_bytes: 0.0,
        flows: (flows.iter())
            .map(|&(src, dst, sent_bytes)| FlowState {
                src,
                dst,
                sent_bytes,
                remaining_bytes: INF,
            })
            .collect(),
        dag: None,
    }
}

fn opts(v: NcVector) -> SchedOptions {
    SchedOptions {
        hug_vectors: v,
        ..Default::default()
    }
}

fn close<W: AsRef<[f64]> + std::fmt::Debug>(got: &[Vec<f64>], want: &[W]) {
    let ok = got.len() == want.len()
        && (got.iter().zip(want)).all(|(g, w)| {
            let w = w.as_ref();
            g.len() == w.len() && g.iter().zip(w).all(|(a, b)| (a - b).abs() < 1e-9)
        });
    assert!(ok, "got {got:?}, want {want:?}");
}

/// One decision of a fresh `kind` on `cs`.
fn once(kind: SchedulerKind, o: &SchedOptions, f: &Fabric, cs: &[CoflowState]) -> Rates {
    let mut r = Rates::default();
    r.reset(cs);
    let snap = Snapshot {
        now_s: 0.0,
        fabric: f,
        coflows: cs,
    };
    build(kind, o).allocate(&snap, &mut r);
    r
}

#[test]
fn all_ones_and_one_unit_per_flow_differ_by_eq_7_2() {
    // X: two flows 0 -> 2 and one 1 -> 2; Y: 0 -> 1. Ports of capacity 1.
    // One unit per flow: X = <2/3, 1/3 | down2 1>, Y = <1 | down1 1>; uplink 0 carries 5/3,
    // P* = 3/5: Y gets 3/5; X 1/5 on every flow (its downlink share 3/5 over three flows).
    // All-ones (each side summing to 1): X = <1/2, 1/2 | 1>, uplink 0 carries 3/2, P* = 2/3:
    // Y gets 2/3; X's shares (1/3 of uplink 0, 2/3 of uplink 1 after stage 2, 2/3 of downlink
    // 2) split by max-min: 1/6 to each 0 -> 2 flow, the rest of downlink 2, 1/3, to 1 -> 2.
    let f = Fabric::uniform(3, 1.0);
    let cs = [
        coflow(1, &[(0, 2, 0.0), (0, 2, 0.0), (1, 2, 0.0)]),
        coflow(2, &[(0, 1, 0.0)]),
    ];
    let unit = once(SchedulerKind::Hug, &opts(NcVector::Flows), &f, &cs);
    close(&unit.per_coflow, &[vec![0.2, 0.2, 0.2], vec![0.6]]);
    let ones = once(SchedulerKind::Hug, &opts(NcVector::Ones), &f, &cs);
    close(
        &ones.per_coflow,
        &[vec![1.0 / 6.0, 1.0 / 6.0, 1.0 / 3.0], vec![2.0 / 3.0]],
    );
    // Rates with nothing measured yet: the one-unit default.
    let rates = once(SchedulerKind::Hug, &opts(NcVector::Rates), &f, &cs);
    close(&rates.per_coflow, &unit.per_coflow);
}

/// App. D.2 on a fabric: ports 0 and 1 (capacity 1) are the example's two links, port 2
/// (capacity 100) receives everything. Coflow A sends from ports 0 and 1, B too, C from 0.
fn d2(sent: [[f64; 2]; 3]) -> Vec<CoflowState> {
    vec![
        coflow(1, &[(0, 2, sent[0][0]), (1, 2, sent[0][1])]),
        coflow(2, &[(0, 2, sent[1][0]), (1, 2, sent[1][1])]),
        coflow(3, &[(0, 2, sent[2][0])]),
    ]
}

#[test]
fn measured_rates_give_app_d2_allocation() {
    // Over the first second the flows moved bytes in the proportions of App. D.2's vectors
    // (A = <1/2, 1>, B = <1, 1/6>, C = <1, 0>), so the estimates are those vectors and HUG
    // gives D.2's allocation: P* = 2/5, A <1/5, 2/5>, B <2/5, then up to its cap 2/5 on link
    // 2>, C 2/5 (the same rates as when the coflows report these vectors, tenant_reported.rs).
    let f = Fabric {
        up_bytes_per_s: vec![1.0, 1.0, 100.0],
        down_bytes_per_s: vec![1.0, 1.0, 100.0],
    };
    let decide_with = |kind: SchedulerKind, v: NcVector| {
        let mut s = build(kind, &opts(v));
        let mut r = Rates::default();
        for (now_s, cs) in [
            (0.0, d2([[0.0; 2]; 3])),
            (1.0, d2([[0.05, 0.1], [0.3, 0.05], [0.2, 0.0]])),
        ] {
            r.reset(&cs);
            let snap = Snapshot {
                now_s,
                fabric: &f,
                coflows: &cs,
            };
            s.allocate(&snap, &mut r);
        }
        r
    };
    let decide = |v: NcVector| decide_with(SchedulerKind::Hug, v);
    let est = decide(NcVector::Rates);
    close(
        &est.per_coflow,
        &[vec![0.2, 0.4], vec![0.4, 0.4], vec![0.4]],
    );
    // A's true progress by <1/2, 1>: 2/5. With one unit per flow A = B = <1, 1> and C = <1>:
    // P* = 1/3 on link 1, and A's true progress is 1/3.
    let progress_a = |r: &Rates| (r.per_coflow[0][0] / 0.5).min(r.per_coflow[0][1]);
    assert!((progress_a(&est) - 0.4).abs() < 1e-9);
    let unit = decide(NcVector::Flows);
    assert!((progress_a(&unit) - 1.0 / 3.0).abs() < 1e-9, "{unit:?}");
    // DRF on the same estimates: D.2's P* = 2/5 without stage 2 (B stays at 1/15 on link 2).
    let r = decide_with(SchedulerKind::Drf, NcVector::Rates);
    close(
        &r.per_coflow,
        &[vec![0.2, 0.4], vec![0.4, 1.0 / 15.0], vec![0.4]],
    );
}
