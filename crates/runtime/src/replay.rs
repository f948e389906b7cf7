//! Replaying a trace as real transfers on one machine: a coordinator and one daemon per host on
//! loopback sockets (or, with `netns`, each host in its own network namespace behind `tc` rate
//! limits; see `coflowkit_testbed`), a client per host. Every coflow's data is put on its senders' daemons before
//! the clock starts (mappers write their output before the shuffle), and at the coflow's arrival
//! its receivers `get` every flow at once; the coflow completes when the last get does.
//!
//! A coflow's deadline (`Coflow::deadline_s`) is registered with it (clairvoyant replays), so
//! Varys's deadline mode admits or rejects it; whether it was met is for the caller to judge
//! from its CCT.
//!
//! The trace must already be in the shape to run: its ports are the hosts, sizes are whole bytes.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use coflowkit_model::Trace;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::client::{Client, ClientConfig, CoflowOptions};
use crate::coordinator::{self, CoordinatorConfig};
use crate::daemon::{self, DaemonConfig};
use crate::error::{Error, Result};
use crate::{rpc, HostRuntime, Running, Token};
use coflowkit_testbed::NetnsCluster;

/// How a replay runs.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub scheduler: SchedulerKind,
    pub options: SchedOptions,
    /// NIC of each host (one per host), bytes per second each way: paced by the daemons, or,
    /// with `netns`, the `tc` rate of the host's veth (on the wire).
    pub nic_bytes_per_s: Vec<f64>,
    /// Each host in its own network namespace (needs root; see `coflowkit_testbed::available`).
    pub netns: bool,
    pub mem_limit_bytes: u64,
    /// Spill directory root (one sub-directory per daemon); `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    pub tick: Option<Duration>,
    /// Register every coflow non-clairvoyant (its flow sizes hidden from the scheduler): a
    /// non-clairvoyant policy sees no difference; hug, drf and psp then use the vector
    /// `options.hug_vectors` estimates (e.g. from measured rates) instead of MADD's. A
    /// clairvoyant policy that cannot run without sizes (varys, sebf...) is refused.
    pub non_clairvoyant: bool,
    /// hug, drf, psp: enforce the coflows' uplink reservations and caps with htb classes on
    /// each host's shaped NIC (`coflowkit_testbed::htb`) instead of the daemons' pacing; the
    /// coordinator runs `tenant_local` (a capped flow's own rate is its downlink ceiling).
    /// Needs `netns`.
    pub htb: bool,
}

/// One coflow's real outcome (times in seconds from the replay's start).
#[derive(Debug, Clone)]
pub struct Replayed {
    /// Index into the trace's coflows.
    pub index: usize,
    pub arrival_s: f64,
    pub finish_s: f64,
    pub cct_s: f64,
    /// How long after its arrival the coflow's data was still being put (0 = staged in time);
    /// included in `cct_s`.
    pub late_put_s: f64,
    /// Completion time of each flow (from arrival), in the coflow's flow order.
    pub fcts_s: Vec<f64>,
}

/// Start the cluster, replay, stop the cluster. Results in trace order. An error carries the
/// connection trouble met on the way (an accept that failed on EMFILE was only a warning).
pub async fn replay(trace: &Trace, cfg: &ReplayConfig) -> Result<Vec<Replayed>> {
    let start = std::time::Instant::now();
    replay_cluster(trace, cfg)
        .await
        .map_err(|e| crate::trouble::explained(e, start))
}

