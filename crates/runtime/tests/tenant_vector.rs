//! `Client::report_vector` and HUG's enforcement on real sockets: App. D.2's three tenants on
//! three hosts. Hosts 0 and 1 have 1 MB/s NICs and play the example's two links (their
//! uplinks); host 2 receives everything through a 100 MB/s NIC, so its downlink never binds.
//! Every coflow is non-clairvoyant and reports its vector: A = <1/2, 1>, B = <1, 1/6>,
//! C = <1, 0> (bytes per unit of progress sent from host 0 and host 1; host 2 receives their
//! sum). A lying A reports <1, 1>. A's progress is scored by its true vector on the rates its
//! two flows get.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use coflowkit_runtime::proto::{Empty, StatusReply};
use coflowkit_runtime::{CoflowOptions, CoordinatorConfig, HostDemand};
use coflowkit_sched::SchedulerKind;
use common::{bytes, token, Cluster};

const NIC: f64 = 1e6;
const BIG: f64 = 1e8;
const MB: usize = 1_000_000;

async fn status(cluster: &Cluster) -> StatusReply {
    let mut c = coflowkit_runtime::rpc::connect(&cluster.coordinator_addr.to_string(), &token())
        .await
        .unwrap();
    c.status(Empty {}).await.unwrap().into_inner()
}

/// Per object (= flow): (bytes sent, the coordinator's rate).
fn flows(s: &StatusReply) -> HashMap<String, (u64, f64)> {
    (s.coflows.iter().flat_map(|c| &c.flows))
        .map(|f| (f.data_id.clone(), (f.sent_bytes, f.bytes_per_s)))
        .collect()
}

/// What one run saw, per object, as fractions of a 1 MB/s NIC.
struct Seen {
    /// The coordinator's rates (Status), once every flow runs.
    handed: HashMap<String, f64>,
    /// Bytes really sent over the next second.
    measured: HashMap<String, f64>,
}

impl Seen {
    /// A's progress by its true vector <1/2, 1>.
    fn progress_a(&self, of: &HashMap<String, f64>) -> f64 {
        (of["a0"] / 0.5).min(of["a1"])
    }
}

