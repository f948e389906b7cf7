//! The coordinator's overheads, measured on the real coordinator (key results rows 16 and 25
//! of the coflow thesis): how long a schedule takes to compute and to reach the daemons, how
//! long a coflow waits from its registration to READY and from READY to its rates, how many
//! messages per second the coordinator takes, and how long an Aalo coordination round takes at
//! 100 daemons and, on the coordinator's side, up to 100,000.
//!
//! The coordinator is the real one ([`crate::coordinator::spawn`], its own runtime, on
//! loopback). The daemons are **in-process protocol daemons**: each has its own gRPC
//! connection, registers, follows its rate stream (`SubscribeRates`) and sends `StartFlow` and
//! `ReportProgress` as a daemon does, but moves no bytes: only the control plane is measured.
//! They share the machine's cores with the coordinator.
//!
//! The growth towards 100,000 daemons ([`aalo_scale`]) is an in-process bench of the
//! coordinator's side of a round with synthetic reports: decode and apply every daemon's
//! progress report, decide (Aalo), encode every daemon's rate table. The network between is
//! not in it.
//!
//! `cargo run --release -p coflowkit-runtime --example overheads` prints the tables.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coflowkit_sched::{build, SchedOptions, SchedulerKind};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinSet;

use crate::auth::{Token, PROTOCOL_VERSION};
use crate::coordinator::state::State;
use crate::coordinator::{self, CoordinatorConfig};
use crate::error::{Error, Result};
use crate::proto::progress::Sent;
use crate::proto::{
    CoflowRef, FlowInfo, FlowStart, Progress, RegisterCoflowRequest, RegisterDaemonRequest,
    Subscribe,
};
use crate::rpc::{self, Client};
use crate::running::Running;

