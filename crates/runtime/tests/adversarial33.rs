//! The coordinator and daemon against the findings of adversarial pass 33 (servers): a NIC rate
//! of 1.7e308 (B8), objects without a bound (B7), a daemon's many rate subscriptions (B20), a
//! peer that answers HTTP/2 pings but never a call (B5), a bad `--advertise` or `--data-dir`
//! (B19).

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use coflowkit_runtime::coordinator::state::RegistryLimits;
use coflowkit_runtime::proto::{
    PutDone, RegisterCoflowRequest, RegisterDaemonRequest, StoredObject, Subscribe,
};
use coflowkit_runtime::{coordinator, daemon, rpc, CoordinatorConfig, DaemonConfig};
use coflowkit_runtime::{Running, PROTOCOL_VERSION};
use coflowkit_sched::SchedulerKind;
use common::{loopback, metrics, token};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn start(registry: RegistryLimits) -> Running {
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Varys);
    cfg.registry = registry;
    cfg.metrics = Some(loopback());
    coordinator::spawn(cfg, loopback()).unwrap()
}

fn daemon_req(addr: &str, nic: f64) -> RegisterDaemonRequest {
    RegisterDaemonRequest {
        protocol_version: PROTOCOL_VERSION,
        addr: addr.into(),
        nic_bytes_per_s: nic,
        ..Default::default()
    }
}

/// B8: a NIC rate above 1 Pbit/s is refused naming the field (1.7e308 was accepted and every
/// flow to that daemon was paced at 0 for ever); 1 Pbit/s itself is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nic_rate_above_one_petabit_is_refused_by_name() {
    let c = start(RegistryLimits::default());
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    for nic in [1.7e308, 1.25e14 * 1.001] {
        let e = rpc
            .register_daemon(daemon_req("10.3.0.1:1", nic))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains("nic_bytes_per_s"), "{}", e.message());
        assert!(e.message().contains("1 Pbit/s"), "{}", e.message());
    }
    rpc.register_daemon(daemon_req("10.3.0.1:1", 1.25e14))
        .await
        .unwrap();
}

/// B7: objects reported by a daemon are bounded per daemon and per coflow, refused with
/// RESOURCE_EXHAUSTED naming the flag, and counted in /metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reported_objects_are_bounded_by_name_and_counted() {
    let c = start(RegistryLimits {
        max_objects_per_coflow: 3,
        max_objects_per_daemon: 4,
        ..Default::default()
    });
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    for d in ["10.4.0.1:1", "10.4.0.2:1"] {
        rpc.register_daemon(daemon_req(d, 1e9)).await.unwrap();
    }
    let reg = RegisterCoflowRequest {
        weight: 1.0,
        clairvoyant: true,
        ..Default::default()
    };
    let a = rpc
        .register_coflow(reg.clone())
        .await
        .unwrap()
        .into_inner()
        .coflow;
    let b = rpc.register_coflow(reg).await.unwrap().into_inner().coflow;
    let put = |daemon: &str, coflow: u64, id: &str| PutDone {
        daemon: daemon.into(),
        object: Some(StoredObject {
            coflow,
            data_id: id.into(),
            size_bytes: 1,
            ..Default::default()
        }),
    };
    for id in ["x", "y", "z"] {
        rpc.report_put(put("10.4.0.1:1", a, id)).await.unwrap();
    }
    let e = rpc.report_put(put("10.4.0.2:1", a, "w")).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert!(
        e.message().contains("--max-objects-per-coflow"),
        "{}",
        e.message()
    );
    rpc.report_put(put("10.4.0.1:1", b, "x")).await.unwrap();
    let e = rpc.report_put(put("10.4.0.1:1", b, "y")).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert!(
        e.message().contains("--max-objects-per-daemon"),
        "{}",
        e.message()
    );
    let m = metrics(c.metrics_addr().unwrap()).await;
    for limit in ["objects_per_coflow", "objects_per_daemon"] {
        let line = format!("coflowkit_requests_refused_total{{limit=\"{limit}\"}} 1");
        assert!(m.contains(&line), "{line} not in\n{m}");
    }
}

/// B20: a daemon's new rate subscription ends its previous one (10,000 subscriptions for one
/// daemon were all kept, about 6 KB each); the new one goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_rate_subscription_ends_the_previous_one() {
    let c = start(RegistryLimits::default());
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    rpc.register_daemon(daemon_req("10.5.0.1:1", 1e9))
        .await
        .unwrap();
    let sub = || Subscribe {
        daemon: "10.5.0.1:1".into(),
    };
    let mut streams = Vec::new();
    for _ in 0..50 {
        streams.push(rpc.subscribe_rates(sub()).await.unwrap().into_inner());
    }
    let mut last = streams.pop().unwrap();
    for (i, s) in streams.iter_mut().enumerate() {
        let end = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match s.message().await {
                    Ok(Some(_)) => continue,
                    other => return other.map(|_| ()),
                }
            }
        })
        .await;
        assert!(end.is_ok(), "subscription {i} was not ended");
    }
    // The latest one still gets tables (the current one at once).
    let got = tokio::time::timeout(Duration::from_secs(10), last.message()).await;
    assert!(
        matches!(got, Ok(Ok(Some(_)))),
        "latest subscription: {got:?}"
    );
}

/// An HTTP/2 server that answers pings (hyper does) but never a call; counts connections.
async fn silent_h2_peer() -> (SocketAddr, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let conns = Arc::new(AtomicUsize::new(0));
    let n = conns.clone();
    tokio::spawn(async move {
        loop {
            let Ok((sock, _)) = l.accept().await else {
                return;
            };
            n.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(|_req| {
                    std::future::pending::<Result<hyper::Response<String>, std::convert::Infallible>>(
                    )
                });
                let _ =
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(hyper_util::rt::TokioIo::new(sock), svc)
                        .await;
            });
        }
    });
    (addr, conns)
}

