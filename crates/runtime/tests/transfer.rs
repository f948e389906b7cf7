//! End-to-end transfers on loopback: bytes arrive intact, at the assigned rates.

mod common;

use std::time::{Duration, Instant};

use coflowkit_runtime::{CoflowOptions, Error};
use coflowkit_sched::SchedulerKind;
use common::{bytes, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_then_get_returns_the_same_bytes() {
    let cluster = Cluster::start(SchedulerKind::Varys, &[50e6, 50e6]);
    cluster.ready().await;
    let sender = cluster.client(0).await;
    let receiver = cluster.client(1).await;
    let c = sender.register(CoflowOptions::flows(4)).await.unwrap();
    let objects = [
        ("empty", Vec::new()),
        ("one", vec![42u8]),
        ("block", bytes(1, 16 * 1024)),
        ("odd", bytes(2, 300_001)),
    ];
    for (id, data) in &objects {
        assert_eq!(sender.put(c, id, data).await.unwrap(), data.len() as u64);
    }
    // A file put, fetched into a writer.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, bytes(3, 70_000)).unwrap();
    let c2 = sender.register(CoflowOptions::flows(1)).await.unwrap();
    sender.put_file(c2, "file", &path).await.unwrap();

    let gets = objects.iter().map(|(id, _)| {
        let r = receiver.clone();
        let id = id.to_string();
        async move { r.get(c, &id).await }
    });
    let got = futures_join(gets).await;
    for ((id, data), g) in objects.iter().zip(got) {
        assert_eq!(&g.unwrap(), data, "object {id}");
    }
    let mut out = Vec::new();
    assert_eq!(
        receiver.get_into(c2, "file", &mut out).await.unwrap(),
        70_000
    );
    assert_eq!(out, bytes(3, 70_000));

    // Unknown data: a clear error, not a hang.
    let e = receiver.get(c, "nope").await.unwrap_err();
    assert!(e.to_string().contains("no data `nope`"), "{e}");
    // Duplicate data id within a coflow is refused.
    let e = sender.put(c, "one", b"again").await.unwrap_err();
    assert!(matches!(e, Error::Remote { .. }), "{e}");
    sender.unregister(c).await.unwrap();
    sender.unregister(c2).await.unwrap();
}

/// Run futures concurrently, results in order.
async fn futures_join<F: std::future::Future + Send + 'static>(
    fs: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = fs.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// A 200 KB object from a 400 KB/s NIC cannot arrive in much under half a second; two such
/// flows sharing the NIC take about twice as long. Bounds, generous on the slow side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transfers_are_paced_at_the_assigned_rates() {
    let nic = 400e3;
    let cluster = Cluster::start(SchedulerKind::Fair, &[nic, 100e6]);
    cluster.ready().await;
    let sender = cluster.client(0).await;
    let receiver = cluster.client(1).await;
    let c = sender.register(CoflowOptions::flows(1)).await.unwrap();
    let data = bytes(4, 200_000);
    sender.put(c, "a", &data).await.unwrap();
    let t = Instant::now();
    assert_eq!(receiver.get(c, "a").await.unwrap(), data);
    let took = t.elapsed().as_secs_f64();
    assert!(took >= 0.45, "200 KB at 400 KB/s took only {took:.3} s");
    assert!(took < 5.0, "200 KB at 400 KB/s took {took:.3} s");

    let c = sender.register(CoflowOptions::flows(2)).await.unwrap();
    sender.put(c, "x", &data).await.unwrap();
    sender.put(c, "y", &data).await.unwrap();
    let t = Instant::now();
    let (r1, r2) = (receiver.clone(), receiver.clone());
    let (a, b) = tokio::join!(r1.get(c, "x"), r2.get(c, "y"));
    assert_eq!(a.unwrap(), data);
    assert_eq!(b.unwrap(), data);
    let took = t.elapsed().as_secs_f64();
    assert!(
        took >= 0.9,
        "400 KB through a 400 KB/s NIC took only {took:.3} s"
    );
    assert!(took < 8.0);
}

