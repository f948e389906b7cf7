//! `--scheduler hug|drf|psp` in the real system: a coordinator and four daemons on loopback
//! sockets, two coflows whose gets run at once, and the per-flow rates the coordinator hands
//! out (its Status RPC) equal those the shared policy gives the simulator for the same flows,
//! and the thesis' shares derived by hand (P* = 14/19 for HUG and DRF, halves for PS-P).

mod common;

use std::collections::HashMap;
use std::time::Duration;

use coflowkit_model::Fabric;
use coflowkit_runtime::proto::{Empty, StatusReply};
use coflowkit_runtime::CoflowOptions;
use coflowkit_sched::{
    build, CoflowState, FlowState, Rates, SchedOptions, SchedulerKind, Snapshot,
};
use common::{bytes, Cluster};

/// 1 MB/s NICs: a few MB take seconds, so the rates are read while every flow runs.
const NIC: f64 = 1e6;
const MB: usize = 1_000_000;

async fn status(cluster: &Cluster) -> StatusReply {
    let mut c =
        coflowkit_runtime::rpc::connect(&cluster.coordinator_addr.to_string(), &common::token())
            .await
            .unwrap();
    c.status(Empty {}).await.unwrap().into_inner()
}

/// The coflows of a status with every flow started, as the scheduler's snapshot (ports by the
/// coordinator's numbering, remaining = size - sent), and the coordinator's rates alike.
fn snapshot_of(s: &StatusReply) -> (Vec<CoflowState>, Vec<Vec<f64>>) {
    let port: HashMap<&str, u32> = s
        .daemons
        .iter()
        .map(|d| (d.addr.as_str(), d.port))
        .collect();
    let mut cs = Vec::new();
    let mut handed = Vec::new();
    for c in &s.coflows {
        let flows: Vec<FlowState> = c
            .flows
            .iter()
            .map(|f| FlowState {
                src: port[f.src.as_str()],
                dst: port[f.dst.as_str()],
                sent_bytes: f.sent_bytes as f64,
                remaining_bytes: (f.size_bytes - f.sent_bytes) as f64,
            })
            .collect();
        handed.push(c.flows.iter().map(|f| f.bytes_per_s).collect());
        cs.push(CoflowState {
            id: c.id,
            arrival_s: 0.0,
            deadline_s: None,
            weight: 1.0,
            total_flows: flows.len(),
            sent_bytes: 0.0,
            max_flow_sent_bytes: 0.0,
            flows,
            dag: None,
        });
    }
    (cs, handed)
}

/// A: 3 MB from host 0 and 3 MB from host 1 into host 2. B: 6 MB from host 0 and 1 MB from
/// host 1 into host 3. Uplink 0 carries the most demand (1/2 + 6/7 of it per unit progress).
async fn run(kind: SchedulerKind) {
    let cluster = Cluster::start(kind, &[NIC; 4]);
    cluster.ready().await;
    let (h0, h1) = (cluster.client(0).await, cluster.client(1).await);
    let a = h0.register(CoflowOptions::flows(2)).await.unwrap();
    let b = h0.register(CoflowOptions::flows(2)).await.unwrap();
    h0.put(a, "a0", &bytes(1, 3 * MB)).await.unwrap();
    h1.put(a, "a1", &bytes(2, 3 * MB)).await.unwrap();
    h0.put(b, "b0", &bytes(3, 6 * MB)).await.unwrap();
    h1.put(b, "b1", &bytes(4, MB)).await.unwrap();
    let (h2, h3) = (cluster.client(2).await, cluster.client(3).await);
    // The gets run in the background; the cluster is dropped before they end.
    for (h, c, id) in [
        (&h2, a, "a0"),
        (&h2, a, "a1"),
        (&h3, b, "b0"),
        (&h3, b, "b1"),
    ] {
        let h = h.clone();
        tokio::spawn(async move { h.get(c, id).await.map(|_| ()) });
    }
    // Every flow started, rated, and a decision taken after its first progress reports.
    let mut s = status(&cluster).await;
    for _ in 0..100 {
        let flows: Vec<_> = s.coflows.iter().flat_map(|c| &c.flows).collect();
        if flows.len() == 4
            && flows
                .iter()
                .all(|f| f.bytes_per_s > 0.0 && f.sent_bytes > 0)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        s = status(&cluster).await;
    }
    // Two ticks (100 ms each) later the rates follow the reported bytes.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let s = status(&cluster).await;
    let (cs, handed) = snapshot_of(&s);
    assert_eq!(
        cs.iter().map(|c| c.flows.len()).sum::<usize>(),
        4,
        "{kind}: {s:?}"
    );

    // The simulator's allocation of the same flows: the same policy code, called as the
    // simulator calls it.
    let fabric = Fabric::uniform(4, NIC);
    let mut want = Rates::default();
    want.reset(&cs);
    build(kind, &SchedOptions::default()).allocate(
        &Snapshot {
            now_s: 0.0,
            fabric: &fabric,
            coflows: &cs,
        },
        &mut want,
    );
    for (got, want) in handed.iter().zip(&want.per_coflow) {
        for (g, w) in got.iter().zip(want) {
            // The coordinator decided on bytes reported up to a tick earlier than this
            // status's; the allocation barely moves with them (MADD keeps a coflow's ratios).
            assert!(
                (g - w).abs() <= 0.01 * NIC,
                "{kind}: coordinator {handed:?} vs policy {:?}",
                want
            );
        }
    }
    // And by hand, coflow A's flows then B's (sizes told apart within each coflow).
    let by_size = |c: usize| -> Vec<(u64, f64)> {
        let mut v: Vec<_> = (s.coflows[c].flows.iter())
            .map(|f| (f.size_bytes, f.bytes_per_s / NIC))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    };
    let (ra, rb) = (by_size(0), by_size(1));
    let expect: [f64; 4] = match kind {
        // P* = 14/19: A gets 14/19 of downlink 2 split evenly, B 14/19 of downlink 3 split
        // 6:1 (b1 is the small flow).
        SchedulerKind::Hug | SchedulerKind::Drf => {
            [7.0 / 19.0, 7.0 / 19.0, 2.0 / 19.0, 12.0 / 19.0]
        }
        // PS-P: each coflow half of each uplink (both use both), all of its own downlink;
        // a coflow's part of a port is split by bytes and a flow gets the smaller of its two
        // ends' parts: a0, a1 min(1/2, 1/2) = 1/2; b1 min(1/2, 1/7 of downlink 3) = 1/7;
        // b0 min(1/2, 6/7) = 1/2 (uplink 0 full).
        _ => [0.5, 0.5, 1.0 / 7.0, 0.5],
    };
    let got = [ra[0].1, ra[1].1, rb[0].1, rb[1].1];
    for (g, e) in got.iter().zip(expect) {
        assert!(
            (g - e).abs() < 0.02,
            "{kind}: rates {got:?} of the NIC, expected {expect:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinator_hands_out_hugs_allocation() {
    run(SchedulerKind::Hug).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinator_hands_out_drfs_allocation() {
    run(SchedulerKind::Drf).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinator_hands_out_psps_allocation() {
    run(SchedulerKind::Psp).await;
}
