//! Failures and abuse on loopback: dead daemons, a restarted coordinator, malformed and
//! oversized requests, wrong tokens, memory pressure.

mod common;

use std::time::Duration;

use coflowkit_runtime::auth::AddToken;
use coflowkit_runtime::proto::coordinator_client::CoordinatorClient;
use coflowkit_runtime::proto::{Empty, RegisterCoflowRequest, RegisterDaemonRequest, StoredObject};
use coflowkit_runtime::{Client, ClientConfig, CoflowOptions, Error, Token};
use coflowkit_sched::SchedulerKind;
use common::{bytes, token, Cluster};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_daemon_fails_its_gets_by_name_while_other_coflows_finish() {
    let mut cluster = Cluster::start(SchedulerKind::Fair, &[100e3, 5e6, 5e6]);
    cluster.ready().await;
    let a = cluster.client(0).await;
    let b = cluster.client(1).await;
    let rx = cluster.client(2).await;
    let c1 = a.register(CoflowOptions::flows(1)).await.unwrap();
    let c2 = b.register(CoflowOptions::flows(1)).await.unwrap();
    a.put(c1, "slow", &bytes(1, 400_000)).await.unwrap();
    let data2 = bytes(2, 300_000);
    b.put(c2, "fine", &data2).await.unwrap();
    let (r1, r2) = (rx.clone(), rx.clone());
    let g1 = tokio::spawn(async move { r1.get(c1, "slow").await });
    let g2 = tokio::spawn(async move { r2.get(c2, "fine").await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let dead = cluster.daemon_addrs[0].clone();
    cluster.daemons[0].take().unwrap().kill();
    let e = g1.await.unwrap().unwrap_err();
    match &e {
        Error::DaemonFailed {
            host, got, size, ..
        } => {
            assert_eq!(host, &dead);
            assert!(Some(*got) < *size);
        }
        other => panic!("expected DaemonFailed, got {other}"),
    }
    assert!(e.to_string().contains(&dead), "{e}");
    assert_eq!(g2.await.unwrap().unwrap(), data2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_restart_loses_no_data_and_transfers_resume() {
    let mut cluster = Cluster::start(SchedulerKind::Varys, &[300e3, 5e6]);
    cluster.ready().await;
    let tx = cluster.client(0).await;
    let rx = cluster.client(1).await;
    let c1 = tx.register(CoflowOptions::flows(1)).await.unwrap();
    let c2 = tx.register(CoflowOptions::flows(2)).await.unwrap();
    let big = bytes(3, 600_000);
    let small = bytes(4, 50_000);
    tx.put(c1, "big", &big).await.unwrap();
    tx.put(c2, "small", &small).await.unwrap();
    let r = rx.clone();
    let inflight = tokio::spawn(async move { r.get(c1, "big").await });
    tokio::time::sleep(Duration::from_millis(300)).await;

    cluster.coordinator.take().unwrap().kill();
    // With the coordinator gone, puts still land (they only talk to the local daemon).
    let late = bytes(5, 40_000);
    tx.put(c2, "late", &late).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    cluster.restart_coordinator();
    cluster.ready().await;

    // The in-flight get completes intact (fair share while alone, then the new coordinator).
    assert_eq!(inflight.await.unwrap().unwrap(), big);
    // Data put before and during the outage is found through the new coordinator.
    assert_eq!(rx.get(c2, "small").await.unwrap(), small);
    assert_eq!(rx.get(c2, "late").await.unwrap(), late);
    // Coflow ids of the new coordinator do not collide with the old ones.
    let c3 = tx.register(CoflowOptions::flows(1)).await.unwrap();
    assert!(c3 != c1 && c3 != c2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_oversized_requests_are_rejected_and_service_continues() {
    let cluster = Cluster::start(SchedulerKind::Fair, &[5e6, 5e6]);
    cluster.ready().await;
    let caddr = cluster.coordinator_addr.to_string();
    // A raw client without the library's own size limit.
    let ch = tonic::transport::Endpoint::from_shared(format!("http://{caddr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut raw = CoordinatorClient::with_interceptor(ch, AddToken(token()));
    let e = raw
        .register_coflow(RegisterCoflowRequest {
            deadline_s: f64::NAN,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("deadline_s"), "{}", e.message());
    let huge: Vec<StoredObject> = (0..100_000)
        .map(|i| StoredObject {
            coflow: 1,
            data_id: format!("{i:0>60}"),
            size_bytes: 1,
            ..Default::default()
        })
        .collect();
    let e = raw
        .register_daemon(RegisterDaemonRequest {
            protocol_version: 1,
            addr: "x:1".into(),
            nic_bytes_per_s: 1.0,
            objects: huge,
            flows: vec![],
        })
        .await
        .unwrap_err();
    assert_ne!(e.code(), tonic::Code::Ok);
    let e = raw
        .register_daemon(RegisterDaemonRequest {
            protocol_version: 99,
            addr: "x:1".into(),
            nic_bytes_per_s: 1.0,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        e.message().contains("protocol version 99"),
        "{}",
        e.message()
    );
    // Not even HTTP/2: the connection is dropped, the server lives on.
    let mut s = tokio::net::TcpStream::connect(&caddr).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\xff")
        .await
        .unwrap();
    let mut sink = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut sink)).await;
    let st = raw.status(Empty {}).await.unwrap().into_inner();
    assert_eq!(
        st.daemons.len(),
        2,
        "the oversized registration left no trace"
    );

    // Data plane: an absurd frame length, then a valid hello with a garbage request.
    let daddr = cluster.daemon_addrs[0].clone();
    let mut s = tokio::net::TcpStream::connect(&daddr).await.unwrap();
    s.write_all(&[0xff, 0xff, 0xff, 0xff, 1]).await.unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut reply)).await;
    assert!(String::from_utf8_lossy(&reply).contains("exceeds the limit"));
    let mut s = tokio::net::TcpStream::connect(&daddr).await.unwrap();
    let hello = prost::Message::encode_to_vec(&coflowkit_runtime::proto::DataHello {
        protocol_version: 1,
        token: token().as_str().into(),
    });
    let mut wire = ((hello.len() + 1) as u32).to_be_bytes().to_vec();
    wire.push(1);
    wire.extend(hello);
    wire.extend([0, 0, 0, 4, 2, 0xff, 0xff, 0xff]);
    s.write_all(&wire).await.unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut reply)).await;
    assert!(String::from_utf8_lossy(&reply).contains("bad request"));

    // Everything still works.
    let a = cluster.client(0).await;
    let b = cluster.client(1).await;
    let c = a.register(CoflowOptions::flows(1)).await.unwrap();
    a.put(c, "ok", b"still serving").await.unwrap();
    assert_eq!(b.get(c, "ok").await.unwrap(), b"still serving");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_wrong_token_is_refused_everywhere() {
    let cluster = Cluster::start(SchedulerKind::Fair, &[5e6]);
    cluster.ready().await;
    let wrong = Client::connect(ClientConfig::new(
        &cluster.coordinator_addr.to_string(),
        &cluster.daemon_addrs[0],
        Token::new("not-the-token").unwrap(),
    ))
    .await
    .unwrap();
    match wrong.register(CoflowOptions::flows(1)).await.unwrap_err() {
        Error::Rpc { status, .. } => assert_eq!(status.code(), tonic::Code::Unauthenticated),
        other => panic!("expected an RPC refusal, got {other}"),
    }
    let e = wrong.put(1, "x", b"data").await.unwrap_err();
    assert!(e.to_string().contains("unauthenticated"), "{e}");
    // No token at all.
    let ch =
        tonic::transport::Endpoint::from_shared(format!("http://{}", cluster.coordinator_addr))
            .unwrap()
            .connect()
            .await
            .unwrap();
    let e = CoordinatorClient::new(ch)
        .status(Empty {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_is_bounded_puts_wait_or_spill() {
    // 64 KiB of memory and nowhere to spill: a second put waits until the first coflow goes.
    let cluster = Cluster::start_with(SchedulerKind::Fair, &[5e6, 5e6], |c| {
        c.mem_limit_bytes = 64 * 1024;
    });
    cluster.ready().await;
    let a = cluster.client(0).await;
    let b = cluster.client(1).await;
    let c1 = a.register(CoflowOptions::flows(1)).await.unwrap();
    let c2 = a.register(CoflowOptions::flows(1)).await.unwrap();
    a.put(c1, "first", &bytes(6, 48 * 1024)).await.unwrap();
    let second = bytes(7, 48 * 1024);
    let (a2, s2) = (a.clone(), second.clone());
    let mut put2 = tokio::spawn(async move { a2.put(c2, "second", &s2).await });
    let blocked = tokio::time::timeout(Duration::from_millis(500), &mut put2).await;
    assert!(blocked.is_err(), "the put went beyond the memory bound");
    a.unregister(c1).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), put2)
        .await
        .expect("the put resumes once memory is freed")
        .unwrap()
        .unwrap();
    assert_eq!(b.get(c2, "second").await.unwrap(), second);

    // With a data dir the same bound spills instead.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let cluster = Cluster::start_with(SchedulerKind::Fair, &[50e6, 50e6], move |c| {
        c.mem_limit_bytes = 64 * 1024;
        c.data_dir = Some(path.clone());
    });
    cluster.ready().await;
    let a = cluster.client(0).await;
    let b = cluster.client(1).await;
    let c = a.register(CoflowOptions::flows(1)).await.unwrap();
    let big = bytes(8, 1_000_000);
    a.put(c, "big", &big).await.unwrap();
    assert!(
        std::fs::read_dir(dir.path()).unwrap().count() > 0,
        "nothing spilled"
    );
    assert_eq!(b.get(c, "big").await.unwrap(), big);
}
