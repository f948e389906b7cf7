//! `coflowkit broadcast`: one process per host (the source is host 0, receivers 1..=N), on
//! loopback or in the emulated cluster, one run per mechanism; this process hosts the
//! controller and measures.

use std::net::{IpAddr, Ipv4Addr};
use std::process::{Child, Command};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::bound::{pipelined_binomial_tree_s, DEFAULT_ALPHA_S};
use crate::control::{FromNode, Options, PeerInfo, Plan, ToNode};
use crate::controller::{Controller, Transfer, Verdict};
use crate::error::io;
use crate::layout::Layout;
use crate::mechanism::Mechanism;
use crate::node::BIND_VAR;
use crate::topology::Racks;
use crate::OrchestraError;

/// Kill host `host` (0: the source) during the broadcast (fault injection): SIGKILL, so its
/// sockets close as a crashed machine's would.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kill {
    pub host: u32,
    pub when: KillWhen,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KillWhen {
    /// This many seconds after the start (`H@0.5`).
    After(f64),
    /// Once the receivers together hold every block (`H@copied`): killing the source then
    /// leaves a complete copy.
    Copied,
    /// Once the host holds this many blocks (`H@got:K`).
    Holds(usize),
}

impl std::str::FromStr for Kill {
    type Err = OrchestraError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            OrchestraError::Bad(format!(
                "--kill `{s}`: expected HOST@SECONDS, HOST@copied or HOST@got:BLOCKS, e.g. 3@0.5 (host 0 is the source)"
            ))
        };
        let (h, t) = s.split_once('@').ok_or_else(bad)?;
        let t = t.trim();
        let when = if t == "copied" {
            KillWhen::Copied
        } else if let Some(k) = t.strip_prefix("got:") {
            KillWhen::Holds(k.parse().map_err(|_| bad())?)
        } else {
            let after_s: f64 = t.trim_end_matches('s').parse().map_err(|_| bad())?;
            if !(after_s.is_finite() && after_s >= 0.0) {
                return Err(bad());
            }
            KillWhen::After(after_s)
        };
        Ok(Kill {
            host: h.trim().parse().map_err(|_| bad())?,
            when,
        })
    }
}

#[derive(Debug, Clone)]
pub struct BroadcastConfig {
    pub receivers: u32,
    pub bytes: u64,
    pub mechanisms: Vec<Mechanism>,
    pub opts: Options,
    pub seed: u64,
    /// Each host's link rate, bits per second: tbf in the emulated cluster, user-space pacing
    /// of uploads on loopback. Also the lower bound's rate.
    pub rate_bps: Option<f64>,
    pub netns: bool,
    pub racks: Racks,
    pub kill: Option<Kill>,
    /// A run that moves no block for this long fails, naming who is stuck.
    pub stall_s: f64,
    pub timeout_s: f64,
}

/// One mechanism's run, as `--json` writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BroadcastResult {
    pub mechanism: String,
    pub receivers: u32,
    pub bytes: u64,
    /// The unit the mechanism moved (block, pipeline piece or chunk).
    pub block_bytes: u32,
    /// When the last live receiver held the whole, checked data (None: the run failed).
    pub completion_s: Option<f64>,
    /// Per receiver (host 1..=N); null for one that died or never finished.
    pub receiver_times_s: Vec<Option<f64>>,
    /// Pipelined binomial tree on the same links (null without a rate).
    pub lower_bound_s: Option<f64>,
    /// Every receiver that finished holds data whose SHA-256 is the source's.
    pub checksums_ok: bool,
    /// SHA-256 of the source's data.
    pub digest: String,
    /// Hosts that died during the run.
    pub dead: Vec<u32>,
    /// The rack of each host (0: the source) the controller used: configured, or learned
    /// (cornet-clustering).
    pub racks: Vec<u32>,
    pub error: Option<String>,
    /// Block transfers (from, to, seconds), the raw material of CornetClustering.
    #[serde(skip)]
    pub transfers: Vec<Transfer>,
}

/// Every mechanism in turn. `node_command(host)` is the command that runs a node (the
/// `coflowkit` binary; the environment is added here). Learned racks (CornetClustering) come
/// from the runs before it in the list.
pub fn run_broadcast(
    cfg: &BroadcastConfig,
    node_command: &dyn Fn() -> Command,
) -> Result<Vec<BroadcastResult>, OrchestraError> {
    if cfg.receivers == 0 {
        return Err(OrchestraError::Bad(
            "a broadcast needs at least 1 receiver".into(),
        ));
    }
    if cfg.netns && cfg.rate_bps.is_none() {
        return Err(OrchestraError::Bad(
            "--netns needs --rate (the namespaces' links are shaped to it)".into(),
        ));
    }
    let hosts = cfg.receivers + 1;
    let cluster = if cfg.netns {
        Some(crate::topology::build_cluster(
            hosts,
            cfg.rate_bps.unwrap_or(1e9),
            &cfg.racks,
        )?)
    } else {
        None
    };
    let out = run_broadcast_on(cfg, cluster.as_ref(), node_command)?;
    if let Some(c) = cluster {
        c.teardown()
            .map_err(|e| OrchestraError::Netns(format!("tearing the cluster down: {e}")))?;
    }
    Ok(out)
}

