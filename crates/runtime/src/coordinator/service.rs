//! The gRPC face of the coordinator: validates every request (bad input is an
//! `InvalidArgument` naming the field, never a panic) and updates the shared state.

// tonic's handlers return `tonic::Status`; helpers share that error type.
#![allow(clippy::result_large_err)]

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::sync::{watch, Notify};
use tokio_stream::wrappers::WatchStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::broadcast::MAX_GOT_PER_REQUEST;
use super::state::{Full, Limit, State};
use crate::auth::PROTOCOL_VERSION;
use crate::proto::coordinator_server::Coordinator;
use crate::proto::*;
use crate::rpc::MAX_PROGRESS_PER_REQUEST;
use std::sync::atomic::{AtomicU64, Ordering};

/// Longest name, data id or address accepted (bytes).
const MAX_NAME: usize = 512;

pub struct Shared {
    pub state: Mutex<State>,
    /// When the coordinator started: the state's clock (seconds since) is read here.
    pub start: std::time::Instant,
    /// Wall time the last step of the brain took (seconds).
    pub last_decision_s: Mutex<f64>,
    pub wake: Notify,
    /// Latest rate table per daemon port.
    pub rates: Mutex<Vec<watch::Sender<RateUpdate>>>,
    pub scheduler: String,
    pub clairvoyant: bool,
    pub report_interval_s: f64,
    /// Counters of the control (gRPC) and metrics listeners.
    pub control_stats: Arc<crate::listen::ListenStats>,
    pub metrics_stats: Arc<crate::listen::ListenStats>,
    pub max_daemons: usize,
    /// Cornet broadcasts: the coordinator is their controller.
    pub broadcasts: Mutex<super::broadcast::Broadcasts>,
    /// hug, drf, psp: tenants' reported vectors in, the policy's shares out.
    pub board: Option<coflowkit_sched::tenant::Board>,
    /// Requests refused by a limit, for `/metrics`.
    pub refused: Refused,
    /// Per daemon port, the session of its latest rate subscription: an older one ends
    /// (adversarial pass 33, B20: 10,000 subscriptions for one daemon were all kept).
    pub subscriptions: Mutex<std::collections::HashMap<usize, Arc<AtomicU64>>>,
}

/// Requests refused by each registry limit ([`Limit::ALL`]) and by the per-request bound of
/// `BroadcastPeers`.
#[derive(Default)]
pub struct Refused {
    pub by_limit: [AtomicU64; Limit::ALL.len()],
    pub broadcast_got: AtomicU64,
    pub progress_flows: AtomicU64,
}

impl Refused {
    /// Count `full` and turn it into the `RESOURCE_EXHAUSTED` the client sees.
    fn count(&self, full: Full) -> Status {
        let i = Limit::ALL
            .iter()
            .position(|&l| l == full.limit)
            .unwrap_or(0);
        self.by_limit[i].fetch_add(1, Ordering::Relaxed);
        tracing::warn!(limit = full.limit.name(), "refused: {}", full.why);
        Status::resource_exhausted(full.why)
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn broadcasts(&self) -> std::sync::MutexGuard<'_, super::broadcast::Broadcasts> {
        self.broadcasts.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn changed(&self) {
        self.wake.notify_one();
    }

    /// Seconds since the coordinator started: the `now` its state is told.
    pub fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

pub struct Service(pub Arc<Shared>);

fn bad(field: &str, why: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("{field}: {why}"))
}

fn check_name(field: &str, s: &str) -> Result<(), Status> {
    if s.len() > MAX_NAME {
        return Err(bad(field, format!("longer than {MAX_NAME} bytes")));
    }
    Ok(())
}

fn daemon_port(state: &State, addr: &str) -> Result<usize, Status> {
    state
        .port_of(addr)
        .ok_or_else(|| Status::failed_precondition(format!("daemon {addr} is not registered")))
}

/// Ends with the subscription: marks the daemon disconnected unless it re-subscribed since.
/// Ends itself once the daemon subscribed again (`latest` moved past its session).
struct RateStream {
    inner: WatchStream<RateUpdate>,
    shared: Arc<Shared>,
    port: usize,
    session: u64,
    latest: Arc<AtomicU64>,
}

impl Stream for RateStream {
    type Item = Result<RateUpdate, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.latest.load(Ordering::Acquire) != self.session {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            // Woken by the new subscription's nudge: superseded.
            Poll::Ready(Some(_)) if self.latest.load(Ordering::Acquire) != self.session => {
                Poll::Ready(None)
            }
            p => p.map(|o| o.map(Ok)),
        }
    }
}