/// Varys gives the smaller coflow the link first (SEBF); fair sharing would finish the two
/// equal-rate flows together. The real system shows the shared policy's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_scheduler_decides_the_order() {
    let cluster = Cluster::start(SchedulerKind::Varys, &[500e3, 100e6]);
    cluster.ready().await;
    let sender = cluster.client(0).await;
    let receiver = cluster.client(1).await;
    let big = sender.register(CoflowOptions::flows(1)).await.unwrap();
    let small = sender.register(CoflowOptions::flows(1)).await.unwrap();
    sender.put(big, "b", &bytes(5, 400_000)).await.unwrap();
    sender.put(small, "s", &bytes(6, 100_000)).await.unwrap();
    let t = Instant::now();
    let r = receiver.clone();
    let big_get = tokio::spawn(async move {
        r.get(big, "b").await.unwrap();
        Instant::now()
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    receiver.get(small, "s").await.unwrap();
    let small_done = t.elapsed().as_secs_f64();
    let big_done = big_get.await.unwrap().duration_since(t).as_secs_f64();
    // Alone the small one needs 0.2 s; sharing fairly it would need about 0.4 s.
    assert!(
        small_done < 0.38,
        "small coflow took {small_done:.3} s under varys"
    );
    assert!(big_done > small_done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_clairvoyant_coflows_need_a_non_clairvoyant_scheduler() {
    let cluster = Cluster::start(SchedulerKind::Aalo, &[5e6, 5e6]);
    cluster.ready().await;
    let a = cluster.client(0).await;
    let b = cluster.client(1).await;
    let c = a.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    let data = bytes(7, 100_000);
    a.put(c, "x", &data).await.unwrap();
    assert_eq!(b.get(c, "x").await.unwrap(), data);

    let varys = Cluster::start(SchedulerKind::Varys, &[5e6]);
    varys.ready().await;
    let e = varys
        .client(0)
        .await
        .register(CoflowOptions::non_clairvoyant())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("needs flow sizes"), "{e}");
}

/// Aalo in the real world: daemons report bytes every Δ, the coordinator's D-CLAS demotes the
/// big coflow at its Δ tick, and a later small coflow (in the top queue) overtakes it. Were the
/// queues never updated, FIFO inside the first queue would hold the small one for ~2 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aalo_demotes_a_big_coflow_from_progress_reports() {
    let mut cfg = coflowkit_runtime::CoordinatorConfig::new(common::token(), SchedulerKind::Aalo);
    cfg.options.aalo.queues.q1_hi_bytes = 50e3;
    let coord = coflowkit_runtime::coordinator::spawn(cfg, common::loopback()).unwrap();
    let caddr = coord.addr().to_string();
    let mut daemons = Vec::new();
    for nic in [500e3, 50e6] {
        let d = coflowkit_runtime::DaemonConfig::new(caddr.clone(), common::token(), nic);
        daemons.push(coflowkit_runtime::daemon::spawn(d, common::loopback()).unwrap());
    }
    let client = |i: usize| {
        coflowkit_runtime::Client::connect(coflowkit_runtime::ClientConfig::new(
            &caddr,
            &daemons[i].addr().to_string(),
            common::token(),
        ))
    };
    let (tx, rx) = (client(0).await.unwrap(), client(1).await.unwrap());
    tokio::time::sleep(Duration::from_millis(200)).await; // daemons register
    let big = tx.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    let small = tx.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    tx.put(big, "b", &bytes(9, 1_000_000)).await.unwrap();
    tx.put(small, "s", &bytes(10, 20_000)).await.unwrap();
    let r = rx.clone();
    let big_get = tokio::spawn(async move { r.get(big, "b").await.unwrap() });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = Instant::now();
    rx.get(small, "s").await.unwrap();
    let took = t.elapsed().as_secs_f64();
    assert!(
        took < 1.0,
        "the small coflow waited {took:.3} s behind the big one"
    );
    assert_eq!(big_get.await.unwrap().len(), 1_000_000);
}

/// The monitoring endpoint answers Prometheus text and JSON, and 404 for anything else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_status_over_http() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut cfg = coflowkit_runtime::CoordinatorConfig::new(common::token(), SchedulerKind::Fair);
    // Port 0, read back from the handle: a port picked by binding and dropping a listener
    // could be taken by another listener before the coordinator binds it (seen once in CI:
    // the request went to the gRPC port and was reset).
    cfg.metrics = Some(common::loopback());
    let coord = coflowkit_runtime::coordinator::spawn(cfg, common::loopback()).unwrap();
    let port = coord.metrics_addr().expect("a metrics endpoint");
    let d = coflowkit_runtime::daemon::spawn(
        coflowkit_runtime::DaemonConfig::new(coord.addr().to_string(), common::token(), 1e6),
        common::loopback(),
    )
    .unwrap();
    let get = |path: &'static str| async move {
        for _ in 0..100 {
            if let Ok(mut s) = tokio::net::TcpStream::connect(port).await {
                s.write_all(format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut out = String::new();
                s.read_to_string(&mut out).await.unwrap();
                return out;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("metrics endpoint never answered");
    };
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = get("/metrics").await;
        if metrics.contains("coflowkit_daemons_connected 1") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(metrics.starts_with("HTTP/1.0 200"), "{metrics}");
    assert!(
        metrics.contains("coflowkit_daemons_connected 1"),
        "{metrics}"
    );
    let status = get("/status").await;
    let body = status.split("\r\n\r\n").nth(1).unwrap();
    let doc: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(doc["scheduler"], "fair");
    assert_eq!(doc["daemons"][0]["addr"], d.addr().to_string());
    assert!(get("/nope").await.starts_with("HTTP/1.0 404"));
}
