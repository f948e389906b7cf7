//! The metrics endpoint under many flows and readers that do not read (adversarial pass 30: at
//! 70,000 flows one `/status` was 46 MB, built whole for each request, and 32 readers that
//! read 100 bytes and stalled took the coordinator to 1.9 GB and an allocation abort).

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use coflowkit_runtime::coordinator::state::RegistryLimits;
use coflowkit_runtime::coordinator::status::STATUS_MAX_BYTES;
use coflowkit_runtime::proto::{FlowInfo, RegisterDaemonRequest};
use coflowkit_runtime::{coordinator, rpc, CoordinatorConfig, PROTOCOL_VERSION};
use coflowkit_sched::SchedulerKind;
use common::{loopback, token};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Resident memory of this process (the coordinator runs in it).
fn rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb = (s.lines())
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap();
    kb * 1024
}

/// A request sent on a connection that takes in little (a 4 KB receive buffer).
async fn ask(addr: SocketAddr, path: &str) -> TcpStream {
    let sock = TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut s = sock.connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    s
}

/// The first bytes of the answer: its status line.
async fn status_line(s: &mut TcpStream) -> String {
    let mut b = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(30), s.read_exact(&mut b))
        .await
        .expect("an answer within 30 s")
        .unwrap();
    String::from_utf8_lossy(&b).into_owned()
}

async fn read_all(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// 40,000 flows with 300-byte ids (a 17 MB document unbounded): `/status` is at most
/// `STATUS_MAX_BYTES` with every flow listed or counted; 40 readers that stall after the status
/// line grow the process by a few MB (unbounded: one whole document each, about 700 MB), 16
/// of them are being answered and the others told to retry (503); once they go, `/status`
/// answers again. `/events` streams are capped the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_readers_that_stall_cost_little_and_answers_are_bounded() {
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Fair);
    cfg.registry = RegistryLimits {
        max_coflows: 1 << 20,
        max_flows_per_coflow: 1 << 20,
        max_flows_per_daemon: 1 << 20,
        max_objects_per_coflow: 1 << 20,
        max_objects_per_daemon: 1 << 20,
    };
    cfg.metrics = Some(loopback());
    let c = coordinator::spawn(cfg, loopback()).unwrap();
    let maddr = c.metrics_addr().unwrap();
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    let id = "x".repeat(290);
    for d in 0..10u64 {
        let flows = (0..4000u64)
            .map(|k| FlowInfo {
                flow: k,
                coflow: 1000 + k % 200,
                data_id: format!("{id}{d}-{k}"),
                size_bytes: 1 << 20,
                ..Default::default()
            })
            .collect();
        let req = RegisterDaemonRequest {
            protocol_version: PROTOCOL_VERSION,
            addr: format!("10.9.0.{d}:1"),
            nic_bytes_per_s: 1e9,
            flows,
            ..Default::default()
        };
        rpc.register_daemon(req).await.unwrap();
    }

    let whole = read_all(maddr, "/status").await;
    let (head, body) = whole.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.0 200"), "{head}");
    assert!(body.len() <= STATUS_MAX_BYTES, "{} bytes", body.len());
    let doc: serde_json::Value = serde_json::from_str(body).unwrap();
    let coflows = doc["coflows"].as_array().unwrap();
    let listed: u64 = (coflows.iter())
        .map(|c| c["flows"].as_array().unwrap().len() as u64)
        .sum();
    assert_eq!(listed + doc["flows_omitted"].as_u64().unwrap(), 40_000);
    assert_eq!(
        coflows.len() as u64 + doc["coflows_omitted"].as_u64().unwrap(),
        200
    );
    assert!(listed > 5_000, "{listed} listed");
    assert_eq!(doc["daemons"].as_array().unwrap().len(), 10);

    let before = rss_bytes();
    let mut stalled = Vec::new();
    for _ in 0..40 {
        stalled.push(ask(maddr, "/status").await);
    }
    let mut lines = Vec::new();
    for s in &mut stalled {
        lines.push(status_line(s).await);
    }
    // Time for the answers to fill what the connections take.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let grown = rss_bytes().saturating_sub(before);
    let ok = lines.iter().filter(|l| l.ends_with("200")).count();
    let busy = lines.iter().filter(|l| l.ends_with("503")).count();
    assert_eq!((ok, busy), (16, 24), "{lines:?}");
    assert!(
        grown < 64 << 20,
        "40 stalled readers grew the coordinator by {grown} bytes"
    );
    let retry = read_all(maddr, "/status").await;
    assert!(retry.starts_with("HTTP/1.0 503"), "{retry:.200}");
    assert!(retry.contains("retry-after: 1"), "{retry:.200}");
    drop(stalled);
    let mut again = String::new();
    for _ in 0..50 {
        again = read_all(maddr, "/status").await;
        if again.starts_with("HTTP/1.0 200") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(again.starts_with("HTTP/1.0 200"), "{again:.200}");

    // Event streams: 16 at once, the 17th told to retry, a place again once one goes.
    let mut streams = Vec::new();
    for _ in 0..16 {
        let mut s = ask(maddr, "/events").await;
        assert!(status_line(&mut s).await.ends_with("200"));
        streams.push(s);
    }
    let mut extra = ask(maddr, "/events").await;
    assert!(status_line(&mut extra).await.ends_with("503"));
    drop(streams.pop());
    let mut got = String::new();
    for _ in 0..50 {
        let mut s = ask(maddr, "/events").await;
        got = status_line(&mut s).await;
        if got.ends_with("200") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(got.ends_with("200"), "{got}");
}
