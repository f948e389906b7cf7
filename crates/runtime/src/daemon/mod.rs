//! The per-host daemon: stores put data (memory up to a bound, then the data directory), serves
//! gets over TCP at the rates the coordinator assigns (token bucket per flow), reports bytes
//! sent every Δ, and keeps serving at fair share while the coordinator is away.

mod allowance;
mod builder;
mod flows;
mod growth;
mod link;
pub mod recover;
mod serve;
pub mod spill_file;
pub mod store;
mod swarm;
mod tenant_pace;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::auth::Token;
use crate::error::{Error, Result};
use crate::frame::BLOCK_BYTES;
use crate::listen::{Gate, Guarded, Limits, ListenStats};
use crate::running::{bind_now, Running};
use crate::tls::{self, TlsClient, TlsServer};
use flows::Flows;
use link::Link;
use store::Store;

/// The slowest NIC accepted (bytes per second): below it a block takes hours to pace, and a
/// rate such as 1e-300 would pace gets at zero forever.
pub const MIN_NIC_BYTES_PER_S: f64 = 1000.0;
/// The fastest NIC accepted (bytes per second): 1 Pbit/s, the bound of `--nic-rate`. The
/// coordinator refuses a registration above it (1.7e308 paced every flow at 0).
pub const MAX_NIC_BYTES_PER_S: f64 = coflowkit_model::units::MAX_RATE_BPS / 8.0;
/// The longest advertised address (bytes): the coordinator's bound on names and addresses.
pub const MAX_ADVERTISE_BYTES: usize = 512;
/// The smallest memory bound accepted (bytes): two blocks, one being put and one being read.
pub const MIN_MEM_LIMIT_BYTES: u64 = 2 * BLOCK_BYTES as u64;

/// Everything a daemon is started with.
#[derive(Debug, Clone)]
pub struct DaemonConfig {
    /// Coordinator address, `host:port`.
    pub coordinator: String,
    /// The data address other hosts reach this daemon at (its identity); empty: the address
    /// the daemon binds (`spawn` and `serve` fill it in).
    pub advertise: String,
    pub token: Token,
    /// Emulated NIC rate, bytes per second each way: the port capacity the scheduler sees and
    /// the fallback fair share.
    pub nic_bytes_per_s: f64,
    /// Most put data kept in memory (bytes); the rest spills to `data_dir`, or waits without it.
    pub mem_limit_bytes: u64,
    pub data_dir: Option<PathBuf>,
    /// Δ until the coordinator says otherwise.
    pub report_interval: Duration,
    /// Serve the data port over TLS with this certificate (`None` = plaintext).
    pub tls: Option<TlsServer>,
    /// Reach the coordinator over TLS, trusting this CA (`None` = plaintext).
    pub coordinator_tls: Option<TlsClient>,
    /// Write every put to `data_dir` (none kept in memory), so that a restart recovers every
    /// completed put; otherwise only those that spilled survive a restart.
    pub persist_all: bool,
    /// Connection limits and timeouts of the data port.
    pub limits: Limits,
    /// Enforce the coflows' uplink reservations and caps (hug, drf, psp) with kernel htb
    /// classes on this device instead of pacing them here (`coflowkit_testbed::htb`; the
    /// emulated cluster's `eth0`, needs root). The coordinator should run `tenant_local`, so
    /// that a capped flow's own rate is only its downlink ceiling.
    pub htb: Option<String>,
    /// How long a registration with the coordinator may take before the daemon warns and
    /// retries (default [`link::REGISTER_DEADLINE`], 15 s).
    pub register_deadline: Duration,
}

impl DaemonConfig {
    pub fn new(coordinator: String, token: Token, nic_bytes_per_s: f64) -> Self {
        DaemonConfig {
            coordinator,
            advertise: String::new(),
            token,
            nic_bytes_per_s,
            mem_limit_bytes: 1 << 30,
            data_dir: None,
            report_interval: Duration::from_millis(10),
            tls: None,
            coordinator_tls: None,
            persist_all: false,
            limits: Limits::default(),
            htb: None,
            register_deadline: link::REGISTER_DEADLINE,
        }
    }