async fn run(config: CoordinatorConfig, lie: bool) -> Seen {
    let cluster = Cluster::start_configured(config, &[NIC, NIC, BIG], |_| {});
    cluster.ready().await;
    let (h0, h1, h2) = (
        cluster.client(0).await,
        cluster.client(1).await,
        cluster.client(2).await,
    );
    let d = &cluster.daemon_addrs;
    let a = h0.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    let b = h0.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    let c = h0.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    let (a0, a1) = if lie { (1.0, 1.0) } else { (0.5, 1.0) };
    let vectors = [
        (a, vec![(0, a0), (1, a1)]),
        (b, vec![(0, 1.0), (1, 1.0 / 6.0)]),
        (c, vec![(0, 1.0)]),
    ];
    for (coflow, ups) in &vectors {
        let mut v: Vec<HostDemand> = (ups.iter())
            .map(|&(h, up)| HostDemand::new(&d[h], up, 0.0))
            .collect();
        let total: f64 = ups.iter().map(|u| u.1).sum();
        v.push(HostDemand::new(&d[2], 0.0, total));
        h0.report_vector(*coflow, &v).await.unwrap();
    }
    for (h, coflow, id, seed) in [
        (&h0, a, "a0", 1),
        (&h1, a, "a1", 2),
        (&h0, b, "b0", 3),
        (&h1, b, "b1", 4),
        (&h0, c, "c0", 5),
    ] {
        h.put(coflow, id, &bytes(seed, 3 * MB)).await.unwrap();
    }
    // The gets run in the background; the cluster is dropped before they end.
    for (coflow, id) in [(a, "a0"), (a, "a1"), (b, "b0"), (b, "b1"), (c, "c0")] {
        let h = h2.clone();
        tokio::spawn(async move { h.get(coflow, id).await.map(|_| ()) });
    }
    for _ in 0..150 {
        let f = flows(&status(&cluster).await);
        if f.len() == 5 && f.values().all(|&(sent, r)| sent > 0 && r > 0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Two ticks later every daemon paces by the decision with all five flows.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let (s1, t1) = (flows(&status(&cluster).await), Instant::now());
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (s2, t2) = (flows(&status(&cluster).await), Instant::now());
    let dt = (t2 - t1).as_secs_f64();
    assert_eq!(s1.len(), 5, "{s1:?}");
    Seen {
        handed: s1.iter().map(|(k, v)| (k.clone(), v.1 / NIC)).collect(),
        measured: (s2.iter())
            .map(|(k, v)| (k.clone(), (v.0 - s1[k].0) as f64 / dt / NIC))
            .collect(),
    }
}

fn config(kind: SchedulerKind, cooperative: bool) -> CoordinatorConfig {
    let mut c = CoordinatorConfig::new(token(), kind);
    c.options.hug_cooperative = cooperative;
    c
}

fn near(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: {got} vs {want}");
}

/// A's progress truthful and lying under `config`: (the coordinator's rates, the bytes moved).
async fn game(config: impl Fn() -> CoordinatorConfig) -> (Seen, Seen) {
    let c = config();
    let (truth, lie) = tokio::join!(run(config(), false), run(config(), true));
    // The numbers docs/hug.md quotes (`--nocapture`).
    eprintln!(
        "{} cooperative={}: A's progress truthful {:.4} (measured {:.4}), lying {:.4} \
         (measured {:.4})",
        c.scheduler,
        c.options.hug_cooperative,
        truth.progress_a(&truth.handed),
        truth.progress_a(&truth.measured),
        lie.progress_a(&lie.handed),
        lie.progress_a(&lie.measured)
    );
    (truth, lie)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_tenant_gains_nothing_under_hug() {
    let (truth, lie) = game(|| config(SchedulerKind::Hug, false)).await;
    // Truthful: P* = 2/5, A's flows at 1/5 and 2/5 of a NIC. Lying: P* = 1/3 and A capped at
    // 1/3 on both hosts, so its true progress falls to 1/3.
    near(truth.handed["a0"], 0.2, 0.01, "truthful a0");
    near(truth.handed["a1"], 0.4, 0.01, "truthful a1");
    // B's spare on host 1 up to its cap (2/5): that link ends at 4/5, not 1/5 + 1/15.
    near(truth.handed["b1"], 0.4, 0.01, "truthful b1");
    near(
        truth.progress_a(&truth.handed),
        0.4,
        0.01,
        "truthful progress",
    );
    near(
        lie.progress_a(&lie.handed),
        1.0 / 3.0,
        0.01,
        "lying progress",
    );
    assert!(lie.progress_a(&lie.handed) < truth.progress_a(&truth.handed) - 0.05);
    // The daemons pace what the coordinator hands out (loopback, loaded machine: 10%).
    for s in [&truth, &lie] {
        for (k, &r) in &s.handed {
            near(s.measured[k], r, 0.1, &format!("{k} measured"));
        }
    }
    assert!(lie.progress_a(&lie.measured) < truth.progress_a(&truth.measured));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_lie_pays_under_work_conserving_hug() {
    // The control: without the caps (cooperative HUG) A's lie takes half of host 1 (Lemma
    // D.3.1): its progress rises from 2/5 to 1/2.
    let (truth, lie) = game(|| config(SchedulerKind::Hug, true)).await;
    near(
        truth.progress_a(&truth.handed),
        0.4,
        0.01,
        "truthful progress",
    );
    near(lie.progress_a(&lie.handed), 0.5, 0.01, "lying progress");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drf_and_psp_with_reported_vectors() {
    // DRF: 2/5 truthful, 1/3 lying (strategy-proof too). PS-P reads only which hosts a vector
    // names: 1/3 of host 0 and 1/2 of host 1 either way, progress 1/2.
    let (truth, lie) = game(|| config(SchedulerKind::Drf, false)).await;
    near(truth.progress_a(&truth.handed), 0.4, 0.01, "drf truthful");
    near(lie.progress_a(&lie.handed), 1.0 / 3.0, 0.01, "drf lying");
    near(
        truth.handed["b1"],
        1.0 / 15.0,
        0.01,
        "drf leaves host 1's spare idle",
    );
    let (truth, lie) = game(|| config(SchedulerKind::Psp, false)).await;
    near(truth.progress_a(&truth.handed), 0.5, 0.01, "psp truthful");
    near(lie.progress_a(&lie.handed), 0.5, 0.01, "psp lying");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemons_enforce_hugs_guarantees_and_caps_locally() {
    // `tenant_local`: the coordinator lists every flow to its daemon at the NIC's rate
    // (unpaced; a daemon that ignored the caps would send each at 1 MB/s) and pushes P* with
    // each coflow's reservation and cap per uplink; the daemons' own max-min under them must
    // give HUG's shares: host 0 A 1/5, B 2/5, C 2/5; host 1 A 2/5, B 2/5 (capped).
    let mut c = config(SchedulerKind::Hug, false);
    c.tenant_local = true;
    let seen = run(c, false).await;
    eprintln!("local enforcement, measured: {:?}", seen.measured);
    let want = [
        ("a0", 0.2),
        ("a1", 0.4),
        ("b0", 0.4),
        ("b1", 0.4),
        ("c0", 0.4),
    ];
    for (k, w) in want {
        near(seen.measured[k], w, 0.06, &format!("{k} measured"));
    }
}