async fn replay_cluster(trace: &Trace, cfg: &ReplayConfig) -> Result<Vec<Replayed>> {
    let hosts = trace.ports as usize;
    if hosts == 0 {
        return Err(Error::Config("the trace has no ports".into()));
    }
    if cfg.nic_bytes_per_s.len() != hosts {
        return Err(Error::Config(format!(
            "{} NIC rates for {hosts} hosts",
            cfg.nic_bytes_per_s.len()
        )));
    }
    let multi_tenant = matches!(
        cfg.scheduler,
        SchedulerKind::Hug | SchedulerKind::Drf | SchedulerKind::Psp
    );
    if cfg.non_clairvoyant && build(cfg.scheduler, &cfg.options).clairvoyant() && !multi_tenant {
        return Err(Error::Config(format!(
            "scheduler {} needs flow sizes: replay it clairvoyant, or non-clairvoyant under a \
             non-clairvoyant scheduler (aalo, fair...) or hug, drf, psp",
            cfg.scheduler
        )));
    }
    if cfg.htb && !cfg.netns {
        return Err(Error::Config(
            "htb enforcement needs the network-namespace cluster (netns)".into(),
        ));
    }
    // Loopback: everything on 127.0.0.1 and this runtime. Netns: the coordinator on the
    // control bridge's address in the root namespace (daemons and clients reach it over their
    // unshaped control NIC); each host's daemon and client inside the host, their data on the
    // shaped NIC.
    let net = if cfg.netns {
        Some(NetnsCluster::create(&cfg.nic_bytes_per_s)?)
    } else {
        None
    };
    let ip = |h: Option<usize>| -> IpAddr {
        match (&net, h) {
            (None, _) => Ipv4Addr::LOCALHOST.into(),
            (Some(n), None) => n.control_ip().into(),
            (Some(n), Some(h)) => n.hosts()[h].ip.into(),
        }
    };
    let token = Token::new(&format!(
        "replay-{}",
        std::process::id() as u64 * 7919 + 12345
    ))?;
    let mut ccfg = CoordinatorConfig::new(token.clone(), cfg.scheduler);
    ccfg.options = cfg.options.clone();
    ccfg.tick = cfg.tick;
    ccfg.tenant_local |= cfg.htb;
    let coordinator = coordinator::spawn(ccfg, SocketAddr::new(ip(None), 0))?;
    let caddr = coordinator.addr().to_string();
    let mut daemons: Vec<Running> = Vec::new();
    for h in 0..hosts {
        let mut d = DaemonConfig::new(caddr.clone(), token.clone(), cfg.nic_bytes_per_s[h]);
        d.mem_limit_bytes = cfg.mem_limit_bytes;
        d.data_dir = cfg.data_dir.as_ref().map(|p| p.join(format!("host{h}")));
        d.htb = cfg.htb.then(|| "eth0".to_string());
        let addr = SocketAddr::new(ip(Some(h)), 0);
        daemons.push(match &net {
            Some(n) => n.in_host(h, || daemon::spawn(d, addr))??,
            None => daemon::spawn(d, addr)?,
        });
    }
    wait_connected(&caddr, &token, hosts).await?;
    // Each host's client runs where the host is: its sockets (to the coordinator, its puts to
    // its daemon, its gets from others) start on that host's runtime.
    let runtimes: Vec<HostRuntime> = match &net {
        Some(n) => (0..hosts)
            .map(|h| HostRuntime::new(n, h))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let handles: Vec<Handle> = match runtimes.is_empty() {
        true => vec![Handle::current(); hosts],
        false => runtimes.iter().map(|r| r.handle().clone()).collect(),
    };
    let mut clients = Vec::new();
    for (d, h) in daemons.iter().zip(&handles) {
        let c = ClientConfig::new(&caddr, &d.addr().to_string(), token.clone());
        clients.push(
            h.spawn(Client::connect(c))
                .await
                .map_err(|e| Error::Config(format!("connecting a client: {e}")))??,
        );
    }
    let clairvoyant = build(cfg.scheduler, &cfg.options).clairvoyant() && !cfg.non_clairvoyant;
    let result = run(trace, Arc::new(clients), Arc::new(handles), clairvoyant).await;
    drop(runtimes);
    drop(daemons);
    drop(coordinator);
    drop(net);
    result
}

/// Waits (4 s at most) until `n` daemons are connected to the coordinator at `addr`; the error
/// says how many did and carries the cause the daemons or the coordinator met, if any (it was
/// only in a warning: `replay --local` at 20-30 descriptors failed on EMFILE).
pub(crate) async fn wait_connected(addr: &str, token: &Token, n: usize) -> Result<()> {
    // Trouble noted while the daemons started (they are spawned just before) counts too.
    let start = std::time::Instant::now() - Duration::from_secs(5);
    let why = |e: Error| crate::trouble::explained(e, start);
    let mut c = rpc::connect(addr, token).await.map_err(why)?;
    let mut connected = 0;
    for _ in 0..400 {
        let s = c
            .status(crate::proto::Empty {})
            .await
            .map_err(|s| why(Error::rpc(addr, s)))?
            .into_inner();
        connected = s.daemons.iter().filter(|d| d.connected).count();
        if connected >= n {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(why(Error::Config(format!(
        "only {connected} of the {n} daemons connected within 4 s"
    ))))
}

struct Staged {
    coflow: u64,
    done_at: Option<Instant>,
    error: Option<String>,
}

/// `hosts[h]` runs host `h`'s puts and gets.
async fn run(
    trace: &Trace,
    clients: Arc<Vec<Client>>,
    hosts: Arc<Vec<Handle>>,
    clairvoyant: bool,
) -> Result<Vec<Replayed>> {
    let mut order: Vec<usize> = (0..trace.coflows.len()).collect();
    order.sort_by(|&a, &b| {
        trace.coflows[a]
            .arrival_s
            .total_cmp(&trace.coflows[b].arrival_s)
    });
    let n = trace.coflows.len();
    let staged: Arc<Vec<std::sync::Mutex<Option<Staged>>>> =
        Arc::new((0..n).map(|_| std::sync::Mutex::new(None)).collect());
    let staged_signal = Arc::new(Notify::new());
    let trace = Arc::new(trace.clone());

    // Stage: register and put every coflow's data, in arrival order.
    let stager = {
        let (trace, clients, hosts, staged, signal) = (
            trace.clone(),
            clients.clone(),
            hosts.clone(),
            staged.clone(),
            staged_signal.clone(),
        );
        let order = order.clone();
        tokio::spawn(async move {
            for &i in &order {
                let c = &trace.coflows[i];
                let flows: Vec<_> = c.flows.iter().filter(|f| f.bytes >= 1.0).collect();
                let opts = if clairvoyant {
                    // A deadline (relative to the arrival) goes to the coordinator with the
                    // flow count: it counts from the coflow's READY (its last get), which is
                    // its arrival here, not from this registration during staging. A
                    // non-clairvoyant registration has no READY to count from, and no
                    // non-clairvoyant policy reads deadlines: it is not sent.
                    let o = CoflowOptions::flows(flows.len() as u32);
                    match c.deadline_s.filter(|d| d.is_finite() && *d > 0.0) {
                        Some(d) => o.deadline(Duration::from_secs_f64(d)),
                        None => o,
                    }
                } else {
                    CoflowOptions {
                        num_flows: flows.len() as u32,
                        non_clairvoyant: true,
                        ..Default::default()
                    }
                };
                let res: Result<u64> = async {
                    let id = clients[0].register(opts.name(&c.id.to_string())).await?;
                    let mut puts = JoinSet::new();
                    for (j, f) in flows.iter().enumerate() {
                        let client = clients[f.src as usize].clone();
                        let len = f.bytes as u64;
                        puts.spawn_on(
                            async move {
                                client
                                    .put_stream(id, &format!("f{j}"), Pattern::new(j as u64, len))
                                    .await
                            },
                            &hosts[f.src as usize],
                        );
                    }
                    all_or_first_error(puts).await?;
                    Ok(id)
                }
                .await;
                *staged[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(match res {
                    Ok(coflow) => Staged {
                        coflow,
                        done_at: Some(Instant::now()),
                        error: None,
                    },
                    Err(e) => Staged {
                        coflow: 0,
                        done_at: None,
                        error: Some(e.to_string()),
                    },
                });
                signal.notify_waiters();
            }
        })
    };
    // The clock starts once every coflow's data is staged (the mappers finished before the
    // shuffle), so put time never counts in a CCT; `late_put_s` stays as a check.
    stager
        .await
        .map_err(|e| Error::Config(format!("staging failed: {e}")))?;
    let start = Instant::now();

    // Shuffle: at each arrival, get every flow of the coflow.
    let mut tasks = JoinSet::new();
    for &i in &order {
        let (trace, clients, hosts, staged, signal) = (
            trace.clone(),
            clients.clone(),
            hosts.clone(),
            staged.clone(),
            staged_signal.clone(),
        );
        tasks.spawn(async move {
            let c = &trace.coflows[i];
            let arrival = start + Duration::from_secs_f64(c.arrival_s.max(0.0));
            tokio::time::sleep_until(arrival).await;
            let (coflow, staged_at) = loop {
                let notified = signal.notified();
                if let Some(s) = staged[i].lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                    if let Some(e) = &s.error {
                        return Err(Error::Config(format!("coflow {}: {e}", c.id)));
                    }
                    break (s.coflow, s.done_at.expect("staged"));
                }
                notified.await;
            };
            let flows: Vec<_> = c.flows.iter().filter(|f| f.bytes >= 1.0).collect();
            let mut gets = JoinSet::new();
            for (j, f) in flows.iter().enumerate() {
                let client = clients[f.dst as usize].clone();
                gets.spawn_on(
                    async move {
                        client
                            .get_into(coflow, &format!("f{j}"), tokio::io::sink())
                            .await
                            .map(|_| Instant::now())
                    },
                    &hosts[f.dst as usize],
                );
            }
            let fcts = all_or_first_error(gets)
                .await
                .map_err(|e| Error::Config(format!("coflow {}: {e}", c.id)))?
                .into_iter()
                .map(|done| done.duration_since(arrival).as_secs_f64())
                .collect();
            let finish = Instant::now();
            let _ = clients[0].unregister(coflow).await;
            let finish_s = finish.duration_since(start).as_secs_f64();
            Ok(Replayed {
                index: i,
                arrival_s: c.arrival_s,
                finish_s,
                cct_s: finish_s - c.arrival_s,
                late_put_s: staged_at.saturating_duration_since(arrival).as_secs_f64(),
                fcts_s: fcts,
            })
        });
    }
    let mut out: Vec<Option<Replayed>> = vec![None; n];
    for r in all_or_first_error(tasks).await? {
        let i = r.index;
        out[i] = Some(r);
    }
    Ok(out
        .into_iter()
        .map(|r| r.expect("every coflow ran"))
        .collect())
}

/// Await tasks started together, in the order they end; the first error ends the wait and
/// aborts the rest (dropping the set). Awaited one by one in start order, a coflow whose one
/// get failed was never READY, so its other gets, and the replay, waited for ever (an
/// emulated-cluster replay hung for 14 minutes on one coflow with 9 of its 10 flows known).
async fn all_or_first_error<T: 'static>(mut set: JoinSet<Result<T>>) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(set.len());
    while let Some(r) = set.join_next().await {
        match r {
            Ok(Ok(v)) => out.push(v),
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(Error::Config(format!("replay task failed: {e}"))),
        }
    }
    Ok(out)
}

/// `len` bytes of a fixed pseudo-random pattern (seeded by the flow number), made on the fly so
/// a large replay needs no memory for its source data.
struct Pattern {
    block: Arc<[u8]>,
    offset: usize,
    left: u64,
}

impl Pattern {
    fn new(seed: u64, len: u64) -> Pattern {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let block: Vec<u8> = (0..4093)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        Pattern {
            block: block.into(),
            offset: 0,
            left: len,
        }
    }
}

impl AsyncRead for Pattern {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        while self.left > 0 && buf.remaining() > 0 {
            let n = (self.block.len() - self.offset)
                .min(buf.remaining())
                .min(self.left.min(usize::MAX as u64) as usize);
            let block = self.block.clone();
            buf.put_slice(&block[self.offset..self.offset + n]);
            self.offset = (self.offset + n) % self.block.len();
            self.left -= n as u64;
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed task ends the wait at once, though a task started before it never ends (a
    /// get of a coflow that can no longer become READY); the never-ending one is aborted.
    #[tokio::test]
    async fn the_first_error_ends_the_wait_for_tasks_that_never_end() {
        let mut set: JoinSet<Result<u32>> = JoinSet::new();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        set.spawn(async move {
            std::future::pending::<()>().await;
            drop(tx);
            Ok(1)
        });
        set.spawn(async { Err(Error::Config("get f1: connection reset".into())) });
        let r = tokio::time::timeout(Duration::from_secs(10), all_or_first_error(set)).await;
        let e = r.expect("the wait ended").unwrap_err();
        assert!(e.to_string().contains("get f1: connection reset"), "{e}");
        // The pending task was aborted when the set was dropped: its sender is gone.
        assert!(rx.await.is_err());
    }

    #[tokio::test]
    async fn every_result_comes_back_when_none_fails() {
        let mut set: JoinSet<Result<u32>> = JoinSet::new();
        for i in 0..5 {
            set.spawn(async move { Ok(i) });
        }
        let mut got = all_or_first_error(set).await.unwrap();
        got.sort_unstable();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
    }
}
