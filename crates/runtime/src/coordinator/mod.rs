//! The coordinator: a registry of coflows and daemons whose brain is the shared scheduler of
//! `coflowkit-sched`. It decides on events (coflow registered or unregistered, a get started,
//! a flow or coflow finished, a daemon came or went), at the wake-up the scheduler asks for, and
//! every `tick` as a safety net, and pushes each daemon the full rate table of its flows.

pub mod broadcast;
mod http;
mod off_worker;
mod service;
pub mod state;
pub mod status;
mod tenant_caps;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coflowkit_sched::tenant::Board;
use coflowkit_sched::{build_with_board, SchedOptions, SchedulerKind};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use off_worker::off_worker;
use tonic::transport::Server;

use crate::auth::{CheckToken, Token};
use crate::error::{Error, Result};
use crate::listen::{Gate, Guarded, Limits, ListenStats};
use crate::proto::coordinator_server::CoordinatorServer;
use crate::proto::RateUpdate;
use crate::rpc::MAX_RPC_BYTES;
use crate::running::{bind_now, Running};
use crate::tls::TlsServer;
use service::{Service, Shared};
use state::State;

/// Everything a coordinator is started with.
#[derive(Debug, Clone)]
pub struct CoordinatorConfig {
    pub token: Token,
    pub scheduler: SchedulerKind,
    pub options: SchedOptions,
    /// Δ: how often daemons report bytes sent (Aalo's coordination interval; default 10 ms).
    pub report_interval: Duration,
    /// Decide at least this often while flows are active, even without events (default 100 ms,
    /// Varys's O(100) ms batching); `None` = only on events and scheduler wake-ups.
    pub tick: Option<Duration>,
    /// Serve `GET /metrics` (Prometheus) and `GET /status` (JSON) over HTTP here; read-only and
    /// unauthenticated, so bind it to a private address. `None` = off (default).
    pub metrics: Option<SocketAddr>,
    /// Serve the control protocol over TLS with this certificate (`None` = plaintext).
    pub tls: Option<TlsServer>,
    /// Most daemons (distinct addresses) ever registered; more are refused with
    /// `RESOURCE_EXHAUSTED` (the fabric grows with them; default 4096).
    pub max_daemons: usize,
    /// Forget a daemon that stays disconnected this long: its flows end as failed, its objects
    /// are no longer located, its port is reused (default 300 s; `None` = never).
    pub forget_daemons_after: Option<Duration>,
    /// How many coflows and flows the coordinator records (requests past them are refused
    /// with `RESOURCE_EXHAUSTED` and counted in `/metrics`).
    pub registry: state::RegistryLimits,
    /// Connection limits and timeouts of the control listener (the metrics listener takes a
    /// sixteenth of them, at least 4).
    pub limits: Limits,
    /// hug, drf, psp: daemons share their NIC among the coflows by local max-min under the
    /// pushed guarantees and caps (the thesis' enforcement, §7.6.1) instead of pacing the
    /// coordinator's per-flow rates (default false: per-flow rates, caps as a bound).
    pub tenant_local: bool,
    /// The topology for rack-aware broadcasts (CornetTopology): each daemon host (its address
    /// without the port, e.g. `10.0.0.7`) -> its rack. Empty = unknown (default).
    pub racks: std::collections::HashMap<String, u32>,
    /// The inter-transfer controller over concurrent broadcasts (Orchestra's ITC, spec §2.0):
    /// FIFO, strict priority or weighted fair shares of each receiver's NIC, handed to the
    /// receivers' daemons with their peers every second. `None`: broadcasts share the network
    /// as TCP does (default).
    pub broadcast_policy: Option<coflowkit_orchestra::itc::Policy>,
}

impl CoordinatorConfig {
    pub fn new(token: Token, scheduler: SchedulerKind) -> Self {
        CoordinatorConfig {
            token,
            scheduler,
            options: SchedOptions::default(),
            report_interval: Duration::from_millis(10),
            tick: Some(Duration::from_millis(100)),
            metrics: None,
            tls: None,
            limits: Limits::default(),
            registry: state::RegistryLimits::default(),
            max_daemons: 4096,
            forget_daemons_after: Some(Duration::from_secs(300)),
            tenant_local: false,
            racks: Default::default(),
            broadcast_policy: None,
        }
    }
}

/// Serve on `listener` until the process ends (and on `config.metrics`, bound here).
pub async fn serve(config: CoordinatorConfig, listener: TcpListener) -> Result<()> {
    let metrics = bind_metrics(&config)?;
    serve_on(config, listener, metrics.map(|(l, _)| l)).await
}

/// The metrics endpoint's listener and address, if `config` asks for one.
fn bind_metrics(config: &CoordinatorConfig) -> Result<Option<(std::net::TcpListener, SocketAddr)>> {
    (config.metrics)
        .map(|addr| bind_now(addr, "metrics endpoint"))
        .transpose()
}

