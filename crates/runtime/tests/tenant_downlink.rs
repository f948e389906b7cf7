//! HUG's caps on receivers' downlinks, enforced by the senders (`coordinator --tenant-local`,
//! coordinator/tenant_caps.rs): three hosts with 1 MB/s NICs on loopback. Coflow A reads 3 MB
//! from host 0 and 3 MB from host 1 at host 2; coflow B reads 3 MB from host 0 at host 1.
//! MADD vectors: A = <1/2, 1/2 | downlink 2: 1>, B = <1 | downlink 1: 1>; uplink 0 carries
//! 3/2, so P* = 2/3 (Eq 7.2), A's cap is 2/3 on every link and B's 2/3. HUG's allocation: A
//! 1/3 from each host (its downlink 2 holds it at 2/3 in all), B 2/3. Enforcing uplinks only,
//! host 1 would let A's flow rise to its uplink cap 2/3 and A would take 1 MB/s of host 2's
//! downlink, past its cap.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use coflowkit_runtime::proto::{Empty, StatusReply};
use coflowkit_runtime::{CoflowOptions, CoordinatorConfig};
use coflowkit_sched::SchedulerKind;
use common::{bytes, token, Cluster};

const NIC: f64 = 1e6;
const MB: usize = 1_000_000;

async fn sent(cluster: &Cluster) -> HashMap<String, u64> {
    let mut c = coflowkit_runtime::rpc::connect(&cluster.coordinator_addr.to_string(), &token())
        .await
        .unwrap();
    let s: StatusReply = c.status(Empty {}).await.unwrap().into_inner();
    (s.coflows.iter().flat_map(|c| &c.flows))
        .filter(|f| f.sent_bytes > 0)
        .map(|f| (f.data_id.clone(), f.sent_bytes))
        .collect()
}

/// Per object, the bytes it really moved over one second, as a fraction of a NIC.
async fn run(local: bool) -> HashMap<String, f64> {
    let mut config = CoordinatorConfig::new(token(), SchedulerKind::Hug);
    config.tenant_local = local;
    let cluster = Cluster::start_configured(config, &[NIC; 3], |_| {});
    cluster.ready().await;
    let (h0, h1, h2) = (
        cluster.client(0).await,
        cluster.client(1).await,
        cluster.client(2).await,
    );
    let a = h0.register(CoflowOptions::flows(2)).await.unwrap();
    let b = h0.register(CoflowOptions::flows(1)).await.unwrap();
    h0.put(a, "a0", &bytes(1, 3 * MB)).await.unwrap();
    h1.put(a, "a1", &bytes(2, 3 * MB)).await.unwrap();
    h0.put(b, "b0", &bytes(3, 3 * MB)).await.unwrap();
    // The gets run in the background; the cluster is dropped before they end.
    for (h, c, id) in [(&h2, a, "a0"), (&h2, a, "a1"), (&h1, b, "b0")] {
        let h = h.clone();
        tokio::spawn(async move { h.get(c, id).await.map(|_| ()) });
    }
    for _ in 0..150 {
        if sent(&cluster).await.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Two ticks later every daemon paces by the decision with all three flows.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let (s1, t1) = (sent(&cluster).await, Instant::now());
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (s2, t2) = (sent(&cluster).await, Instant::now());
    let dt = (t2 - t1).as_secs_f64();
    assert_eq!(s1.len(), 3, "{s1:?}");
    (s2.iter())
        .map(|(k, &v)| (k.clone(), (v - s1[k]) as f64 / dt / NIC))
        .collect()
}

fn near(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() <= 0.06, "{what}: {got} vs {want}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn senders_keep_a_coflow_within_its_downlink_cap() {
    // The coordinator's rates (central) and the daemons' local fill under pushed caps must
    // both hold A to 2/3 of host 2's downlink.
    for local in [false, true] {
        let m = run(local).await;
        eprintln!("tenant_local={local}: measured {m:?}");
        near(m["a0"], 1.0 / 3.0, &format!("a0, local={local}"));
        near(m["a1"], 1.0 / 3.0, &format!("a1, local={local}"));
        near(m["b0"], 2.0 / 3.0, &format!("b0, local={local}"));
        near(
            m["a0"] + m["a1"],
            2.0 / 3.0,
            &format!("A into host 2, local={local}"),
        );
    }
}