impl Drop for RateStream {
    fn drop(&mut self) {
        let mut s = self.shared.lock();
        if s.unsubscribe(self.port, self.session) {
            drop(s);
            self.shared.changed();
        }
    }
}

#[tonic::async_trait]
impl Coordinator for Service {
    async fn register_coflow(
        &self,
        req: Request<RegisterCoflowRequest>,
    ) -> Result<Response<RegisterCoflowReply>, Status> {
        let r = req.into_inner();
        if !(r.deadline_s.is_finite() && r.deadline_s >= 0.0) {
            return Err(bad("deadline_s", "must be a finite number of seconds >= 0"));
        }
        if !(r.weight.is_finite() && r.weight >= 0.0) {
            return Err(bad("weight", "must be finite and >= 0"));
        }
        if r.parents.len() > 1024 {
            return Err(bad("parents", "more than 1024"));
        }
        check_name("name", &r.name)?;
        // The multi-tenant policies take a non-clairvoyant coflow's vector from its report.
        let hidden = !r.clairvoyant && self.0.board.is_some();
        if !r.clairvoyant && self.0.clairvoyant && !hidden {
            return Err(Status::failed_precondition(format!(
                "scheduler {} needs flow sizes; register the coflow as clairvoyant or run a \
                 non-clairvoyant scheduler (aalo, fair; or hug, drf, psp with report_vector)",
                self.0.scheduler
            )));
        }
        let now = self.0.now_s();
        let mut s = self.0.lock();
        if let Err(full) = s.room_for_coflow() {
            drop(s);
            return Err(self.0.refused.count(full));
        }
        let id = s.register_coflow(
            now,
            r.name,
            r.num_flows,
            (r.deadline_s > 0.0).then_some(r.deadline_s),
            if r.weight == 0.0 { 1.0 } else { r.weight },
            r.parents,
        );
        let id = id.map_err(|e| bad("parents", e))?;
        if hidden {
            s.hide_sizes(id);
        }
        drop(s);
        self.0.broadcasts().set_priority(id, r.priority);
        self.0.changed();
        tracing::info!(coflow = id, "registered");
        Ok(Response::new(RegisterCoflowReply { coflow: id }))
    }

    async fn unregister_coflow(&self, req: Request<CoflowRef>) -> Result<Response<Empty>, Status> {
        let id = req.into_inner().coflow;
        self.0.lock().unregister(id);
        if let Some(b) = &self.0.board {
            b.forget(id);
        }
        self.0.broadcasts().forget_coflow(id);
        self.0.changed();
        tracing::info!(coflow = id, "unregistered");
        Ok(Response::new(Empty {}))
    }

    async fn locate(&self, req: Request<LocateRequest>) -> Result<Response<LocateReply>, Status> {
        let r = req.into_inner();
        let broadcast = self.0.broadcasts().is_broadcast(r.coflow, &r.data_id);
        let s = self.0.lock();
        match s.locate(r.coflow, &r.data_id) {
            Some((port, size)) => Ok(Response::new(LocateReply {
                daemon: s.daemons()[port].addr.clone(),
                size_bytes: size,
                broadcast,
            })),
            None => Err(Status::not_found(format!(
                "coflow {} has no data `{}` (not put yet, or its daemon is not registered)",
                r.coflow, r.data_id
            ))),
        }
    }