/// [`serve`], with the metrics endpoint's listener already bound.
async fn serve_on(
    config: CoordinatorConfig,
    listener: TcpListener,
    metrics: Option<std::net::TcpListener>,
) -> Result<()> {
    config.limits.check().map_err(Error::Config)?;
    let board = Board::default();
    let tenant = SchedulerKind::TENANT.contains(&config.scheduler);
    let mut sched = build_with_board(config.scheduler, &config.options, &board);
    let shared = Arc::new(Shared {
        state: Mutex::new(State::with_limits(
            state::first_coflow_id(unix_ms()),
            config.registry.clone(),
        )),
        start: std::time::Instant::now(),
        last_decision_s: Mutex::new(0.0),
        wake: Notify::new(),
        rates: Mutex::new(Vec::new()),
        scheduler: config.scheduler.name().to_string(),
        clairvoyant: sched.clairvoyant(),
        report_interval_s: config.report_interval.as_secs_f64(),
        control_stats: Arc::new(ListenStats::default()),
        max_daemons: config.max_daemons,
        metrics_stats: Arc::new(ListenStats::default()),
        broadcasts: Mutex::new(
            broadcast::Broadcasts::with_racks(config.racks.clone())
                .with_policy(config.broadcast_policy),
        ),
        board: tenant.then(|| board.clone()),
        refused: Default::default(),
        subscriptions: Default::default(),
    });
    if let Some(l) = metrics {
        let l = TcpListener::from_std(l).map_err(|e| Error::io("metrics endpoint socket", e))?;
        let limits = Limits {
            max_connections: (config.limits.max_connections / 16).max(4),
            max_per_peer: (config.limits.max_per_peer / 16).max(4),
            ..config.limits.clone()
        };
        let gate = Gate::new("metrics endpoint", limits, shared.metrics_stats.clone());
        tokio::spawn(http::serve(shared.clone(), l, gate));
    }
    if let Some(after) = config.forget_daemons_after {
        tokio::spawn(forget_disconnected(shared.clone(), after));
    }
    let brain = shared.clone();
    let tick = config.tick;
    let tenant_local = config.tenant_local;
    tokio::spawn(async move {
        // The decision clock (sched) says, per wake, whether to decide in full, hand freed
        // bandwidth on, or wait: the same rule the simulator follows.
        let mut wake_at: Option<Instant> = None;
        let mut wake_s: Option<f64> = None;
        let mut last_now = 0.0f64;
        let mut last = Instant::now();
        loop {
            let next = match (wake_at, tick) {
                (Some(w), Some(t)) => Some(w.min(last + t)),
                (Some(w), None) => Some(w),
                (None, Some(t)) => Some(last + t),
                (None, None) => None,
            };
            let timed_out = match next {
                Some(at) => tokio::select! {
                    _ = brain.wake.notified() => false,
                    _ = tokio::time::sleep_until(at) => true,
                },
                None => {
                    brain.wake.notified().await;
                    false
                }
            };
            // The inter-transfer controller: the shuffles' share of every NIC beside the
            // broadcasts (the locks one after the other, never nested).
            let link_share = itc_link_share(&brain);
            // A round is CPU work of up to a second (bounded by `registry`): off the runtime's
            // worker, so connections (keepalives, other requests' decoding) are served meanwhile.
            let updates = off_worker(|| {
                let mut s = brain.state.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(share) = link_share {
                    s.set_link_share(share);
                }
                // The safety-net tick has nothing to do while no flow runs.
                if timed_out && s.idle() && wake_s.is_none() {
                    last = Instant::now();
                    return None;
                }
                let real = brain.now_s();
                // A decision at a wake-up the policy asked for happens at the time it asked
                // for (timers fire a little late; D-CLAS updates its queues only on its exact
                // Δ ticks). Otherwise, and never going back in time, the real time.
                let now = match wake_s {
                    Some(t) if t <= real => t.max(last_now),
                    _ => real,
                };
                let t0 = std::time::Instant::now();
                let round = s.step(sched.as_mut(), now, timed_out)?;
                last_now = now;
                if round.full {
                    *brain
                        .last_decision_s
                        .lock()
                        .unwrap_or_else(|p| p.into_inner()) = t0.elapsed().as_secs_f64();
                    last = Instant::now();
                }
                wake_s = round.wake_at_s;
                wake_at = round.wake_at_s.map(|t| {
                    Instant::now() + Duration::from_secs_f64((t - real).clamp(0.0, 3600.0))
                });
                let mut updates = round.updates;
                if tenant && !updates.is_empty() {
                    let nics = s.fabric().up_bytes_per_s;
                    let ends = |port, flow| s.flow_ends(port, flow);
                    let shares = board.shares();
                    tenant_caps::attach(&mut updates, &shares, tenant_local, &nics, ends);
                }
                Some(updates)
            })
            .await;
            if let Some(updates) = updates {
                push(&brain, updates);
            }
        }
    });
    let auth = CheckToken(config.token.clone());
    let svc = tonic::service::interceptor::InterceptedService::new(
        CoordinatorServer::new(Service(shared.clone()))
            .max_decoding_message_size(MAX_RPC_BYTES)
            .max_encoding_message_size(MAX_RPC_BYTES),
        auth,
    );
    let mut server = Server::builder();
    if let Some(t) = &config.tls {
        server = server
            .tls_config(t.tonic())
            .map_err(|e| Error::Config(format!("coordinator TLS: {e}")))?;
    }
    let gate = Gate::new(
        "coordinator",
        config.limits.clone(),
        shared.control_stats.clone(),
    );
    let incoming = guarded_incoming(listener, gate);
    // HTTP/2 keepalives find a vanished daemon (host gone, no FIN) within seconds. A client
    // gets at most MAX_STREAMS_PER_CONNECTION calls at once on one connection (unlimited
    // before: 10,000 rate subscriptions on one connection were all kept, adversarial pass 33
    // B20).
    server
        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION)
        .http2_keepalive_interval(Some(Duration::from_secs(2)))
        .http2_keepalive_timeout(Some(Duration::from_secs(4)))
        .add_service(svc)
        .serve_with_incoming(incoming)
        .await
        .map_err(|e| Error::Config(format!("coordinator server: {e}")))
}

