//! The flags every command that runs as many ranks shares (`shuffle run`, `collective bench`),
//! and the two halves of such a command: launching the ranks (`--local M`, `--netns`) and,
//! inside a rank, joining the world and opening its UDP endpoint.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_launch::{bootstrap, local, run_local, run_netns, LaunchError, World};
use coflowkit_model::units::parse_rate_bps;
use coflowkit_shuffle::proto::GrantOptions;
use coflowkit_simcmd::flag_range::{f64_in, timeout_s};
use coflowkit_testbed::ClusterOptions;
use coflowkit_transport::{Endpoint, EndpointConfig, LossInjection, ReturnWhen};

/// IPv4 and UDP headers and the transport's own, beyond a datagram's payload.
const DATAGRAM_OVERHEAD: usize = 20 + 8 + coflowkit_transport::wire::HEADER_LEN;

/// The largest `--payload`: what the transport takes.
const MAX_PAYLOAD: u64 = coflowkit_transport::MAX_PAYLOAD as u64;

/// Most ranks `--local` starts on one host (one process each).
pub const MAX_LOCAL: u32 = 1024;

/// Most microseconds of `--spin-us` (a second of busy polling is already far past useful).
const MAX_SPIN_US: u64 = 1_000_000;

#[derive(Args, Debug, Clone)]
pub struct RanksArgs {
    /// Start this many ranks on this host (one process each). Without it, the rank and size
    /// come from the launcher's variables (mpirun, srun, PMI) or this process is a world of one.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..=MAX_LOCAL as i64), help_heading = "Ranks")]
    pub local: Option<u32>,
    /// With --local: each rank in its own network namespace, both directions shaped to --rate
    /// by tbf (needs root, `ip` and `tc`).
    #[arg(long, requires = "local", help_heading = "Ranks")]
    pub netns: bool,
    /// Each rank's link rate (bits per second: 200mbit, 1gbit): user-space pacing of what a
    /// rank sends, and with --netns the namespaces' tbf. Without it ranks send unpaced.
    #[arg(long, value_name = "RATE", help_heading = "Ranks")]
    pub rate: Option<String>,
    /// Drop this fraction of datagrams (injected in user space at the sender, seeded).
    #[arg(long, default_value_t = 0.0, value_parser = f64_in(0.0, 1.0), help_heading = "Ranks")]
    pub drop: f64,
    /// Send this fraction of datagrams twice.
    #[arg(long, default_value_t = 0.0, value_parser = f64_in(0.0, 1.0), help_heading = "Ranks")]
    pub duplicate: f64,
    /// Hold back this fraction of datagrams and send them after later ones.
    #[arg(long, default_value_t = 0.0, value_parser = f64_in(0.0, 1.0), help_heading = "Ranks")]
    pub reorder: f64,
    /// Payload bytes per datagram (default: 1388, a 1500-byte MTU less IP, UDP and the
    /// transport's 84-byte header; at most 65,423, a UDP datagram less that header).
    #[arg(long, default_value_t = coflowkit_transport::DEFAULT_PAYLOAD, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_PAYLOAD), help_heading = "Ranks")]
    pub payload: usize,
    /// Packets a receiver keeps outstanding per RTT (GRPF's and Hadoop's RTTpackets). Default:
    /// the packets --rate moves in 1 ms (a loaded host's round trip), at least 2; 8 unpaced.
    #[arg(long, help_heading = "Ranks")]
    pub rtt_packets: Option<u32>,
    /// Give up after this many seconds (ranks that have not finished are stopped and named;
    /// at most a day).
    #[arg(long, default_value_t = 300.0, value_parser = timeout_s(), help_heading = "Ranks")]
    pub timeout_s: f64,
    /// When an exchange returns: `sent` (everything expected arrived and everything sent left
    /// once; ACKs are awaited in the background) or `acked` (also every message ACKed).
    #[arg(long, value_enum, default_value_t = ReturnArg::Sent, help_heading = "Ranks")]
    pub return_when: ReturnArg,
    /// Microseconds a rank waiting for an exchange polls before it sleeps. Default: 50 when
    /// this host has a core per rank on it, else 0 (spinning ranks would take each other's
    /// cores).
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=MAX_SPIN_US), help_heading = "Ranks")]
    pub spin_us: Option<u64>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnArg {
    Sent,
    Acked,
}

/// Busy polling before sleeping, when every rank here has a core (`--spin-us`).
const DEFAULT_SPIN_US: u64 = 50;

/// Ranks sharing this host's cores: all of them when started by `--local` (network namespaces
/// included), else those whose address is this rank's.
fn ranks_on_this_host(world: &World) -> usize {
    if local::is_launched() {
        return world.peers.len();
    }
    let me = world.peers[world.rank as usize].ip();
    world.peers.iter().filter(|p| p.ip() == me).count()
}

/// Longest RESEND timeout the queue estimate may set: a minute (past it the peer is as good as
/// gone, and a run is bounded by --timeout-s anyway).
const MAX_RESEND_NS: u64 = 60_000_000_000;

/// A round trip on a loaded host (scheduling included), for the default RTTpackets.
const LOADED_RTT_S: f64 = 1e-3;

impl RanksArgs {
    /// RTTpackets for the grant protocols on this link (see `--rtt-packets`).
    pub fn rtt_packets(&self) -> Result<u32> {
        if let Some(r) = self.rtt_packets {
            return Ok(r.max(1));
        }
        Ok(match self.rate_bps()? {
            Some(bps) => {
                let packet_bits = ((self.payload + DATAGRAM_OVERHEAD) * 8) as f64;
                ((bps * LOADED_RTT_S / packet_bits).ceil() as u32).max(2)
            }
            None => GrantOptions::default().rtt_packets,
        })
    }

