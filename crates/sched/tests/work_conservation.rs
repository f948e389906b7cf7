//! Work conservation: after a decision, no unfinished flow has spare capacity at both its ports
//! (for every policy that promises it), and no port carries more than its capacity.

use coflowkit_model::Fabric;
use coflowkit_sched::{
    build, CoflowState, FlowState, Rates, SchedOptions, SchedulerKind, Snapshot,
};
use proptest::prelude::*;

fn snapshot() -> impl Strategy<Value = (Fabric, Vec<CoflowState>)> {
    (2u32..7).prop_flat_map(|ports| {
        let flow = (0..ports, 0..ports, 0.01f64..8.0, 0.0f64..4.0).prop_map(
            |(src, dst, remaining, sent)| FlowState {
                src,
                dst,
                sent_bytes: sent,
                remaining_bytes: remaining,
            },
        );
        let coflow = prop::collection::vec(flow, 1..6);
        let caps = prop::collection::vec(0.5f64..2.0, ports as usize);
        (prop::collection::vec(coflow, 1..7), caps).prop_map(|(cs, caps)| {
            let coflows = cs
                .into_iter()
                .enumerate()
                .map(|(i, flows)| CoflowState {
                    id: i as u64,
                    arrival_s: i as f64 * 0.1,
                    deadline_s: None,
                    weight: 1.0,
                    total_flows: flows.len(),
                    sent_bytes: flows.iter().map(|f| f.sent_bytes).sum(),
                    max_flow_sent_bytes: flows.iter().map(|f| f.sent_bytes).fold(0.0, f64::max),
                    dag: None,
                    flows,
                })
                .collect();
            (
                Fabric {
                    up_bytes_per_s: caps.clone(),
                    down_bytes_per_s: caps,
                },
                coflows,
            )
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn decisions_are_feasible_and_work_conserving((fabric, coflows) in snapshot()) {
        for &kind in SchedulerKind::ALL {
            let mut sched = build(kind, &SchedOptions::default());
            let mut rates = Rates::default();
            rates.reset(&coflows);
            sched.allocate(&Snapshot { now_s: 1.0, fabric: &fabric, coflows: &coflows }, &mut rates);
            let p = fabric.ports();
            let (mut up, mut down) = (vec![0.0; p], vec![0.0; p]);
            for (c, r) in coflows.iter().zip(&rates.per_coflow) {
                for (f, &x) in c.flows.iter().zip(r) {
                    prop_assert!(x >= 0.0 && x.is_finite());
                    up[f.src as usize] += x;
                    down[f.dst as usize] += x;
                }
            }
            for i in 0..p {
                prop_assert!(up[i] <= fabric.up_bytes_per_s[i] * (1.0 + 1e-9), "{kind}: uplink {i}");
                prop_assert!(down[i] <= fabric.down_bytes_per_s[i] * (1.0 + 1e-9), "{kind}: downlink {i}");
            }
            for c in &coflows {
                for f in &c.flows {
                    let spare_up = fabric.up_bytes_per_s[f.src as usize] - up[f.src as usize];
                    let spare_down = fabric.down_bytes_per_s[f.dst as usize] - down[f.dst as usize];
                    prop_assert!(
                        spare_up.min(spare_down) < 1e-6,
                        "{kind} leaves flow {}->{} idle with {spare_up} up and {spare_down} down spare",
                        f.src, f.dst
                    );
                }
            }
        }
    }
}