/// Average and tail of a sample (milliseconds or whatever was pushed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub avg: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    /// Of `v` (NaN everywhere when empty). Percentiles are nearest-rank.
    pub fn of(v: &[f64]) -> Stats {
        let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        s.sort_by(f64::total_cmp);
        let rank = |p: f64| -> f64 {
            if s.is_empty() {
                return f64::NAN;
            }
            let i = ((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1;
            s[i]
        };
        Stats {
            n: s.len(),
            avg: if s.is_empty() {
                f64::NAN
            } else {
                s.iter().sum::<f64>() / s.len() as f64
            },
            p50: rank(0.50),
            p95: rank(0.95),
            p99: rank(0.99),
            max: s.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// Row 16's setting: Varys on `daemons` protocol daemons.
#[derive(Debug, Clone)]
pub struct VarysSetting {
    pub daemons: usize,
    /// Coflows measured, one after the other.
    pub coflows: usize,
    /// Each coflow has 1 to this many flows (between random daemons; sizes 1 MB to 100 MB).
    pub max_width: usize,
    /// Large coflows (10 to 100 GB a flow) active all along behind the measured ones.
    pub background: usize,
    /// How long the message-rate test runs.
    pub blast: Duration,
    pub seed: u64,
}

impl Default for VarysSetting {
    fn default() -> Self {
        VarysSetting {
            daemons: 100,
            coflows: 100,
            max_width: 100,
            background: 10,
            blast: Duration::from_secs(2),
            seed: 1,
        }
    }
}

/// Row 16's numbers (milliseconds unless named otherwise).
#[derive(Debug, Clone)]
pub struct VarysOverheads {
    pub daemons: usize,
    /// Flows of the measured coflows.
    pub flows: usize,
    /// Wall time of the coordinator's round that gave a coflow its rates
    /// (`coflowkit_last_round_seconds` of `/metrics`, read once every sender holds its rates).
    pub schedule_ms: Stats,
    /// From the registration's sending to the acknowledgement of the get that made the coflow
    /// READY (every get sent at once, so this is the control plane's share only).
    pub ready_ms: Stats,
    /// From the READY-making get's sending to the first sender daemon holding its rate.
    pub first_rates_ms: Stats,
    /// From the same to every sender daemon of the coflow holding its rate.
    pub all_rates_ms: Stats,
    /// `all_rates` less `schedule`: the time to get the decided rates to the daemons.
    pub distribute_ms: Stats,
    /// Control messages (`ReportProgress` from every daemon at once, each waiting for its
    /// reply before the next) the coordinator answered per second.
    pub msgs_per_s: f64,
}

/// Row 25's live part: Aalo coordination rounds on `daemons` protocol daemons.
#[derive(Debug, Clone)]
pub struct AaloSetting {
    pub daemons: usize,
    pub rounds: usize,
    pub seed: u64,
}

impl Default for AaloSetting {
    fn default() -> Self {
        AaloSetting {
            daemons: 100,
            rounds: 200,
            seed: 1,
        }
    }
}

#[derive(Debug, Clone)]
pub struct AaloRounds {
    pub daemons: usize,
    /// A round: every daemon at once reports the bytes of its background flow and starts a
    /// new flow of the round's coflow; from the first report's sending to every daemon
    /// holding a rate table that gives its new flow a rate above 0.
    pub round_ms: Stats,
}

/// One line of [`aalo_scale`] (milliseconds per round, averaged over the rounds).
#[derive(Debug, Clone, Copy)]
pub struct ScaleRow {
    pub daemons: usize,
    pub coflows: usize,
    pub rounds: usize,
    /// Decode and apply every daemon's progress report.
    pub reports_ms: f64,
    /// The full round: snapshot, Aalo, every daemon's rate table.
    pub decide_ms: f64,
    /// Encode every daemon's rate table (what goes on its stream).
    pub encode_ms: f64,
    pub total_ms: f64,
    /// The slowest round's total.
    pub max_total_ms: f64,
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn setting_error(what: &str) -> Error {
    Error::Config(format!("overheads: {what}"))
}

/// When each (daemon, flow) first appeared in that daemon's rate table with a rate above 0.
#[derive(Default)]
struct Seen(Mutex<HashMap<(usize, u64), Instant>>);

impl Seen {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, u64), Instant>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A coordinator on loopback and `n` protocol daemons following their rate streams.
struct Fleet {
    coordinator: Option<Running>,
    metrics: Option<SocketAddr>,
    app: Client,
    daemons: Vec<(String, Client)>,
    seen: Arc<Seen>,
    streams: JoinSet<()>,
}

const TOKEN: &str = "coflowkit-overheads-bench";

impl Fleet {
    async fn start(kind: SchedulerKind, n: usize) -> Result<Fleet> {
        let token = Token::new(TOKEN)?;
        let mut config = CoordinatorConfig::new(token.clone(), kind);
        config.metrics = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
        config.max_daemons = n.max(1);
        let running = coordinator::spawn(config, SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let addr = running.addr().to_string();
        let metrics = running.metrics_addr();
        let app = rpc::connect(&addr, &token).await?;
        let seen = Arc::new(Seen::default());
        let mut streams = JoinSet::new();
        let mut daemons = Vec::with_capacity(n);
        for i in 0..n {
            // A daemon's identity is its data address; nothing listens there.
            let me = format!("10.{}.{}.{}:7401", (i >> 16) & 255, (i >> 8) & 255, i & 255);
            let mut c = rpc::connect(&addr, &token).await?;
            c.register_daemon(RegisterDaemonRequest {
                protocol_version: PROTOCOL_VERSION,
                addr: me.clone(),
                nic_bytes_per_s: 125e6,
                objects: vec![],
                flows: vec![],
            })
            .await
            .map_err(|e| setting_error(&format!("registering daemon {me}: {e}")))?;
            let mut stream = c
                .subscribe_rates(Subscribe { daemon: me.clone() })
                .await
                .map_err(|e| setting_error(&format!("subscribing daemon {me}: {e}")))?
                .into_inner();
            let seen = seen.clone();
            streams.spawn(async move {
                while let Ok(Some(u)) = stream.message().await {
                    let t = Instant::now();
                    let mut m = seen.lock();
                    // Listed at 0 (not READY yet, or waiting its turn) is not scheduled.
                    for r in u.rates.iter().filter(|r| r.bytes_per_s > 0.0) {
                        m.entry((i, r.flow)).or_insert(t);
                    }
                }
            });
            daemons.push((me, c));
        }
        Ok(Fleet {
            coordinator: Some(running),
            metrics,
            app,
            daemons,
            seen,
            streams,
        })
    }

    /// When the first and the last of `keys` appeared at their daemons (waits up to 30 s).
    async fn wait_rates(&self, keys: &[(usize, u64)]) -> Result<(Instant, Instant)> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            {
                let m = self.seen.lock();
                let times: Option<Vec<Instant>> = keys.iter().map(|k| m.get(k).copied()).collect();
                if let Some(t) = times {
                    let first = t.iter().min().copied().unwrap_or_else(Instant::now);
                    let last = t.iter().max().copied().unwrap_or_else(Instant::now);
                    return Ok((first, last));
                }
            }
            if Instant::now() > deadline {
                return Err(setting_error("rates did not reach the daemons within 30 s"));
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    }

    /// `coflowkit_last_round_seconds` of the coordinator's `/metrics`.
    async fn last_round_s(&self) -> Result<f64> {
        let addr = (self.metrics).ok_or_else(|| setting_error("no metrics endpoint"))?;
        let io = |e| Error::io("reading /metrics", e);
        let mut s = tokio::net::TcpStream::connect(addr).await.map_err(io)?;
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .map_err(io)?;
        let mut body = String::new();
        s.read_to_string(&mut body).await.map_err(io)?;
        (body.lines())
            .find_map(|l| l.strip_prefix("coflowkit_last_round_seconds "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| setting_error("/metrics has no coflowkit_last_round_seconds"))
    }

    async fn start_flow(&self, d: usize, f: FlowInfo) -> Result<()> {
        let (me, c) = &self.daemons[d];
        c.clone()
            .start_flow(FlowStart {
                daemon: me.clone(),
                flow: Some(f),
            })
            .await
            .map_err(|e| setting_error(&format!("start_flow on daemon {me}: {e}")))?;
        Ok(())
    }

    async fn report(&self, d: usize, flows: Vec<Sent>) -> Result<()> {
        let (me, c) = &self.daemons[d];
        c.clone()
            .report_progress(Progress {
                daemon: me.clone(),
                flows,
            })
            .await
            .map_err(|e| setting_error(&format!("report_progress on daemon {me}: {e}")))?;
        Ok(())
    }

    /// Every daemon's `start_flow`s (or reports) at once.
    async fn all<F, Fut>(&self, jobs: Vec<(usize, F)>) -> Result<()>
    where
        F: FnOnce(String, Client) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<(), tonic::Status>> + Send + 'static,
    {
        let mut set = JoinSet::new();
        for (d, job) in jobs {
            let (me, c) = &self.daemons[d];
            set.spawn(job(me.clone(), c.clone()));
        }
        while let Some(r) = set.join_next().await {
            r.map_err(|e| setting_error(&format!("a daemon's task: {e}")))?
                .map_err(|e| setting_error(&format!("a daemon's request: {e}")))?;
        }
        Ok(())
    }

    fn stop(mut self) {
        self.streams.abort_all();
        if let Some(c) = self.coordinator.take() {
            c.kill();
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the overheads runtime", e))
}

fn check_fleet(daemons: usize) -> Result<()> {
    if !(2..=4096).contains(&daemons) {
        return Err(setting_error(&format!(
            "{daemons} daemons; 2 to 4096 (use aalo_scale beyond)"
        )));
    }
    Ok(())
}

/// Row 16 on the live coordinator (Varys); see [`VarysOverheads`].
pub fn varys(s: &VarysSetting) -> Result<VarysOverheads> {
    check_fleet(s.daemons)?;
    if s.coflows == 0 || s.max_width == 0 {
        return Err(setting_error("coflows and max_width must be at least 1"));
    }
    runtime()?.block_on(varys_on(s))
}

async fn varys_on(s: &VarysSetting) -> Result<VarysOverheads> {
    let fleet = Fleet::start(SchedulerKind::Varys, s.daemons).await?;
    let n = s.daemons as u64;
    let mut next = xorshift(s.seed);
    let mut flow_id = 0u64;
    let (mut schedule, mut ready, mut first, mut all, mut distribute) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut flows = 0;
    // The background: `background` large coflows (10 to 100 GB a flow) that stay all along, so
    // every round schedules them too; a measured coflow (1 to 100 MB a flow) is smaller, so
    // Varys (SEBF) serves it first and its first round after READY gives every flow a rate.
    for _ in 0..s.background {
        let width = 1 + (next() % s.max_width as u64) as usize;
        let id = (fleet.app.clone())
            .register_coflow(RegisterCoflowRequest {
                num_flows: width as u32,
                clairvoyant: true,
                weight: 1.0,
                ..Default::default()
            })
            .await
            .map_err(|e| setting_error(&format!("register_coflow: {e}")))?
            .into_inner()
            .coflow;
        for _ in 0..width {
            flow_id += 1;
            let src = (next() % n) as usize;
            let dst = fleet.daemons[((src as u64 + 1 + next() % (n - 1)) % n) as usize]
                .0
                .clone();
            let f = FlowInfo {
                flow: flow_id,
                coflow: id,
                data_id: String::new(),
                dst,
                size_bytes: 10_000_000_000 * (1 + next() % 10),
                sent_bytes: 0,
                size_pending: false,
            };
            fleet.start_flow(src, f).await?;
        }
    }
    for _ in 0..s.coflows {
        let width = 1 + (next() % s.max_width as u64) as usize;
        let mut app = fleet.app.clone();
        let t_reg = Instant::now();
        let id = app
            .register_coflow(RegisterCoflowRequest {
                num_flows: width as u32,
                clairvoyant: true,
                weight: 1.0,
                ..Default::default()
            })
            .await
            .map_err(|e| setting_error(&format!("register_coflow: {e}")))?
            .into_inner()
            .coflow;
        let mine: Vec<(usize, u64, u64)> = (0..width)
            .map(|_| {
                flow_id += 1;
                let src = (next() % n) as usize;
                (src, flow_id, 1_000_000 * (1 + next() % 100))
            })
            .collect();
        let info = |&(_, flow, size): &(usize, u64, u64), dst: String| FlowInfo {
            flow,
            coflow: id,
            data_id: String::new(),
            dst,
            size_bytes: size,
            sent_bytes: 0,
            size_pending: false,
        };
        // Every get but the last at once, then the one that makes the coflow READY.
        let mut jobs = Vec::new();
        for f in &mine[..width - 1] {
            let dst = fleet.daemons[((f.0 as u64 + 1 + next() % (n - 1)) % n) as usize]
                .0
                .clone();
            let fi = info(f, dst);
            jobs.push((f.0, move |me: String, mut c: Client| async move {
                c.start_flow(FlowStart {
                    daemon: me,
                    flow: Some(fi),
                })
                .await
                .map(|_| ())
            }));
        }
        fleet.all(jobs).await?;
        let last = mine[width - 1];
        let dst = fleet.daemons[((last.0 as u64 + 1 + next() % (n - 1)) % n) as usize]
            .0
            .clone();
        let t_ready = Instant::now();
        fleet.start_flow(last.0, info(&last, dst)).await?;
        let acked = Instant::now();
        let keys: Vec<(usize, u64)> = mine.iter().map(|&(d, f, _)| (d, f)).collect();
        let (t_first, t_all) = fleet.wait_rates(&keys).await?;
        let round_ms = fleet.last_round_s().await? * 1e3;
        let all_ms = ms(t_all.saturating_duration_since(t_ready));
        schedule.push(round_ms);
        ready.push(ms(acked - t_reg));
        first.push(ms(t_first.saturating_duration_since(t_ready)));
        all.push(all_ms);
        distribute.push((all_ms - round_ms).max(0.0));
        flows += width;
        finish(&fleet, id, &mine).await?;
        tokio::time::sleep(SETTLE).await;
    }
    // The message rate: every daemon reports progress of one flow of a long coflow, each
    // waiting for the reply before the next, for `blast`.
    let mut app = fleet.app.clone();
    let id = app
        .register_coflow(RegisterCoflowRequest {
            clairvoyant: true,
            weight: 1.0,
            ..Default::default()
        })
        .await
        .map_err(|e| setting_error(&format!("register_coflow: {e}")))?
        .into_inner()
        .coflow;
    let mut jobs = Vec::new();
    for d in 0..s.daemons {
        flow_id += 1;
        let f = FlowInfo {
            flow: flow_id,
            coflow: id,
            data_id: String::new(),
            dst: fleet.daemons[(d + 1) % s.daemons].0.clone(),
            size_bytes: u64::MAX / 4,
            sent_bytes: 0,
            size_pending: false,
        };
        jobs.push((d, move |me: String, mut c: Client| async move {
            c.start_flow(FlowStart {
                daemon: me,
                flow: Some(f),
            })
            .await
            .map(|_| ())
        }));
    }
    fleet.all(jobs).await?;
    let until = Instant::now() + s.blast;
    let t0 = Instant::now();
    let mut set = JoinSet::new();
    for (d, (me, c)) in fleet.daemons.iter().enumerate() {
        let (me, mut c) = (me.clone(), c.clone());
        let flow = flow_id - (s.daemons - 1 - d) as u64;
        set.spawn(async move {
            let mut sent = 0u64;
            let mut count = 0u64;
            while Instant::now() < until {
                sent += 1_000_000;
                let p = Progress {
                    daemon: me.clone(),
                    flows: vec![Sent {
                        flow,
                        sent_bytes: sent,
                        done: false,
                        failed: false,
                    }],
                };
                if c.report_progress(p).await.is_err() {
                    break;
                }
                count += 1;
            }
            count
        });
    }
    let mut msgs = 0u64;
    while let Some(r) = set.join_next().await {
        msgs += r.map_err(|e| setting_error(&format!("a daemon's task: {e}")))?;
    }
    let msgs_per_s = msgs as f64 / t0.elapsed().as_secs_f64();
    fleet.stop();
    Ok(VarysOverheads {
        daemons: s.daemons,
        flows,
        schedule_ms: Stats::of(&schedule),
        ready_ms: Stats::of(&ready),
        first_rates_ms: Stats::of(&first),
        all_rates_ms: Stats::of(&all),
        distribute_ms: Stats::of(&distribute),
        msgs_per_s,
    })
}

/// Every flow of `id` reported done by its daemon, then the coflow unregistered.
async fn finish(fleet: &Fleet, id: u64, flows: &[(usize, u64, u64)]) -> Result<()> {
    let mut by_daemon: HashMap<usize, Vec<Sent>> = HashMap::new();
    for &(d, flow, size) in flows {
        by_daemon.entry(d).or_default().push(Sent {
            flow,
            sent_bytes: size,
            done: true,
            failed: false,
        });
    }
    for (d, sent) in by_daemon {
        fleet.report(d, sent).await?;
    }
    fleet
        .app
        .clone()
        .unregister_coflow(CoflowRef { coflow: id })
        .await
        .map_err(|e| setting_error(&format!("unregister_coflow: {e}")))?;
    Ok(())
}

/// Row 25 on the live coordinator (Aalo); see [`AaloRounds`].
pub fn aalo_rounds(s: &AaloSetting) -> Result<AaloRounds> {
    check_fleet(s.daemons)?;
    if s.rounds == 0 {
        return Err(setting_error("rounds must be at least 1"));
    }
    runtime()?.block_on(aalo_on(s))
}

async fn aalo_on(s: &AaloSetting) -> Result<AaloRounds> {
    let fleet = Fleet::start(SchedulerKind::Aalo, s.daemons).await?;
    let n = s.daemons as u64;
    let mut next = xorshift(s.seed);
    let mut flow_id = 0u64;
    let dst_of = |d: usize, r: u64| {
        fleet.daemons[((d as u64 + 1 + r % (n - 1)) % n) as usize]
            .0
            .clone()
    };
    // The background: one large coflow with a flow on every daemon, which has sent enough to
    // sit in a low queue. Each round's report is of its bytes; the round's new coflow enters
    // the first queue and is served ahead of it.
    let bg = register(&fleet, false, 0).await?;
    let mut bg_flows = Vec::with_capacity(s.daemons);
    for d in 0..s.daemons {
        flow_id += 1;
        bg_flows.push(flow_id);
        let f = FlowInfo {
            flow: flow_id,
            coflow: bg,
            data_id: String::new(),
            dst: dst_of(d, next()),
            size_bytes: 1_000_000_000_000,
            sent_bytes: 0,
            size_pending: false,
        };
        fleet.start_flow(d, f).await?;
    }
    let mut sent = 1_000_000_000u64;
    for (d, &flow) in bg_flows.iter().enumerate() {
        fleet.report(d, vec![progress(flow, sent, false)]).await?;
    }
    // Past a coordination tick, so the background's queue is settled.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut rounds = Vec::with_capacity(s.rounds);
    for _ in 0..s.rounds {
        let id = register(&fleet, false, 0).await?;
        sent += 10_000_000;
        let mut mine = Vec::with_capacity(s.daemons);
        let mut jobs = Vec::with_capacity(s.daemons);
        for (d, &bg_flow) in bg_flows.iter().enumerate() {
            flow_id += 1;
            let size = 1_000_000 * (1 + next() % 1000);
            mine.push((d, flow_id, size));
            let f = FlowInfo {
                flow: flow_id,
                coflow: id,
                data_id: String::new(),
                dst: dst_of(d, next()),
                size_bytes: size,
                sent_bytes: 0,
                size_pending: false,
            };
            jobs.push((d, move |me: String, mut c: Client| async move {
                c.report_progress(Progress {
                    daemon: me.clone(),
                    flows: vec![progress(bg_flow, sent, false)],
                })
                .await?;
                c.start_flow(FlowStart {
                    daemon: me,
                    flow: Some(f),
                })
                .await
                .map(|_| ())
            }));
        }
        let t0 = Instant::now();
        fleet.all(jobs).await?;
        let keys: Vec<(usize, u64)> = mine.iter().map(|&(d, f, _)| (d, f)).collect();
        let (_, t_all) = fleet.wait_rates(&keys).await?;
        rounds.push(ms(t_all.saturating_duration_since(t0)));
        // Untimed: the round's coflow ends, and the rounds that follows settle (past the next
        // coordination tick), before the next.
        finish(&fleet, id, &mine).await?;
        tokio::time::sleep(SETTLE).await;
    }
    fleet.stop();
    Ok(AaloRounds {
        daemons: s.daemons,
        round_ms: Stats::of(&rounds),
    })
}

/// The pause between measured coflows or rounds, so that the rounds the previous one's end
/// caused are over.
const SETTLE: Duration = Duration::from_millis(20);

fn progress(flow: u64, sent_bytes: u64, done: bool) -> Sent {
    Sent {
        flow,
        sent_bytes,
        done,
        failed: false,
    }
}

/// A coflow registered by the application (`num_flows` 0: READY at once).
async fn register(fleet: &Fleet, clairvoyant: bool, num_flows: u32) -> Result<u64> {
    Ok((fleet.app.clone())
        .register_coflow(RegisterCoflowRequest {
            num_flows,
            clairvoyant,
            weight: 1.0,
            ..Default::default()
        })
        .await
        .map_err(|e| setting_error(&format!("register_coflow: {e}")))?
        .into_inner()
        .coflow)
}

/// The coordinator's side of an Aalo round at `daemons` daemons with one flow each, in
/// `coflows` coflows (the thesis ran about 100 concurrent ones): `rounds` rounds, Δ = 10 ms
/// apart, each decoding and applying every daemon's progress report, deciding in full and
/// encoding every daemon's rate table.
pub fn aalo_scale(daemons: usize, coflows: usize, rounds: usize) -> Result<ScaleRow> {
    if !(2..=1_000_000).contains(&daemons) {
        return Err(setting_error(&format!("{daemons} daemons; 2 to 1,000,000")));
    }
    if coflows == 0 || coflows > daemons || rounds == 0 {
        return Err(setting_error(
            "coflows must be 1 to the daemons, rounds at least 1",
        ));
    }
    let mut s = State::new(1);
    let mut next = xorshift(7);
    let addrs: Vec<String> = (0..daemons)
        .map(|i| format!("10.{}.{}.{}:7401", (i >> 16) & 255, (i >> 8) & 255, i & 255))
        .collect();
    for a in &addrs {
        let p = s.register_daemon(0.0, a, 125e6, &[], &[]);
        s.set_connected(p, true);
    }
    let ids: Vec<u64> = (0..coflows)
        .map(|_| {
            s.register_coflow(0.0, String::new(), 0, None, 1.0, vec![])
                .map_err(|e| setting_error(&format!("register_coflow: {e}")))
        })
        .collect::<Result<_>>()?;
    let n = daemons as u64;
    let sizes: Vec<u64> = (0..daemons)
        .map(|_| 1_000_000_000 * (1 + next() % 100))
        .collect();
    for (d, &size) in sizes.iter().enumerate() {
        let dst = &addrs[((d as u64 + 1 + next() % (n - 1)) % n) as usize];
        s.start_flow(
            0.0,
            d,
            &FlowInfo {
                flow: d as u64,
                coflow: ids[d % coflows],
                data_id: String::new(),
                dst: dst.clone(),
                size_bytes: size,
                sent_bytes: 0,
                size_pending: false,
            },
        );
    }
    let mut sched = build(SchedulerKind::Aalo, &SchedOptions::default());
    let _ = s.decide(sched.as_mut(), 0.0);
    let (mut rep, mut dec, mut enc, mut max) = (0.0, 0.0, 0.0, 0.0f64);
    let mut encoded = 0usize;
    for r in 1..=rounds {
        // Each daemon's report as it arrives on the wire: its flow's bytes so far (each
        // daemon at its own pace, so the coflows' queues move).
        let wire: Vec<Vec<u8>> = (0..daemons)
            .map(|d| {
                Progress {
                    daemon: addrs[d].clone(),
                    flows: vec![Sent {
                        flow: d as u64,
                        sent_bytes: (r as u64 * 1_250_000 * (1 + d as u64 % 8)).min(sizes[d] - 1),
                        done: false,
                        failed: false,
                    }],
                }
                .encode_to_vec()
            })
            .collect();
        let t = Instant::now();
        for (d, bytes) in wire.iter().enumerate() {
            let p = Progress::decode(bytes.as_slice())
                .map_err(|e| setting_error(&format!("decoding a report: {e}")))?;
            for f in &p.flows {
                s.progress(d, f.flow, f.sent_bytes, f.done, f.failed);
            }
        }
        let t1 = Instant::now();
        let (_, updates) = s.decide(sched.as_mut(), r as f64 * 0.01);
        let t2 = Instant::now();
        for u in &updates {
            encoded += u.encode_to_vec().len();
        }
        let t3 = Instant::now();
        rep += ms(t1 - t);
        dec += ms(t2 - t1);
        enc += ms(t3 - t2);
        max = max.max(ms(t3 - t));
    }
    // Keep the encoding from being optimized away.
    if encoded == 0 {
        return Err(setting_error("no rate table was encoded"));
    }
    let k = rounds as f64;
    Ok(ScaleRow {
        daemons,
        coflows,
        rounds,
        reports_ms: rep / k,
        decide_ms: dec / k,
        encode_ms: enc / k,
        total_ms: (rep + dec + enc) / k,
        max_total_ms: max,
    })
}