    async fn register_daemon(
        &self,
        req: Request<RegisterDaemonRequest>,
    ) -> Result<Response<RegisterDaemonReply>, Status> {
        let r = req.into_inner();
        if r.protocol_version != PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "protocol version {} not supported (this coordinator speaks {PROTOCOL_VERSION})",
                r.protocol_version
            )));
        }
        if r.addr.is_empty() {
            return Err(bad("addr", "empty"));
        }
        check_name("addr", &r.addr)?;
        // The daemon's own parser (pass 34, C12): `127.0.0.1:+80`, `::1:47830` were registered.
        crate::daemon::check_advertise(&r.addr).map_err(|why| bad("addr", why))?;
        let min = crate::daemon::MIN_NIC_BYTES_PER_S;
        if !(r.nic_bytes_per_s.is_finite() && r.nic_bytes_per_s >= min) {
            return Err(bad(
                "nic_bytes_per_s",
                format!("must be finite and >= {min}"),
            ));
        }
        // Adversarial pass 33, B8: 1.7e308 was accepted and flows to it paced at 0 for ever.
        let max = crate::daemon::MAX_NIC_BYTES_PER_S;
        if r.nic_bytes_per_s > max {
            return Err(bad(
                "nic_bytes_per_s",
                format!(
                    "{:.3e} bytes/s is above {max:.3e} (1 Pbit/s, the most a daemon's \
                     --nic-rate takes)",
                    r.nic_bytes_per_s
                ),
            ));
        }
        for o in &r.objects {
            check_name("objects.data_id", &o.data_id)?;
        }
        for f in &r.flows {
            check_name("flows.data_id", &f.data_id)?;
            check_name("flows.dst", &f.dst)?;
        }
        let port = {
            let now = self.0.now_s();
            let mut s = self.0.lock();
            if s.port_of(&r.addr).is_none() && s.live_daemons() >= self.0.max_daemons {
                drop(s);
                tracing::warn!(daemon = %r.addr, "refused: {} daemons registered already", self.0.max_daemons);
                return Err(Status::resource_exhausted(format!(
                    "this coordinator takes at most {} daemons",
                    self.0.max_daemons
                )));
            }
            let port = s.port_of(&r.addr).unwrap_or(usize::MAX);
            if let Err(full) = s.room_for_report(port, &r.objects, &r.flows, true) {
                drop(s);
                return Err(self.0.refused.count(full));
            }
            s.register_daemon(now, &r.addr, r.nic_bytes_per_s, &r.objects, &r.flows)
        };
        self.0.changed();
        tracing::info!(daemon = %r.addr, port, flows = r.flows.len(), objects = r.objects.len(), "daemon registered");
        Ok(Response::new(RegisterDaemonReply {
            protocol_version: PROTOCOL_VERSION,
            port: port as u32,
            report_interval_s: self.0.report_interval_s,
        }))
    }

    async fn report_put(&self, req: Request<PutDone>) -> Result<Response<Empty>, Status> {
        let r = req.into_inner();
        let o = r.object.ok_or_else(|| bad("object", "missing"))?;
        check_name("object.data_id", &o.data_id)?;
        let now = self.0.now_s();
        let mut s = self.0.lock();
        let port = daemon_port(&s, &r.daemon)?;
        if !o.abandoned {
            if let Err(full) = s.room_for_object(port, &o) {
                drop(s);
                return Err(self.0.refused.count(full));
            }
        }
        s.put_done(now, port, &o);
        Ok(Response::new(Empty {}))
    }

    async fn start_flow(&self, req: Request<FlowStart>) -> Result<Response<Empty>, Status> {
        let r = req.into_inner();
        let f = r.flow.ok_or_else(|| bad("flow", "missing"))?;
        check_name("flow.data_id", &f.data_id)?;
        check_name("flow.dst", &f.dst)?;
        {
            let now = self.0.now_s();
            let mut s = self.0.lock();
            let port = daemon_port(&s, &r.daemon)?;
            if let Err(full) = s.room_for_flow(port, &f) {
                drop(s);
                return Err(self.0.refused.count(full));
            }
            s.start_flow(now, port, &f);
        }
        self.0.changed();
        Ok(Response::new(Empty {}))
    }

    async fn report_progress(&self, req: Request<Progress>) -> Result<Response<Empty>, Status> {
        let r = req.into_inner();
        if r.flows.len() > MAX_PROGRESS_PER_REQUEST {
            self.0
                .refused
                .progress_flows
                .fetch_add(1, Ordering::Relaxed);
            return Err(bad(
                "flows",
                format!(
                    "{} flows in one progress report, at most {MAX_PROGRESS_PER_REQUEST} (report \
                     the rest in the next)",
                    r.flows.len()
                ),
            ));
        }
        let wake = {
            let mut s = self.0.lock();
            let port = daemon_port(&s, &r.daemon)?;
            for f in &r.flows {
                s.progress(port, f.flow, f.sent_bytes, f.done, f.failed);
            }
            s.pending()
        };
        if wake {
            self.0.changed();
        }
        Ok(Response::new(Empty {}))
    }

    type SubscribeRatesStream = Pin<Box<dyn Stream<Item = Result<RateUpdate, Status>> + Send>>;

    async fn subscribe_rates(
        &self,
        req: Request<Subscribe>,
    ) -> Result<Response<Self::SubscribeRatesStream>, Status> {
        let addr = req.into_inner().daemon;
        let (port, session) = {
            let mut s = self.0.lock();
            let port = daemon_port(&s, &addr)?;
            (port, s.subscribe(port))
        };
        let latest = {
            let mut subs = (self.0.subscriptions.lock()).unwrap_or_else(|p| p.into_inner());
            subs.entry(port).or_default().clone()
        };
        latest.fetch_max(session, Ordering::AcqRel);
        let rx = {
            let mut senders = self.0.rates.lock().unwrap_or_else(|p| p.into_inner());
            while senders.len() <= port {
                senders.push(watch::channel(RateUpdate::default()).0);
            }
            let rx = senders[port].subscribe();
            // Wake the daemon's older subscriptions so they see they are superseded and end
            // (the new one gets the current table again: tables are whole, so that is
            // harmless).
            senders[port].send_modify(|_| {});
            rx
        };
        self.0.changed();
        Ok(Response::new(Box::pin(RateStream {
            inner: WatchStream::from_changes(rx),
            shared: self.0.clone(),
            port,
            session,
            latest,
        })))
    }

    async fn status(&self, _req: Request<Empty>) -> Result<Response<StatusReply>, Status> {
        let now = self.0.now_s();
        let last_decision_s = *self
            .0
            .last_decision_s
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let s = self.0.lock();
        let reply = super::status::reply(
            &s,
            now,
            &self.0.scheduler,
            last_decision_s,
            super::status::STATUS_MAX_BYTES,
        );
        Ok(Response::new(reply))
    }

    async fn start_broadcast(
        &self,
        req: Request<StartBroadcastRequest>,
    ) -> Result<Response<Empty>, Status> {
        let r = req.into_inner();
        check_name("data_id", &r.data_id)?;
        let weight = super::broadcast::weight(r.weight).map_err(refused)?;
        let (source, size) = {
            let s = self.0.lock();
            let (port, size) = s.locate(r.coflow, &r.data_id).ok_or_else(|| {
                Status::not_found(format!(
                    "coflow {} has no data `{}` to broadcast (put it first)",
                    r.coflow, r.data_id
                ))
            })?;
            (s.daemons()[port].addr.clone(), size)
        };
        let now = self.0.now_s();
        let mut b = self.0.broadcasts();
        b.start(
            r.coflow,
            &r.data_id,
            &source,
            size,
            r.block_bytes,
            &r.digest,
            r.peer_set,
            &r.mechanism,
        )
        .map_err(refused)?;
        b.classify(r.coflow, &r.data_id, now, r.priority, weight);
        drop(b);
        tracing::info!(coflow = r.coflow, data_id = %r.data_id, bytes = size, "broadcast started");
        Ok(Response::new(Empty {}))
    }

    async fn report_vector(&self, req: Request<VectorReport>) -> Result<Response<Empty>, Status> {
        let r = req.into_inner();
        let Some(board) = &self.0.board else {
            return Err(Status::failed_precondition(format!(
                "scheduler {} takes no correlation vectors; run hug, drf or psp",
                self.0.scheduler
            )));
        };
        if r.entries.is_empty() {
            board.forget(r.coflow);
            self.0.lock().policy_input_changed();
            self.0.changed();
            return Ok(Response::new(Empty {}));
        }
        let (ports, capacities, entries) = {
            let s = self.0.lock();
            if s.coflow(r.coflow).is_none() {
                return Err(bad("coflow", format!("{} is not registered", r.coflow)));
            }
            let fabric = s.fabric();
            let ports = fabric.ports();
            let mut entries = Vec::new();
            for (i, e) in r.entries.iter().enumerate() {
                check_name("entries.daemon", &e.daemon)?;
                for (side, v) in [("up", e.up), ("down", e.down)] {
                    if !(v.is_finite() && v >= 0.0) {
                        return Err(bad(
                            &format!("entries[{i}].{side}"),
                            format!("{v} for daemon {}; must be finite and >= 0", e.daemon),
                        ));
                    }
                }
                let port = daemon_port(&s, &e.daemon)?;
                if entries.iter().any(|&(l, _)| l == port as u32) {
                    return Err(bad(
                        &format!("entries[{i}].daemon"),
                        format!("{} named twice", e.daemon),
                    ));
                }
                entries.push((port as u32, e.up));
                entries.push(((ports + port) as u32, e.down));
            }
            entries.retain(|&(_, v)| v > 0.0);
            let caps = (fabric.up_bytes_per_s.iter().chain(&fabric.down_bytes_per_s))
                .map(|&c| c.max(f64::MIN_POSITIVE))
                .collect();
            (ports, caps, entries)
        };
        board
            .report(r.coflow, ports, capacities, entries)
            .map_err(|e| bad("entries", e))?;
        self.0.lock().policy_input_changed();
        self.0.changed();
        tracing::info!(coflow = r.coflow, "correlation vector reported");
        Ok(Response::new(Empty {}))
    }

    async fn broadcast_peers(
        &self,
        req: Request<BroadcastPeersRequest>,
    ) -> Result<Response<BroadcastPeersReply>, Status> {
        let r = req.into_inner();
        check_name("daemon", &r.daemon)?;
        if r.got.len() > MAX_GOT_PER_REQUEST {
            self.0.refused.broadcast_got.fetch_add(1, Ordering::Relaxed);
            return Err(bad(
                "got",
                format!(
                    "{} blocks in one request, at most {MAX_GOT_PER_REQUEST} (report the rest \
                     in the next)",
                    r.got.len()
                ),
            ));
        }
        let now = self.0.now_s();
        let connected: std::collections::HashSet<String> = {
            let s = self.0.lock();
            daemon_port(&s, &r.daemon)?;
            s.daemons()
                .iter()
                .filter(|d| d.connected)
                .map(|d| d.addr.clone())
                .collect()
        };
        let reply = self
            .0
            .broadcasts()
            .peers(now, &r, |d| connected.contains(d))
            .map_err(refused)?;
        Ok(Response::new(reply))
    }
}

fn refused(r: super::broadcast::Refused) -> Status {
    match r {
        super::broadcast::Refused::NotFound(w) => Status::not_found(w),
        super::broadcast::Refused::Invalid(w) => Status::invalid_argument(w),
    }
}