/// B5: a daemon whose coordinator keeps the connection alive but never answers the
/// registration gives up after its deadline and retries (it stayed silent on one connection
/// for ever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_that_gets_no_answer_is_retried_after_its_deadline() {
    let (peer, conns) = silent_h2_peer().await;
    let mut cfg = DaemonConfig::new(peer.to_string(), token(), 1e9);
    cfg.register_deadline = Duration::from_millis(500);
    let _d = daemon::spawn(cfg, loopback()).unwrap();
    let t0 = std::time::Instant::now();
    while conns.load(Ordering::SeqCst) < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "{} connections after 20 s: the registration waits for ever",
            conns.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// B19: an advertised address that is not HOST:PORT, too long, or not printable, and a data
/// dir that is a file, are refused by the settings' checks (before the daemon binds or says it
/// serves), naming what is wrong.
#[test]
fn bad_advertise_and_data_dir_are_refused_before_serving() {
    let cfg = |advertise: &str| {
        let mut c = DaemonConfig::new("127.0.0.1:1".into(), token(), 1e9);
        c.advertise = advertise.into();
        c
    };
    for (a, says) in [
        ("host", "HOST:PORT"),
        ("host:0", "HOST:PORT"),
        (":7401", "HOST:PORT"),
        ("host:99999", "HOST:PORT"),
        ("\u{1b}[31mred:1", "printable"),
        ("a b:1", "printable"),
    ] {
        let e = cfg(a).validate().unwrap_err().to_string();
        assert!(e.contains(says), "{a:?}: {e}");
        assert!(!e.contains('\u{1b}'), "{a:?}: {e:?}");
    }
    let long = format!("{}:1", "a".repeat(600));
    let e = cfg(&long).validate().unwrap_err().to_string();
    assert!(e.contains("at most 512"), "{e}");
    for ok in ["10.0.0.7:7401", "[::1]:7401", "host.example:1"] {
        cfg(ok).validate().unwrap();
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut c = cfg("10.0.0.7:7401");
    c.data_dir = Some(file.path().to_path_buf());
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("not a directory"), "{e}");
    c.data_dir = Some("/dev/null".into());
    assert!(c.validate().is_err());
}

/// B20, the stream limit: the coordinator's first SETTINGS frame announces at most
/// `MAX_STREAMS_PER_CONNECTION` concurrent streams (HTTP/2 peers then queue the rest; it was
/// unlimited, so one connection could hold any number of calls).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_coordinator_announces_its_stream_limit_per_connection() {
    let c = start(RegistryLimits::default());
    let mut s = tokio::net::TcpStream::connect(c.addr()).await.unwrap();
    // Client preface and an empty SETTINGS frame (RFC 9113 §3.4).
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    let read = async {
        loop {
            let mut head = [0u8; 9];
            s.read_exact(&mut head).await.unwrap();
            let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
            let mut payload = vec![0u8; len];
            s.read_exact(&mut payload).await.unwrap();
            // A SETTINGS frame (type 4) that is not an acknowledgement (flag 1).
            if head[3] == 4 && head[4] & 1 == 0 {
                return payload
                    .chunks_exact(6)
                    .map(|e| {
                        let id = u16::from_be_bytes([e[0], e[1]]);
                        (id, u32::from_be_bytes([e[2], e[3], e[4], e[5]]))
                    })
                    .collect::<Vec<_>>();
            }
        }
    };
    let settings = tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("no SETTINGS frame within 10 s");
    // SETTINGS_MAX_CONCURRENT_STREAMS is 0x3.
    let max = settings.iter().find(|(id, _)| *id == 3).map(|(_, v)| *v);
    assert_eq!(
        max,
        Some(coordinator::MAX_STREAMS_PER_CONNECTION),
        "{settings:?}"
    );
    assert_eq!(coordinator::MAX_STREAMS_PER_CONNECTION, 1024);
}

/// B9, the last path: a daemon whose re-registration carries more objects than the (restarted)
/// coordinator allows per daemon registers again without them and reports them one by one, so
/// it is not lost to the scheduler; the coordinator keeps as many as its limit and counts the
/// rest as refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_refused_for_its_objects_is_made_again_without_them() {
    let mut cluster = common::Cluster::start(SchedulerKind::Fair, &[1e9]);
    cluster.ready().await;
    let client = cluster.client(0).await;
    let cf = client
        .register(coflowkit_runtime::CoflowOptions::flows(1))
        .await
        .unwrap();
    for i in 0..6 {
        let id = format!("object-{i}");
        client.put(cf, &id, &common::bytes(i, 1000)).await.unwrap();
    }
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Fair);
    cfg.registry.max_objects_per_daemon = 3;
    cfg.metrics = Some(loopback());
    cluster.restart_coordinator_with(cfg);
    cluster.ready().await;
    let coord = cluster.coordinator.as_ref().unwrap();
    let mut rpc = rpc::connect(&coord.addr().to_string(), &token())
        .await
        .unwrap();
    // The objects are reported after the registration: wait for the three kept.
    let mut objects = 0;
    for _ in 0..200 {
        let s = rpc
            .status(coflowkit_runtime::proto::Empty {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(s.daemons.len(), 1, "{:?}", s.daemons);
        assert!(s.daemons[0].connected);
        objects = s.daemons[0].objects;
        if objects == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(objects, 3, "objects the coordinator kept");
    let m = metrics(coord.metrics_addr().unwrap()).await;
    assert!(
        m.lines().any(|l| l
            .starts_with("coflowkit_requests_refused_total{limit=\"objects_per_daemon\"}")
            && !l.ends_with(" 0")),
        "{m}"
    );
}