    pub fn rate_bps(&self) -> Result<Option<f64>> {
        self.rate
            .as_deref()
            .map(parse_rate_bps)
            .transpose()
            .context("--rate")
    }
}

/// Whether this process checks the run's output files before the work (pass 34, C9): the
/// `--local` launcher, before any rank starts, or rank 0 of ranks started otherwise (mpirun,
/// srun, or one rank alone), the rank that writes them. Other ranks may run on hosts where
/// the path means nothing.
pub fn checks_outputs(a: &RanksArgs) -> bool {
    match a.local {
        Some(_) => !local::is_launched(),
        None => coflowkit_launch::rank_from_env()
            .ok()
            .flatten()
            .is_none_or(|i| i.rank == 0),
    }
}

/// With `--local M` in the launching process: start the M ranks (each re-runs this command
/// with its rank in its environment), wait for them, and return true. In a rank: false.
pub fn launch_here(a: &RanksArgs, timeout: Duration) -> Result<bool> {
    let Some(m) = a.local else { return Ok(false) };
    if local::is_launched() {
        return Ok(false);
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let session = coflowkit_launch::world::session_from(&|k| std::env::var(k).ok())?;
    if a.netns {
        let Some(bps) = a.rate_bps()? else {
            bail!("--netns needs --rate (the namespaces' links are shaped to it)");
        };
        // Datagrams larger than a 1500-byte frame get jumbo NICs rather than IP fragments.
        let frame = a.payload + DATAGRAM_OVERHEAD;
        let opts = ClusterOptions {
            mtu: (frame > 1500).then_some(frame as u32),
        };
        let exe = std::env::current_exe().context("the current executable")?;
        exit_if_interrupted(run_netns(
            m,
            bps / 8.0,
            &opts,
            session,
            Some(timeout),
            exe.as_os_str(),
            &args,
        ))?;
    } else {
        exit_if_interrupted(run_local(m, session, Some(timeout), |_| {
            local::self_command(&args)
        }))?;
    }
    Ok(true)
}

/// A launcher stopped by SIGINT/SIGTERM/SIGHUP (its ranks killed and reaped, namespaces torn
/// down) exits as the signal would have: 128 + its number, the shell's convention.
fn exit_if_interrupted(ran: Result<(), LaunchError>) -> Result<(), LaunchError> {
    if let Err(LaunchError::Interrupted { signal }) = ran {
        errln!("interrupted by signal {signal}: all ranks stopped");
        std::process::exit(128 + signal);
    }
    ran
}

/// Inside a rank: the world (after the rendezvous) and this rank's UDP endpoint.
pub fn connect(a: &RanksArgs, seed: u64, timeout: Duration) -> Result<(World, Arc<Endpoint>)> {
    connect_with(a, seed, timeout, |_| {})
}

/// `connect`, with a last say on the endpoint's configuration (e.g. a command whose ranks
/// compute for seconds between collectives gives silent peers longer before declaring them
/// dead).
pub fn connect_with(
    a: &RanksArgs,
    seed: u64,
    timeout: Duration,
    tweak: impl FnOnce(&mut EndpointConfig),
) -> Result<(World, Arc<Endpoint>)> {
    let world = bootstrap(timeout.min(Duration::from_secs(60)))?;
    let mut cfg = EndpointConfig::new(world.rank, world.peers.clone(), world.session);
    // Every datagram tagged with a key of this job and session (none only with
    // COFLOWKIT_INSECURE=1, or in a world of one).
    cfg.auth = world
        .secret
        .as_ref()
        .map(|s| coflowkit_transport::WireKey::derive(s.bytes(), world.session));
    cfg.payload = a.payload;
    // The payload is bounded by its parser; checked anyway, so a rank never panics on it.
    let frame = a
        .payload
        .checked_add(DATAGRAM_OVERHEAD)
        .and_then(|f| f.checked_mul(16))
        .with_context(|| format!("--payload {}: too large", a.payload))?;
    cfg.burst_bytes = cfg.burst_bytes.max(frame);
    cfg.rate_bps = a.rate_bps()?;
    cfg.return_when = match a.return_when {
        ReturnArg::Sent => ReturnWhen::Sent,
        ReturnArg::Acked => ReturnWhen::Acked,
    };
    // A RESEND must not fire while a granted packet still waits behind a full window of others
    // in the receiver's queue: four windows at the link rate, at least the default 5 ms.
    let window = GrantOptions::default().overcommit as u64 * a.rtt_packets()? as u64;
    // Saturating: --rtt-packets 2^32-1 on a 1 bit/s link passes 2^64 ns.
    let queued = Duration::from_nanos(
        window
            .saturating_mul(4)
            .saturating_mul(cfg.packet_ns())
            .min(MAX_RESEND_NS),
    );
    cfg.resend_timeout = cfg.resend_timeout.max(queued);
    cfg.loss = LossInjection {
        drop: a.drop,
        duplicate: a.duplicate,
        reorder: a.reorder,
        seed: seed ^ world.rank as u64,
    };
    cfg.spin = Duration::from_micros(a.spin_us.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if ranks_on_this_host(&world) <= cores {
            DEFAULT_SPIN_US
        } else {
            0
        }
    }));
    tweak(&mut cfg);
    let socket = world.socket.try_clone().context("UDP socket")?;
    let ep = Endpoint::bind(socket, cfg).context("opening the UDP endpoint")?;
    Ok((world, Arc::new(ep)))
}