/// The shuffles' share of every NIC under the inter-transfer controller, beside the running
/// broadcasts (None: no ITC configured).
fn itc_link_share(shared: &Shared) -> Option<f64> {
    if !shared.broadcasts().has_policy() {
        return None;
    }
    let now = shared.now_s();
    let shuffles = (shared.state.lock().unwrap_or_else(|p| p.into_inner())).running_transfers();
    Some(shared.broadcasts().shuffle_share(shuffles, now))
}

/// Sweeps for daemons disconnected for `after` (a quarter of it apart, at most 10 s), forgets
/// them and wakes the brain to decide without them.
async fn forget_disconnected(shared: Arc<Shared>, after: Duration) {
    let period = (after / 4).clamp(Duration::from_millis(1), Duration::from_secs(10));
    let mut every = tokio::time::interval(period);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let now = shared.now_s();
        let gone = (shared.state.lock().unwrap_or_else(|p| p.into_inner()))
            .forget_disconnected(now, after.as_secs_f64());
        for addr in &gone {
            tracing::warn!(daemon = %addr, "forgotten: disconnected for {after:?}; its flows end as failed");
        }
        if !gone.is_empty() {
            shared.wake.notify_one();
        }
    }
}

/// The most concurrent calls (HTTP/2 streams) one connection may have open; a client's
/// further calls wait for one to end.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 1024;

/// HTTP/2 preface (24 bytes) and a SETTINGS frame header: what a client must send before the
/// handshake deadline.
const H2_HANDSHAKE_BYTES: usize = 24 + 9;

/// The accepted connections, admitted by `gate` and wrapped with its timeouts, as the stream
/// tonic serves. It never yields an error: tonic ends its accept loop on most of them.
fn guarded_incoming(
    listener: TcpListener,
    gate: Arc<Gate>,
) -> tokio_stream::wrappers::ReceiverStream<std::io::Result<Guarded<tokio::net::TcpStream>>> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        loop {
            let (sock, _, permit) = gate.accept(&listener).await;
            // TCP_NODELAY on every accepted socket: without it, of several replies due at
            // once on one connection (a host's concurrent locates) all but the first waited
            // for the client's delayed ACK (41 to 48 ms for one get in five of a replay).
            let _ = sock.set_nodelay(true);
            let l = gate.limits();
            let io = Guarded::new(
                sock,
                H2_HANDSHAKE_BYTES,
                l.handshake,
                l.idle,
                gate.stats().clone(),
                Some(permit),
            );
            if tx.send(Ok(io)).await.is_err() {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn push(shared: &Shared, updates: Vec<RateUpdate>) {
    let mut senders = shared.rates.lock().unwrap_or_else(|p| p.into_inner());
    while senders.len() < updates.len() {
        senders.push(watch::channel(RateUpdate::default()).0);
    }
    for (tx, u) in senders.iter().zip(updates) {
        tx.send_replace(u);
    }
}

/// Start a coordinator on its own runtime (so that dropping the handle ends it like a killed
/// process: every connection closes). Used by `replay --local` and the tests.
pub fn spawn(config: CoordinatorConfig, addr: SocketAddr) -> Result<Running> {
    let (listener, local) = bind_now(addr, "coordinator")?;
    let (metrics, metrics_addr) = bind_metrics(&config)?.unzip();
    let running = Running::start(local, "coordinator", async move {
        let l = TcpListener::from_std(listener).map_err(|e| Error::io("coordinator socket", e))?;
        serve_on(config, l, metrics).await
    })?;
    Ok(running.with_metrics(metrics_addr))
}