/// As [`run_broadcast`], on a cluster the caller built (at least `receivers + 1` hosts; its
/// racks should be `cfg.racks`), or on loopback with `None`.
pub fn run_broadcast_on(
    cfg: &BroadcastConfig,
    cluster: Option<&crate::topology::Cluster>,
    node_command: &dyn Fn() -> Command,
) -> Result<Vec<BroadcastResult>, OrchestraError> {
    let hosts = cfg.receivers + 1;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io("tokio runtime"))?;
    let mut out: Vec<BroadcastResult> = Vec::new();
    for &m in &cfg.mechanisms {
        let racks = match m {
            Mechanism::CornetClustering => {
                let seen: Vec<Transfer> = out
                    .iter()
                    .flat_map(|r| r.transfers.iter().copied())
                    .collect();
                crate::clustering::racks_from_transfers(hosts, &seen, &Default::default())
            }
            _ => cfg.racks.of_hosts(hosts),
        };
        let ctl_ip = control_ip(cluster);
        let spawn = |h: u32| host_command(cluster, h, node_command);
        let r = rt.block_on(one_run(cfg, m, racks, ctl_ip, &spawn))?;
        out.push(r);
    }
    Ok(out)
}

/// Where the controller listens: the cluster's control bridge, or loopback.
pub(crate) fn control_ip(cluster: Option<&crate::topology::Cluster>) -> IpAddr {
    match cluster {
        Some(c) => IpAddr::V4(c.net().control_ip()),
        None => IpAddr::V4(Ipv4Addr::LOCALHOST),
    }
}

/// The command that runs host `h`: in its namespace with its address to bind, or on loopback.
pub(crate) fn host_command(
    cluster: Option<&crate::topology::Cluster>,
    h: u32,
    node_command: &dyn Fn() -> Command,
) -> Result<Command, OrchestraError> {
    let mut c = match cluster {
        Some(cl) => {
            let cl = cl.net();
            let ip = cl
                .hosts()
                .get(h as usize)
                .ok_or_else(|| {
                    OrchestraError::Bad(format!(
                        "host {h}: the cluster has only {} hosts",
                        cl.hosts().len()
                    ))
                })?
                .ip;
            let probe = node_command();
            let mut c = cl
                .command(h as usize, probe.get_program())
                .map_err(|e| OrchestraError::Netns(e.to_string()))?;
            c.args(probe.get_args());
            c.env(BIND_VAR, ip.to_string());
            c
        }
        None => {
            let mut c = node_command();
            c.env(BIND_VAR, "127.0.0.1");
            c
        }
    };
    c.env("COFLOWKIT_RANK", h.to_string());
    // A node has nothing to say on stdout (the command's table is there); errors go to
    // stderr.
    c.stdout(std::process::Stdio::null());
    Ok(c)
}

/// The node processes of one run; killed and reaped however the run ends.
pub(crate) struct Children(pub(crate) Vec<Option<Child>>);

impl Children {
    pub(crate) fn kill(&mut self, h: u32) {
        if let Some(Some(c)) = self.0.get_mut(h as usize) {
            let _ = c.kill();
        }
    }

