//! A read-only HTTP endpoint for monitoring: `GET /metrics` (Prometheus text format),
//! `GET /status` (JSON, bounded; see [`status_page`]), and a live dashboard at `/` (one page compiled into the binary, fed by
//! server-sent events from `/events`; see [`dashboard`]). Opt-in and unauthenticated, like most
//! metrics endpoints: bind it to a private address. Served by axum on hyper, one connection at a
//! time through the listener's [`Gate`] (connection limits, a deadline for the request head,
//! counters in `/metrics`).

mod dashboard;
mod status_page;

use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Request, State as Ext};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::service::Shared;
use super::state::Limit;
use crate::listen::{self, Gate};

/// A connection's read and write buffer.
const BUF_BYTES: usize = 64 << 10;

pub async fn serve(shared: Arc<Shared>, listener: TcpListener, gate: Arc<Gate>) {
    let board = dashboard::Board::start(shared.clone());
    let status = Arc::new(status_page::StatusPage::default());
    let app = Router::new()
        .route("/metrics", get(metrics_page))
        .route(
            "/status",
            get(move |Ext(shared): Ext<Arc<Shared>>| {
                let status = status.clone();
                async move { status.answer(&shared).await }
            }),
        )
        .merge(dashboard::routes(board))
        .fallback(|| async { (StatusCode::NOT_FOUND, "try /metrics or /status\n") })
        .layer(middleware::from_fn(same_version))
        .with_state(shared);
    loop {
        let (sock, _, permit) = gate.accept(&listener).await;
        let svc = TowerToHyperService::new(app.clone());
        let timeout = gate.limits().handshake;
        let stats = gate.stats().clone();
        tokio::spawn(async move {
            // The request head within the handshake timeout; answers (and the dashboard's
            // event stream) take as long as they take.
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                // What a connection buffers each way (a request head, an answer's bytes the
                // reader has not taken): 400 KB by default, times hundreds of connections.
                .max_buf_size(BUF_BYTES)
                .header_read_timeout(timeout)
                .serve_connection(TokioIo::new(sock), svc);
            if let Err(e) = conn.await {
                if e.is_timeout() {
                    stats
                        .timed_out
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            drop(permit);
        });
    }
}

/// Answer in the request's HTTP version (an HTTP/1.0 client gets `HTTP/1.0 200 OK`, as before).
async fn same_version(req: Request, next: Next) -> Response {
    let v = req.version();
    let mut res = next.run(req).await;
    *res.version_mut() = v;
    res
}

async fn metrics_page(Ext(shared): Ext<Arc<Shared>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics(&shared),
    )
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
    gauge("daemons", "Registered daemons", s.live_daemons() as f64);
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
    let _ = writeln!(
        out,
        "# HELP coflowkit_requests_refused_total Requests refused by a coordinator limit\n\
         # TYPE coflowkit_requests_refused_total counter"
    );
    let by_limit = (Limit::ALL.iter().map(|l| l.name())).zip(&shared.refused.by_limit);
    let per_request = [
        ("broadcast_got", &shared.refused.broadcast_got),
        ("progress_flows", &shared.refused.progress_flows),
    ];
    for (name, n) in by_limit.chain(per_request) {
        let _ = writeln!(
            out,
            "coflowkit_requests_refused_total{{limit=\"{name}\"}} {}",
            n.load(std::sync::atomic::Ordering::Relaxed)
        );
    }
    listen::render(
        &[
            ("control", &shared.control_stats),
            ("metrics", &shared.metrics_stats),
        ],
        &mut out,
    );
    out
}
