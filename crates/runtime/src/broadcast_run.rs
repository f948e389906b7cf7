//! `coflowkit broadcast --runtime`: the broadcast comparison through the real system. A
//! coordinator (Cornet's controller and, with a policy, the inter-transfer controller), one
//! daemon and one client per host, on loopback or in the emulated cluster; host 0 calls
//! `client.broadcast`, every other host `client.get`, one broadcast per mechanism on the same
//! coordinator (so CornetClustering learns from the broadcasts before it). Results in the
//! shape `coflowkit broadcast --json` writes.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use coflowkit_orchestra::bound::{pipelined_binomial_tree_s, DEFAULT_ALPHA_S};
use coflowkit_orchestra::itc::Policy;
use coflowkit_orchestra::{data, BroadcastResult, Mechanism, Racks};
use coflowkit_sched::SchedulerKind;
use coflowkit_testbed::NetnsCluster;
use tokio::runtime::Handle;

use crate::client::{BroadcastOptions, Client, ClientConfig, CoflowOptions};
use crate::error::{Error, Result};
use crate::{coordinator, daemon, CoordinatorConfig, DaemonConfig, HostRuntime, Running, Token};

/// What to broadcast, where, and how.
#[derive(Debug, Clone)]
pub struct RuntimeBroadcastConfig {
    pub receivers: u32,
    pub bytes: u64,
    /// Cornet, CornetTopology or CornetClustering (the runtime's mechanisms; others are refused
    /// by name).
    pub mechanisms: Vec<Mechanism>,
    pub block_bytes: u32,
    pub peer_set: u32,
    pub seed: u64,
    /// Each host's link rate, bits per second: the daemons' NIC (their swap uploads paced to
    /// it; the ITC's shares are of it) and, in namespaces, tbf. None: 10 Gbit/s daemons.
    pub rate_bps: Option<f64>,
    pub netns: bool,
    pub racks: Racks,
    /// The coordinator's inter-transfer controller (`CoordinatorConfig::broadcast_policy`).
    pub policy: Option<Policy>,
    /// A broadcast still going after this long fails.
    pub timeout_s: f64,
}

/// The mechanisms the runtime's daemons run.
pub const RUNTIME_MECHANISMS: [Mechanism; 3] = [
    Mechanism::Cornet,
    Mechanism::CornetTopology,
    Mechanism::CornetClustering,
];

/// Refuse, by name, what the runtime cannot run.
pub fn check(cfg: &RuntimeBroadcastConfig) -> Result<()> {
    if cfg.receivers == 0 {
        return Err(Error::Config(
            "a broadcast needs at least 1 receiver".into(),
        ));
    }
    if cfg.netns && cfg.rate_bps.is_none() {
        return Err(Error::Config(
            "--netns needs --rate (the namespaces' links are shaped to it)".into(),
        ));
    }
    if cfg.bytes > usize::MAX as u64 / 2 {
        return Err(Error::Config(format!(
            "{} bytes do not fit in this machine's memory",
            cfg.bytes
        )));
    }
    for m in &cfg.mechanisms {
        if !RUNTIME_MECHANISMS.contains(m) {
            return Err(Error::Config(format!(
                "mechanism `{m}` does not run through the runtime (its daemons run cornet, \
                 cornet-topology and cornet-clustering); run it without --runtime"
            )));
        }
    }
    Ok(())
}

