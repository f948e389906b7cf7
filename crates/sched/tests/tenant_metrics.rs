//! The multi-tenant measures (progress, isolation guarantee, utilization) on snapshots whose
//! values are derived by hand, and the recorder's time weighting.

use coflowkit_model::Fabric;
use coflowkit_sched::tenant::metrics::{observe, Observation, Recorder};
use coflowkit_sched::{
    build, CoflowState, FlowState, Rates, SchedOptions, SchedulerKind, Snapshot,
};

fn coflow(id: u64, flows: &[(u32, u32, f64)]) -> CoflowState {
    let flows: Vec<FlowState> = flows
        .iter()
        .map(|&(src, dst, b)| FlowState {
            src,
            dst,
            sent_bytes: 0.0,
            remaining_bytes: b,
        })
        .collect();
    CoflowState {
        id,
        arrival_s: 0.0,
        deadline_s: None,
        weight: 1.0,
        total_flows: flows.len(),
        sent_bytes: 0.0,
        max_flow_sent_bytes: 0.0,
        flows,
        dag: None,
    }
}

fn measured(kind: SchedulerKind, fabric: &Fabric, cs: &[CoflowState]) -> Observation {
    let snap = Snapshot {
        now_s: 0.0,
        fabric,
        coflows: cs,
    };
    let mut r = Rates::default();
    r.reset(cs);
    build(kind, &SchedOptions::default()).allocate(&snap, &mut r);
    observe(&snap, &r)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Two ports of capacity 6. A: 3 bytes 0->0 and 3 bytes 1->0 (vector up0, up1, down0 =
/// 1/2, 1/2, 1). B: 6 bytes 0->1 and 1 byte 1->1 (vector 6/7, 1/7, 1 on up0, up1, down1).
fn two_coflows() -> (Fabric, [CoflowState; 2]) {
    (
        Fabric::uniform(2, 6.0),
        [
            coflow(1, &[(0, 0, 3.0), (1, 0, 3.0)]),
            coflow(2, &[(0, 1, 6.0), (1, 1, 1.0)]),
        ],
    )
}

#[test]
fn hug_and_drf_give_both_coflows_p_star() {
    // P* = 14/19 (uplink 0 carries 1/2 + 6/7 of demand). Both progress 14/19, on their
    // downlinks of 6 B/s: 84/19 B/s. Rates 42/19 twice, 72/19 and 12/19: 168/19 B/s moved,
    // each on two links, over 4 links of 6: utilization 336/19 / 24 = 14/19.
    let (fabric, cs) = two_coflows();
    for kind in [SchedulerKind::Hug, SchedulerKind::Drf] {
        let o = measured(kind, &fabric, &cs);
        assert_eq!(o.coflows.len(), 2);
        for c in &o.coflows {
            assert!(close(c.progress, 14.0 / 19.0), "{kind}: {o:?}");
            assert!(
                close(c.bottleneck_bytes_per_s, 84.0 / 19.0),
                "{kind}: {o:?}"
            );
        }
        assert!(close(o.isolation_guarantee, 14.0 / 19.0), "{kind}: {o:?}");
        assert!(close(o.utilization, 14.0 / 19.0), "{kind}: {o:?}");
    }
}

#[test]
fn per_flow_fairness_fills_the_fabric_and_lowers_the_guarantee() {
    // Every port has two flows: each flow 3 B/s, every link full (utilization 1). A moves
    // 3, 3 on its uplinks and 6 on downlink 0 = exactly its vector: progress 1. B moves 3 of
    // its 6 bytes' share on uplink 0 (used/bytes = 1/2) and its bottleneck is downlink 1 (7
    // bytes over 6 B/s): progress 1/2 * 7/6 = 7/12, bandwidth 7/12 * 6 = 3.5 B/s.
    let (fabric, cs) = two_coflows();
    let o = measured(SchedulerKind::Fair, &fabric, &cs);
    assert!(close(o.coflows[0].progress, 1.0), "{o:?}");
    assert!(close(o.coflows[1].progress, 7.0 / 12.0), "{o:?}");
    assert!(close(o.coflows[1].bottleneck_bytes_per_s, 3.5), "{o:?}");
    assert!(close(o.isolation_guarantee, 7.0 / 12.0), "{o:?}");
    assert!(close(o.utilization, 1.0), "{o:?}");
    // An ordering policy serves one of two coflows on the same ports: the other's progress
    // is 0, and so is the isolation guarantee.
    let same = [coflow(1, &[(0, 1, 3.0)]), coflow(2, &[(0, 1, 3.0)])];
    let o = measured(SchedulerKind::Fifo, &fabric, &same);
    assert!(close(o.coflows[0].progress, 1.0), "{o:?}");
    assert_eq!(o.isolation_guarantee, 0.0, "{o:?}");
}

#[test]
fn drained_is_when_the_last_served_flow_would_end() {
    let (fabric, cs) = two_coflows();
    // Fair: 3 B/s each; B's 6-byte flow ends last, at 2 s.
    let o = measured(SchedulerKind::Fair, &fabric, &cs);
    assert!(close(o.drained_s, 2.0), "{o:?}");
}

fn obs(now_s: f64, ig: f64, util: f64, drained_s: f64) -> Observation {
    Observation {
        now_s,
        coflows: vec![coflowkit_sched::tenant::metrics::CoflowAt {
            id: 7,
            progress: ig,
            bottleneck_bytes_per_s: ig * 10.0,
        }],
        isolation_guarantee: ig,
        utilization: util,
        drained_s,
    }
}

#[test]
fn recorder_weights_by_time_and_skips_idle_gaps() {
    let mut r = Recorder::new();
    r.push(obs(0.0, 0.5, 0.5, 3.0)); // holds 0..2 (the next decision)
    r.push(obs(2.0, 1.0, 0.25, 4.0)); // holds 2..4 (drained; idle until 10)
    r.push(obs(10.0, 0.2, 1.0, 11.0)); // holds 10..11
    let m = r.finish();
    assert!(close(m.measured_s, 5.0), "{m:?}");
    assert!(
        close(m.isolation_guarantee_avg, (0.5 * 2.0 + 2.0 + 0.2) / 5.0),
        "{m:?}"
    );
    assert!(close(m.isolation_guarantee_min, 0.2), "{m:?}");
    assert!(close(m.utilization_avg, (1.0 + 0.5 + 1.0) / 5.0), "{m:?}");
    assert_eq!(m.decisions, 3);
    assert_eq!(m.series.len(), 3);
    assert_eq!(m.coflows.len(), 1);
    assert!(close(m.coflows[0].min_progress, 0.2));
    assert!(close(
        m.coflows[0].avg_bottleneck_bytes_per_s,
        10.0 * m.isolation_guarantee_avg
    ));
    assert!(close(m.first.unwrap().now_s, 0.0));
}