    /// Wait up to `grace` for every node to exit, then kill the rest.
    pub(crate) async fn reap(&mut self, grace: Duration) {
        let until = Instant::now() + grace;
        loop {
            let mut running = 0;
            for c in self.0.iter_mut().flatten() {
                if matches!(c.try_wait(), Ok(None)) {
                    running += 1;
                }
            }
            if running == 0 || Instant::now() >= until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for c in self.0.iter_mut().flatten() {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.0.clear();
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for c in self.0.iter_mut().flatten() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `H@got:N` for a receiver and N >= 1 is carried out by the receiver itself, at the moment
/// it holds N blocks: killed from here on the controller's count, a receiver on a loaded
/// machine could finish before the controller read its N-th report, and not die
/// mid-broadcast at all.
fn self_kill(kill: Option<Kill>) -> Option<(u32, u32)> {
    match kill? {
        Kill {
            host,
            when: KillWhen::Holds(n),
        } if host != 0 && n >= 1 => Some((host, u32::try_from(n).unwrap_or(u32::MAX))),
        _ => None,
    }
}

async fn one_run(
    cfg: &BroadcastConfig,
    m: Mechanism,
    racks: Vec<u32>,
    ctl_ip: IpAddr,
    spawn: &dyn Fn(u32) -> Result<Command, OrchestraError>,
) -> Result<BroadcastResult, OrchestraError> {
    let hosts = cfg.receivers + 1;
    let layout = Layout::new(cfg.bytes, cfg.opts.unit_bytes(m))?;
    let listener = TcpListener::bind((ctl_ip, 0))
        .await
        .map_err(io(format!("controller listener on {ctl_ip}")))?;
    let at = listener.local_addr().map_err(io("controller address"))?;
    let mut children = Children(Vec::new());
    for h in 0..hosts {
        let mut c = spawn(h)?;
        c.env("COFLOWKIT_RENDEZVOUS", at.to_string());
        let child = c
            .spawn()
            .map_err(io(format!("starting host {h} ({:?})", c.get_program())))?;
        children.0.push(Some(child));
    }
    // Every node says hello (with its data address) within the start-up time.
    let (ev_tx, mut ev) = mpsc::unbounded_channel::<(u32, Option<FromNode>)>();
    let mut writers: Vec<Option<mpsc::UnboundedSender<ToNode>>> = vec![None; hosts as usize];
    let mut addrs = vec![String::new(); hosts as usize];
    let startup = Duration::from_secs(30);
    let deadline = Instant::now() + startup;
    for _ in 0..hosts {
        let accepted = tokio::time::timeout_at(deadline, listener.accept()).await;
        let (s, _) = match accepted {
            Ok(r) => r.map_err(io("accepting a node"))?,
            Err(_) => {
                return Err(OrchestraError::Failed(format!(
                    "{m}: only {} of {hosts} nodes connected within {startup:?}",
                    writers.iter().flatten().count()
                )))
            }
        };
        let _ = s.set_nodelay(true);
        let (rd, mut wr) = s.into_split();
        let mut lines = BufReader::new(rd).lines();
        let hello = tokio::time::timeout_at(deadline, lines.next_line())
            .await
            .map_err(|_| OrchestraError::Failed(format!("{m}: a node connected but said nothing")))?
            .map_err(io("reading a node's hello"))?;
        let (host, addr) = match hello.as_deref().map(serde_json::from_str::<FromNode>) {
            Some(Ok(FromNode::Hello { host, addr }))
                if host < hosts && writers[host as usize].is_none() =>
            {
                (host, addr)
            }
            other => {
                return Err(OrchestraError::Protocol {
                    peer: "a node".into(),
                    why: format!("expected a hello from a new host below {hosts}, got {other:?}"),
                })
            }
        };
        addrs[host as usize] = addr;
        let (tx, mut rx) = mpsc::unbounded_channel::<ToNode>();
        writers[host as usize] = Some(tx);
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                let mut line = serde_json::to_string(&msg).expect("control messages serialise");
                line.push('\n');
                if wr.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        let etx = ev_tx.clone();
        tokio::spawn(async move {
            loop {
                match lines.next_line().await {
                    Ok(Some(l)) => match serde_json::from_str::<FromNode>(&l) {
                        Ok(msg) => {
                            let _ = etx.send((host, Some(msg)));
                        }
                        Err(e) => {
                            tracing::warn!("host {host}: bad control line ({e}): {l}");
                            let _ = etx.send((host, None));
                            break;
                        }
                    },
                    _ => {
                        let _ = etx.send((host, None));
                        break;
                    }
                }
            }
        });
    }
    let send = |h: u32, msg: ToNode, w: &[Option<mpsc::UnboundedSender<ToNode>>]| {
        if let Some(Some(tx)) = w.get(h as usize) {
            let _ = tx.send(msg);
        }
    };
    let plan = Plan {
        mechanism: m,
        layout,
        seed: cfg.seed,
        addrs: addrs.clone(),
        racks: racks.clone(),
        pace_bps: if cfg.netns { None } else { cfg.rate_bps },
        opts: cfg.opts,
        die_holding: self_kill(cfg.kill),
    };
    for h in 0..hosts {
        send(h, ToNode::Plan(plan.clone()), &writers);
    }
    // The source makes its data and hashes it; the clock starts when it is ready.
    let (digest, pieces) = loop {
        match tokio::time::timeout_at(deadline + startup, ev.recv()).await {
            Ok(Some((0, Some(FromNode::Ready { digest, pieces })))) => break (digest, pieces),
            Ok(Some((h, None))) => {
                return Err(OrchestraError::Failed(format!(
                    "{m}: host {h} left before the start"
                )))
            }
            Ok(Some(_)) => {}
            _ => {
                return Err(OrchestraError::Failed(format!(
                    "{m}: the source never became ready"
                )))
            }
        }
    };
    let t0 = Instant::now();
    for h in 0..hosts {
        send(
            h,
            ToNode::Go {
                digest: digest.clone(),
                pieces: pieces.clone(),
            },
            &writers,
        );
    }
    let mut ctl = Controller::new(
        m,
        hosts,
        layout.blocks(),
        racks.clone(),
        cfg.opts.peer_set,
        cfg.seed,
    );
    let replicas = plan.replicas();
    let mut replicas_told = !matches!(m, Mechanism::Hdfs { .. });
    let mut killed = false;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    let verdict = loop {
        let now_s = t0.elapsed().as_secs_f64();
        tokio::select! {
            e = ev.recv() => {
                let Some((h, msg)) = e else { break Verdict::Failed("every node left".into()) };
                match msg {
                    None => {
                        if ctl.alive(h) {
                            ctl.on_dead(h, now_s);
                            writers[h as usize] = None;
                        }
                    }
                    Some(FromNode::PeersPlease) => {
                        let peers = ctl
                            .peers_for(h)
                            .into_iter()
                            .map(|p| PeerInfo { host: p, addr: addrs[p as usize].clone(), rack: ctl.rack(p) })
                            .collect();
                        send(h, ToNode::Peers { peers }, &writers);
                    }
                    Some(FromNode::Got { block, from, secs }) => ctl.on_got(h, block, from, secs, now_s),
                    Some(FromNode::Done { digest: d }) => ctl.on_done(h, d == digest, now_s),
                    Some(_) => {}
                }
            }
            _ = tick.tick() => {}
        }
        let now_s = t0.elapsed().as_secs_f64();
        if !replicas_told && ctl.replicas_written(&replicas) {
            replicas_told = true;
            for h in (0..hosts).filter(|h| !replicas.contains(h)) {
                send(h, ToNode::ReplicasReady, &writers);
            }
        }
        if let Some(k) = cfg.kill {
            let due = match k.when {
                KillWhen::After(s) => now_s >= s,
                KillWhen::Copied => ctl.copied(),
                // A receiver told to die at its n-th block does so itself (`self_kill`).
                KillWhen::Holds(n) => plan.die_holding.is_none() && ctl.held_count(k.host) >= n,
            };
            if !killed && due {
                killed = true;
                children.kill(k.host);
            }
        }
        match ctl.verdict(now_s, cfg.stall_s) {
            Verdict::Running if now_s > cfg.timeout_s => {
                break Verdict::Failed(format!("not done after the timeout of {} s", cfg.timeout_s))
            }
            Verdict::Running => {}
            v => break v,
        }
    };
    let error = match &verdict {
        Verdict::Failed(why) => Some(format!("{m}: {why}")),
        _ => None,
    };
    for h in 0..hosts {
        let msg = match &error {
            None => ToNode::Finish,
            Some(why) => ToNode::Abort { why: why.clone() },
        };
        send(h, msg, &writers);
    }
    children.reap(Duration::from_secs(5)).await;
    let times = ctl.receiver_times_s();
    let completion_s = match error {
        None => times
            .iter()
            .flatten()
            .copied()
            .fold(None, |a: Option<f64>, t| Some(a.map_or(t, |a| a.max(t)))),
        Some(_) => None,
    };
    Ok(BroadcastResult {
        mechanism: m.to_string(),
        receivers: cfg.receivers,
        bytes: cfg.bytes,
        block_bytes: layout.block_bytes,
        completion_s,
        receiver_times_s: times,
        lower_bound_s: cfg
            .rate_bps
            .map(|r| pipelined_binomial_tree_s(cfg.bytes, cfg.receivers, r, DEFAULT_ALPHA_S)),
        checksums_ok: ctl.checksums_ok(),
        digest,
        dead: (0..hosts).filter(|&h| !ctl.alive(h)).collect(),
        racks,
        error,
        transfers: ctl.transfers().to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kills_parse() {
        let k = |s: &str| s.parse::<Kill>().unwrap();
        assert_eq!(
            k("3@0.5"),
            Kill {
                host: 3,
                when: KillWhen::After(0.5)
            }
        );
        assert_eq!(
            k("0@2s"),
            Kill {
                host: 0,
                when: KillWhen::After(2.0)
            }
        );
        assert_eq!(
            k("0@copied"),
            Kill {
                host: 0,
                when: KillWhen::Copied
            }
        );
        assert_eq!(
            k("2@got:3"),
            Kill {
                host: 2,
                when: KillWhen::Holds(3)
            }
        );
        for bad in ["3", "x@1", "3@-1", "3@nan", "3@got:x"] {
            assert!(
                bad.parse::<Kill>()
                    .unwrap_err()
                    .to_string()
                    .contains("HOST@SECONDS"),
                "{bad}"
            );
        }
    }
}