/// Start the cluster, run one broadcast per mechanism, stop the cluster.
pub fn run(cfg: &RuntimeBroadcastConfig) -> Result<Vec<BroadcastResult>> {
    check(cfg)?;
    let hosts = cfg.receivers as usize + 1;
    let nic = cfg.rate_bps.map_or(10e9 / 8.0, |r| r / 8.0);
    let of_host = cfg.racks.of_hosts(hosts as u32);
    let net = if cfg.netns {
        let rates = vec![nic; hosts];
        Some(if cfg.racks.count > 1 {
            let core = (cfg.racks.core_rate_bps).unwrap_or(nic * 8.0 * hosts as f64) / 8.0;
            let r = coflowkit_testbed::Racks {
                of_host: of_host.clone(),
                core_bytes_per_s: core,
            };
            NetnsCluster::create_racked(&rates, &Default::default(), &r)?
        } else {
            NetnsCluster::create(&rates)?
        })
    } else {
        None
    };
    // On loopback each daemon has an address of its own (127.1.0.1 + host; Linux routes
    // all of 127/8 to lo), so the coordinator's topology (host -> rack) can name them.
    let ip = |h: Option<usize>| -> IpAddr {
        match (&net, h) {
            (None, None) => Ipv4Addr::LOCALHOST.into(),
            (None, Some(h)) => {
                Ipv4Addr::from(u32::from(Ipv4Addr::new(127, 1, 0, 1)) + h as u32).into()
            }
            (Some(n), None) => n.control_ip().into(),
            (Some(n), Some(h)) => n.hosts()[h].ip.into(),
        }
    };
    let token = Token::new(&format!(
        "broadcast-{}",
        std::process::id() as u64 * 7919 + 1
    ))?;
    let mut ccfg = CoordinatorConfig::new(token.clone(), SchedulerKind::Fair);
    ccfg.broadcast_policy = cfg.policy;
    // The configured topology: each daemon's host -> its rack (on loopback nothing
    // shapes the racks; the peer sets still prefer them).
    ccfg.racks = (0..hosts)
        .zip(&of_host)
        .map(|(h, &k)| (ip(Some(h)).to_string(), k))
        .collect::<HashMap<_, _>>();
    let coordinator = coordinator::spawn(ccfg, SocketAddr::new(ip(None), 0))?;
    let caddr = coordinator.addr().to_string();
    let mut daemons: Vec<Running> = Vec::new();
    for h in 0..hosts {
        let d = DaemonConfig::new(caddr.clone(), token.clone(), nic);
        let addr = SocketAddr::new(ip(Some(h)), 0);
        daemons.push(match &net {
            Some(n) => n.in_host(h, || daemon::spawn(d, addr))??,
            None => daemon::spawn(d, addr)?,
        });
    }
    let rt = tokio::runtime::Runtime::new().map_err(|e| Error::io("tokio runtime", e))?;
    rt.block_on(crate::replay::wait_connected(&caddr, &token, hosts))?;
    // Each host's client on that host (in namespaces, its own runtime there).
    let runtimes: Vec<HostRuntime> = match &net {
        Some(n) => (0..hosts)
            .map(|h| HostRuntime::new(n, h))
            .collect::<std::result::Result<_, _>>()?,
        None => Vec::new(),
    };
    let handles: Vec<Handle> = match runtimes.is_empty() {
        true => vec![rt.handle().clone(); hosts],
        false => runtimes.iter().map(|r| r.handle().clone()).collect(),
    };
    let mut clients = Vec::new();
    for (d, h) in daemons.iter().zip(&handles) {
        let c = ClientConfig::new(&caddr, &d.addr().to_string(), token.clone());
        let c = rt
            .block_on(h.spawn(Client::connect(c)))
            .map_err(|e| Error::Config(format!("connecting a client: {e}")))??;
        clients.push(c);
    }
    let data = Arc::new(data::make(cfg.seed, cfg.bytes));
    let digest = data::digest([data.as_slice()]);
    let mut out = Vec::new();
    for &m in &cfg.mechanisms {
        let r = rt.block_on(one(cfg, m, &clients, &handles, data.clone()));
        let (receiver_times_s, exact, error) = match r {
            Ok((t, exact)) => (t.into_iter().map(Some).collect(), exact, None),
            Err(e) => (vec![None; cfg.receivers as usize], false, Some(e)),
        };
        let completion_s = match error {
            None => receiver_times_s.iter().flatten().copied().reduce(f64::max),
            Some(_) => None,
        };
        out.push(BroadcastResult {
            mechanism: m.to_string(),
            receivers: cfg.receivers,
            bytes: cfg.bytes,
            block_bytes: block_bytes(cfg),
            completion_s,
            receiver_times_s,
            lower_bound_s: cfg
                .rate_bps
                .map(|r| pipelined_binomial_tree_s(cfg.bytes, cfg.receivers, r, DEFAULT_ALPHA_S)),
            checksums_ok: exact,
            digest: digest.clone(),
            dead: Vec::new(),
            racks: match m {
                Mechanism::Cornet => vec![0; hosts],
                _ => of_host.clone(),
            },
            error,
            transfers: Vec::new(),
        });
    }
    drop(clients);
    drop(runtimes);
    drop(daemons);
    drop(coordinator);
    drop(rt);
    if let Some(n) = net {
        n.teardown()?;
    }
    Ok(out)
}

fn block_bytes(cfg: &RuntimeBroadcastConfig) -> u32 {
    match cfg.block_bytes {
        0 => coflowkit_orchestra::Options::default().block_bytes,
        b => b,
    }
}

/// One broadcast: each receiver's seconds from the broadcast's start (its put and
/// `StartBroadcast` done) to the end of its get, and whether every copy is byte-exact.
async fn one(
    cfg: &RuntimeBroadcastConfig,
    m: Mechanism,
    clients: &[Client],
    hosts: &[Handle],
    data: Arc<Vec<u8>>,
) -> std::result::Result<(Vec<f64>, bool), String> {
    let c0 = clients[0].clone();
    let opts = BroadcastOptions {
        block_bytes: cfg.block_bytes,
        peer_set: cfg.peer_set,
        mechanism: Some(m),
        ..Default::default()
    };
    let d = data.clone();
    let coflow = hosts[0]
        .spawn(async move {
            let id = c0
                .register(CoflowOptions::default().name("broadcast"))
                .await?;
            c0.broadcast_with(id, "data", &d, opts).await?;
            Ok::<_, Error>(id)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("{m}: starting the broadcast: {e}"))?;
    let t0 = Instant::now();
    let gets: Vec<_> = (1..clients.len())
        .map(|h| {
            let (c, want) = (clients[h].clone(), data.clone());
            hosts[h].spawn(async move {
                let got = c.get(coflow, "data").await?;
                Ok::<_, Error>((t0.elapsed().as_secs_f64(), got == *want))
            })
        })
        .collect();
    let deadline = Duration::from_secs_f64(cfg.timeout_s);
    let mut times = Vec::new();
    let mut exact = true;
    let mut error = None;
    for (i, g) in gets.into_iter().enumerate() {
        let left = deadline.saturating_sub(t0.elapsed());
        match tokio::time::timeout(left, g).await {
            Ok(Ok(Ok((t, ok)))) => {
                times.push(t);
                exact &= ok;
            }
            Ok(Ok(Err(e))) => {
                error.get_or_insert(format!("{m}: receiver {}: {e}", i + 1));
            }
            Ok(Err(e)) => {
                error.get_or_insert(format!("{m}: receiver {}: {e}", i + 1));
            }
            Err(_) => {
                error.get_or_insert(format!(
                    "{m}: receiver {} not done after {} s",
                    i + 1,
                    cfg.timeout_s
                ));
                break;
            }
        }
    }
    let c0 = clients[0].clone();
    let _ = hosts[0]
        .spawn(async move { c0.unregister(coflow).await })
        .await;
    match error {
        Some(e) => Err(e),
        None => Ok((times, exact)),
    }
}