    /// The settings' own checks, with no side effect (the data dir is made when serving): a
    /// command can refuse a bad setting before it says it serves.
    pub fn validate(&self) -> Result<()> {
        self.limits.check().map_err(Error::Config)?;
        if !(self.nic_bytes_per_s.is_finite()
            && (MIN_NIC_BYTES_PER_S..=MAX_NIC_BYTES_PER_S).contains(&self.nic_bytes_per_s))
        {
            return Err(Error::Config(format!(
                "the NIC rate must be at least {MIN_NIC_BYTES_PER_S} bytes/s (8 kbit/s) and at most \
                 {MAX_NIC_BYTES_PER_S:.3e} (1 Pbit/s), not {:.3e}",
                self.nic_bytes_per_s
            )));
        }
        if self.mem_limit_bytes < MIN_MEM_LIMIT_BYTES {
            return Err(Error::Config(format!(
                "the memory limit must be at least {MIN_MEM_LIMIT_BYTES} bytes (two blocks)"
            )));
        }
        // Empty: the address the daemon binds (filled in by whoever binds it, as `spawn` does).
        if !self.advertise.is_empty() {
            check_advertise(&self.advertise).map_err(Error::Config)?;
        }
        if let Some(d) = &self.data_dir {
            // Made when serving if missing; something else there is refused now, before the
            // daemon says it serves (adversarial pass 33, B19), and so are a symbolic link
            // loop and a dangling link, by name (pass 34, C8: `File exists` after serving).
            if let Some(why) = coflowkit_model::out_path::dir_problem(d) {
                return Err(Error::Config(format!("data dir {}: {why}", d.display())));
            }
        }
        if self.persist_all && self.data_dir.is_none() {
            return Err(Error::Config(
                "persisting every put needs a data dir".into(),
            ));
        }
        Ok(())
    }

    fn check(&self) -> Result<()> {
        self.validate()?;
        if let Some(d) = &self.data_dir {
            std::fs::create_dir_all(d)
                .map_err(|e| Error::io(format!("creating data dir {}", d.display()), e))?;
        }
        Ok(())
    }
}

/// The advertised address: `host:port` (a port 1..65535), at most [`MAX_ADVERTISE_BYTES`],
/// printable ASCII without spaces (other hosts dial it, `status` prints it). The error quotes
/// it with control characters escaped. One parser for the daemon's `--advertise` and the
/// coordinator's `RegisterDaemon` (pass 34, C12): a socket address (`10.0.0.7:7401`,
/// `[::1]:7401`), or a host name and a port: the port digits only (`+80` was read as 80), an
/// IPv6 host in brackets (`::1:47830` and `a:1:2` were registered), a host whose last label
/// is all digits a valid IPv4 address (`999.1.1.1` was registered), else a DNS name (labels
/// of letters, digits, `-` and `_`, at most 63 bytes each and 253 in all).
pub fn check_advertise(a: &str) -> std::result::Result<(), String> {
    let quoted = || {
        let s: String = a.chars().take(64).collect();
        format!("{:?}{}", s, if a.chars().count() > 64 { "..." } else { "" })
    };
    if a.len() > MAX_ADVERTISE_BYTES {
        return Err(format!(
            "advertised address {}: {} bytes, at most {MAX_ADVERTISE_BYTES}",
            quoted(),
            a.len()
        ));
    }
    if !a.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "advertised address {}: only printable ASCII without spaces (HOST:PORT)",
            quoted()
        ));
    }
    host_port_problem(a).map_or(Ok(()), |why| {
        Err(format!("advertised address {}: {why}", quoted()))
    })
}

