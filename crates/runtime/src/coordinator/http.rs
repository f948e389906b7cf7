//! A read-only HTTP endpoint for monitoring: `GET /metrics` (Prometheus text format) and
//! `GET /status` (JSON). Opt-in and unauthenticated, like most metrics endpoints: bind it to a
//! private address. Minimal HTTP/1.0 by hand (one request per connection, bounded size) rather
//! than a web framework, since two fixed pages are all it serves.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::service::Shared;
use crate::listen::{self, Gate};

/// Longest request head read (bytes); anything longer is cut off.
const MAX_REQUEST: usize = 8 * 1024;

pub async fn serve(shared: Arc<Shared>, listener: TcpListener, gate: Arc<Gate>) {
    loop {
        let (sock, _, permit) = gate.accept(&listener).await;
        let shared = shared.clone();
        let timeout = gate.limits().handshake;
        let stats = gate.stats().clone();
        tokio::spawn(async move {
            // One request, one answer: the whole exchange within the handshake timeout.
            if tokio::time::timeout(timeout, answer(&shared, sock))
                .await
                .is_err()
            {
                stats
                    .timed_out
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            drop(permit);
        });
    }
}

async fn answer(shared: &Shared, mut sock: TcpStream) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST {
        let n = sock.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let (status, kind, body) = match path {
        "/metrics" => ("200 OK", "text/plain; version=0.0.4", metrics(shared)),
        "/status" => ("200 OK", "application/json", status_json(shared)),
        _ => (
            "404 Not Found",
            "text/plain",
            "try /metrics or /status\n".into(),
        ),
    };
    let reply = format!(
        "HTTP/1.0 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    sock.write_all(reply.as_bytes()).await?;
    sock.shutdown().await
}

fn metrics(shared: &Shared) -> String {
    let uptime_s = shared.now_s();
    let last_decision_s = *shared
        .last_decision_s
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let s = shared.state.lock().unwrap_or_else(|p| p.into_inner());
    let active: Vec<_> = s.flows().map(|(_, f)| f).filter(|f| !f.done).collect();
    let connected = s.daemons().iter().filter(|d| d.connected).count();
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, v: f64| {
        let _ = writeln!(
            out,
            "# HELP coflowkit_{name} {help}\n# TYPE coflowkit_{name} gauge\ncoflowkit_{name} {v}"
        );
    };
    gauge("rounds", "Scheduling rounds since start", s.rounds() as f64);
    gauge(
        "last_round_seconds",
        "Duration of the last scheduling round",
        last_decision_s,
    );
    gauge("daemons", "Registered daemons", s.daemons().len() as f64);
    gauge(
        "daemons_connected",
        "Daemons following the rate stream",
        connected as f64,
    );
    gauge("coflows", "Registered coflows", s.coflows().count() as f64);
    gauge(
        "flows_active",
        "Started, unfinished flows",
        active.len() as f64,
    );
    gauge(
        "assigned_bytes_per_second",
        "Sum of the rates assigned to active flows",
        active.iter().map(|f| f.rate).sum(),
    );
    gauge(
        "sent_bytes",
        "Bytes reported sent by the flows the coordinator knows",
        s.flows().map(|(_, f)| f.sent_bytes).sum(),
    );
    gauge(
        "uptime_seconds",
        "Seconds since the coordinator started",
        uptime_s,
    );
    listen::render(
        &[
            ("control", &shared.control_stats),
            ("metrics", &shared.metrics_stats),
        ],
        &mut out,
    );
    out
}

fn status_json(shared: &Shared) -> String {
    let now = shared.now_s();
    let last_decision_s = *shared
        .last_decision_s
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let s = shared.state.lock().unwrap_or_else(|p| p.into_inner());
    let doc = json!({
        "protocol_version": crate::PROTOCOL_VERSION,
        "scheduler": shared.scheduler,
        "rounds": s.rounds(),
        "uptime_s": now,
        "last_decision_s": last_decision_s,
        "daemons": s.daemons().iter().enumerate().map(|(i, d)| json!({
            "port": i, "addr": d.addr, "nic_bytes_per_s": d.nic_bytes_per_s,
            "connected": d.connected, "objects": d.objects,
        })).collect::<Vec<_>>(),
        "coflows": s.coflows().map(|c| json!({
            "id": c.id, "name": c.name, "age_s": now - c.arrival_s,
            "ready": c.ready(), "parents": c.parents,
            "dag": s.dag_pos(c.id).map(|d| format!("{}.{}", d.external, d.internal)),
            "flows": c.flows.iter().filter_map(|&k| s.flow(k)).map(|f| json!({
                "src": s.daemons()[f.src].addr,
                "dst": f.dst.map(|d| s.daemons()[d].addr.clone()),
                "data_id": f.data_id, "size_bytes": f.size_bytes, "sent_bytes": f.sent_bytes,
                "bytes_per_s": f.rate, "done": f.done,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    doc.to_string()
}
