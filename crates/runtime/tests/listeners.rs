//! Every listener's limits and timeouts: a client that stops after the HTTP/2 preface, too
//! many connections from one peer, all counted in /metrics; normal service afterwards.

mod common;

use std::time::Duration;

use coflowkit_runtime::listen::Limits;
use coflowkit_runtime::{coordinator, CoordinatorConfig};
use coflowkit_sched::SchedulerKind;
use common::{bytes, loopback, metrics, token, Cluster};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn value(page: &str, series: &str) -> f64 {
    page.lines()
        .find_map(|l| l.strip_prefix(series))
        .unwrap_or_else(|| panic!("no {series} in\n{page}"))
        .trim()
        .parse()
        .unwrap()
}

/// Read until the server closes (Ok(bytes read)) or `within` passes (Err).
async fn closed_within(s: &mut TcpStream, within: Duration) -> Result<usize, ()> {
    let mut n = 0;
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return n,
                Ok(k) => n += k,
            }
        }
    })
    .await
    .map_err(|_| ())
}

fn coordinator_with(limits: Limits) -> coflowkit_runtime::Running {
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Fair);
    cfg.metrics = Some(loopback());
    cfg.limits = limits;
    coordinator::spawn(cfg, loopback()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_sends_only_the_http2_preface_is_cut_off_at_the_handshake_deadline() {
    let c = coordinator_with(Limits {
        handshake: Duration::from_millis(400),
        ..Limits::default()
    });
    let mut s = TcpStream::connect(c.addr()).await.unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    closed_within(&mut s, Duration::from_secs(5))
        .await
        .expect("the half-open connection was kept");
    let page = metrics(c.metrics_addr().unwrap()).await;
    let n = value(
        &page,
        "coflowkit_connections_timed_out_total{listener=\"control\"}",
    );
    assert_eq!(n, 1.0, "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_per_peer_limit_are_closed_at_once_and_counted() {
    let c = coordinator_with(Limits {
        max_per_peer: 3,
        ..Limits::default()
    });
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(c.addr()).await.unwrap());
    }
    let mut extra = TcpStream::connect(c.addr()).await.unwrap();
    // Closed without a word, long before the handshake deadline.
    let n = closed_within(&mut extra, Duration::from_secs(2)).await;
    assert_eq!(n, Ok(0));
    // The first three are still open (the server wrote its HTTP/2 settings to them).
    let mut b = [0u8; 9];
    held[0].read_exact(&mut b).await.unwrap();
    let page = metrics(c.metrics_addr().unwrap()).await;
    let series = "coflowkit_connections_refused_total{listener=\"control\",reason=\"peer_limit\"}";
    assert_eq!(value(&page, series), 1.0, "{page}");
    assert_eq!(
        value(&page, "coflowkit_connections_open{listener=\"control\"}"),
        3.0
    );
    // Freed places are taken again.
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let page = metrics(c.metrics_addr().unwrap()).await;
    assert_eq!(
        value(&page, "coflowkit_connections_open{listener=\"control\"}"),
        0.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_over_its_limits_still_serves_once_they_leave() {
    let cluster = Cluster::start_with(SchedulerKind::Fair, &[20e6, 20e6], |d| {
        d.limits.max_connections = 4;
        d.limits.idle = Duration::from_millis(500);
    });
    cluster.ready().await;
    let dmn = cluster.daemon_addrs[0].clone();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(&dmn).await.unwrap());
    }
    let mut extra = TcpStream::connect(&dmn).await.unwrap();
    assert_eq!(
        closed_within(&mut extra, Duration::from_secs(2)).await,
        Ok(0)
    );
    // The silent ones are refused at the request deadline or the idle limit, whichever
    // is first; either way they go.
    for s in &mut held {
        closed_within(s, Duration::from_secs(12))
            .await
            .expect("an idle data connection was kept");
    }
    let a = cluster.client(0).await;
    let b = cluster.client(1).await;
    let id = a
        .register(coflowkit_runtime::CoflowOptions::flows(1))
        .await
        .unwrap();
    let data = bytes(3, 200_000);
    a.put(id, "x", &data).await.unwrap();
    assert_eq!(b.get(id, "x").await.unwrap(), data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_past_the_daemon_limit_are_refused_and_known_daemons_come_back() {
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Fair);
    cfg.max_daemons = 2;
    let c = coordinator::spawn(cfg, loopback()).unwrap();
    let mut rpc = coflowkit_runtime::rpc::connect(&c.addr().to_string(), &token())
        .await
        .unwrap();
    rpc.register_daemon(req("a:1")).await.unwrap();
    rpc.register_daemon(req("b:1")).await.unwrap();
    let e = rpc.register_daemon(req("c:1")).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
    assert!(e.message().contains("at most 2 daemons"), "{e}");
    // A known daemon re-registers (after a restart of its own) as before.
    rpc.register_daemon(req("a:1")).await.unwrap();
}

/// A daemon's registration at `addr` with a 1 MB/s NIC and nothing stored.
fn req(addr: &str) -> coflowkit_runtime::proto::RegisterDaemonRequest {
    coflowkit_runtime::proto::RegisterDaemonRequest {
        protocol_version: coflowkit_runtime::PROTOCOL_VERSION,
        addr: addr.into(),
        nic_bytes_per_s: 1e6,
        ..Default::default()
    }
}

/// Daemons that never follow their rate stream are forgotten after the timeout, which frees
/// their places under the limit (and their ports) for new ones.
#[tokio::test]
async fn daemons_that_stay_disconnected_are_forgotten_and_free_their_places() {
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Fair);
    cfg.max_daemons = 2;
    cfg.forget_daemons_after = Some(Duration::from_millis(200));
    let c = coordinator::spawn(cfg, loopback()).unwrap();
    let mut rpc = coflowkit_runtime::rpc::connect(&c.addr().to_string(), &token())
        .await
        .unwrap();
    rpc.register_daemon(req("a:1")).await.unwrap();
    rpc.register_daemon(req("b:1")).await.unwrap();
    let refused = rpc.register_daemon(req("c:1")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    // Neither subscribes to its rates: both are forgotten, and c takes a freed port.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let c_port = loop {
        match rpc.register_daemon(req("c:1")).await {
            Ok(r) => break r.into_inner().port,
            Err(e) => assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}"),
        }
        assert!(std::time::Instant::now() < deadline, "never forgotten");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(c_port <= 1, "the fabric did not grow: port {c_port}");
    let status = rpc
        .status(coflowkit_runtime::proto::Empty {})
        .await
        .unwrap()
        .into_inner();
    let addrs: Vec<_> = status.daemons.iter().map(|d| d.addr.as_str()).collect();
    assert!(addrs.contains(&"c:1") && addrs.len() <= 2, "{addrs:?}");
}