/// Why `a` is not `HOST:PORT` a peer can dial, if it is not (see [`check_advertise`]).
fn host_port_problem(a: &str) -> Option<String> {
    const SHAPE: &str = "not HOST:PORT with a port 1..65535";
    if let Ok(sa) = a.parse::<std::net::SocketAddr>() {
        return (sa.port() == 0).then(|| format!("{SHAPE} (port 0)"));
    }
    let Some((host, port)) = a.rsplit_once(':') else {
        return Some(format!("{SHAPE} (no `:PORT`)"));
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Some(format!("{SHAPE} (the port must be digits only)"));
    }
    if !port.parse::<u16>().is_ok_and(|p| p > 0) {
        return Some(format!("{SHAPE} (port {port})"));
    }
    if host.is_empty() {
        return Some(format!("{SHAPE} (no host)"));
    }
    if host.starts_with('[') || host.contains(':') {
        return Some(format!(
            "{SHAPE}: a host with `:` must be an IPv6 address in brackets, as [::1]:{port}"
        ));
    }
    let name = host.strip_suffix('.').unwrap_or(host);
    let labels: Vec<&str> = name.split('.').collect();
    if labels
        .last()
        .is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
    {
        // `a.parse::<SocketAddr>()` failed with a good port: not an IPv4 address.
        return Some(format!(
            "{SHAPE}: {host} is not an IPv4 address (four numbers 0..255, no leading zeros)"
        ));
    }
    let label_ok = |l: &&str| {
        (1..=63).contains(&l.len())
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() > 253 || !labels.iter().all(label_ok) {
        return Some(format!(
            "{SHAPE}: {host} is not a host name (labels of letters, digits, `-` and `_` \
             between dots, at most 63 bytes each, 253 in all) or an IP address"
        ));
    }
    None
}

pub(crate) struct Daemon {
    cfg: DaemonConfig,
    store: Arc<Store>,
    flows: Flows,
    link: Link,
    /// The data port's connection counters.
    stats: Arc<ListenStats>,
    /// The broadcasts this daemon takes part in.
    swarms: swarm::Swarms,
}

/// Serve on `listener` until the process ends.
pub async fn serve(mut cfg: DaemonConfig, listener: TcpListener) -> Result<()> {
    if cfg.advertise.is_empty() {
        cfg.advertise = listener
            .local_addr()
            .map_err(|e| Error::io("daemon socket", e))?
            .to_string();
    }
    cfg.check()?;
    let store = Store::with_persist_all(
        cfg.mem_limit_bytes,
        cfg.data_dir.as_deref(),
        cfg.persist_all,
    );
    if let Some(dir) = cfg.data_dir.clone() {
        // Before registering, so the coordinator learns of the recovered objects at once.
        let s = store.clone();
        let report = tokio::task::spawn_blocking(move || recover::recover(&s, &dir))
            .await
            .map_err(|e| Error::Config(format!("recovering the data dir: {e}")))?;
        let dir = cfg.data_dir.as_deref().expect("set").display().to_string();
        let report = report.map_err(|e| Error::io(format!("recovering data dir {dir}"), e))?;
        for bad in &report.corrupt {
            tracing::warn!(
                "data dir entry {} set aside ({}): not served, renamed to {}",
                bad.from.display(),
                bad.why,
                bad.to.display()
            );
        }
        if report.recovered + report.incomplete > 0 {
            tracing::info!(
                "data dir {dir}: recovered {} objects ({} bytes), dropped {} unfinished puts",
                report.recovered,
                report.bytes,
                report.incomplete
            );
        }
    }
    let mut flows = Flows::new(cfg.nic_bytes_per_s);
    if let Some(dev) = &cfg.htb {
        flows.enforce_with(htb_enforcer(dev, cfg.nic_bytes_per_s)?);
    }
    let d = Arc::new(Daemon {
        store,
        flows,
        link: Link::new(),
        stats: Arc::new(ListenStats::default()),
        swarms: swarm::Swarms::new(cfg.nic_bytes_per_s),
        cfg,
    });
    let mut link = tokio::spawn(link::run(d.clone()));
    let gate = Gate::new("daemon", d.cfg.limits.clone(), d.stats.clone());
    loop {
        // Serving ends only when the coordinator refuses this daemon for good.
        let (sock, peer, permit) = tokio::select! {
            accepted = gate.accept(&listener) => accepted,
            refused = &mut link => {
                return Err(refused.unwrap_or_else(|e| Error::Config(format!("coordinator link: {e}"))));
            }
        };
        let d = d.clone();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&sock);
        tokio::spawn(async move {
            let peer = peer.to_string();
            // The TLS handshake has its own deadline, the request its own (serve.rs).
            let stream = match tls::accept_data(sock, d.cfg.tls.as_ref()).await {
                Ok(stream) => stream,
                Err(e) => return tracing::debug!(%peer, "data connection refused: {e}"),
            };
            let idle = d.cfg.limits.idle;
            let stream = Guarded::new(stream, 0, idle, idle, d.stats.clone(), Some(permit));
            serve::connection(d, Box::new(stream), peer, fd).await
        });
    }
}

/// Make `dev`'s htb tree and start the thread that keeps its classes in step with the caps
/// pushed (tc is a process per change; in the daemon's network namespace, which a thread
/// started here inherits). The newest caps win over any queued.
fn htb_enforcer(
    dev: &str,
    nic_bytes_per_s: f64,
) -> Result<std::sync::mpsc::Sender<Vec<coflowkit_testbed::htb::Class>>> {
    let mut htb = coflowkit_testbed::htb::Htb::new(dev, nic_bytes_per_s);
    htb.setup()
        .map_err(|e| Error::Config(format!("--htb {dev}: {e}")))?;
    let (tx, rx) = std::sync::mpsc::channel::<Vec<coflowkit_testbed::htb::Class>>();
    std::thread::Builder::new()
        .name("htb".into())
        .spawn(move || {
            while let Ok(mut wanted) = rx.recv() {
                while let Ok(newer) = rx.try_recv() {
                    wanted = newer;
                }
                if let Err(e) = htb.update(&wanted) {
                    tracing::warn!("htb: {e}");
                }
            }
        })
        .map_err(|e| Error::io("starting the htb thread", e))?;
    Ok(tx)
}

/// Start a daemon on its own runtime (see [`Running`]). An empty `advertise` becomes the bound
/// address.
pub fn spawn(mut cfg: DaemonConfig, addr: SocketAddr) -> Result<Running> {
    let (listener, local) = bind_now(addr, "daemon")?;
    if cfg.advertise.is_empty() {
        cfg.advertise = local.to_string();
    }
    cfg.check()?;
    Running::start(local, "daemon", async move {
        let l = TcpListener::from_std(listener).map_err(|e| Error::io("daemon socket", e))?;
        serve(cfg, l).await
    })
}
