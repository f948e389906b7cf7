//! `coflowkit broadcast --local N [--netns --rate R] --bytes B --mechanism cornet,tree,...`:
//! one source and N receivers as real processes (this binary, re-run with `--node`), one run
//! per mechanism, this process hosting the controller (coflowkit-orchestra).

use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_model::echo::echo;
use coflowkit_model::units::{parse_rate_bps, parse_size_bytes};
use coflowkit_orchestra::itc::Policy;
use coflowkit_orchestra::node::{run_node, NodeEnv};
use coflowkit_orchestra::{
    run_broadcast, BroadcastConfig, BroadcastResult, Kill, Mechanism, Options, OrchestraError,
    Racks,
};
use coflowkit_runtime::broadcast_run::RuntimeBroadcastConfig;
use coflowkit_simcmd::flag_range::timeout_s;

#[derive(Args, Debug)]
pub struct BroadcastArgs {
    /// Receivers (one process each, beside the source's): the broadcast goes to N hosts.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=252), required_unless_present = "node")]
    pub local: Option<u32>,
    /// Each host in its own network namespace, both directions shaped to --rate (root).
    #[arg(long, requires = "rate")]
    pub netns: bool,
    /// Each host's link rate (200mbit, 1gbit): tbf with --netns, else user-space pacing of
    /// each host's uploads. Without it loopback runs unpaced and there is no lower bound.
    #[arg(long, value_name = "RATE")]
    pub rate: Option<String>,
    /// Bytes to broadcast (k, m, g = 2^10, 2^20, 2^30).
    #[arg(long, default_value = "64m")]
    pub bytes: String,
    /// Mechanisms, comma-separated: cornet, cornet-topology, cornet-clustering, chain, tree
    /// (binary), treeD, hdfsR (hdfs3, hdfs10), bittorrent.
    #[arg(long, default_value = "cornet")]
    pub mechanism: String,
    /// Write {"results": [...]} here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
    /// Cornet's block size (thesis: 4 MB).
    #[arg(long, default_value = "4m")]
    pub block_size: String,
    /// The piece size of the pipelined mechanisms (chain, tree, HDFS).
    #[arg(long, default_value = "256k")]
    pub pipe_size: String,
    /// BitTorrent's chunk size (thesis: up to 256 KB).
    #[arg(long, default_value = "256k")]
    pub chunk_size: String,
    /// Cornet's receive and send slots per host (thesis: 8 and 12; at least 1).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub receive_slots: u32,
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..))]
    pub send_slots: u32,
    /// Peers the controller hands a Cornet receiver per request (every second; at least 1).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub peer_set: u32,
    /// Racks (receivers split evenly in order, the source in the middle one): 1 to the hosts.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=253))]
    pub racks: u32,
    /// Each rack's link to the core (bits per second), with --netns and --racks.
    #[arg(long, value_name = "RATE")]
    pub core_rate: Option<String>,
    /// Kill host H (0: the source) in each run: H@SECONDS, H@copied (once the receivers
    /// together hold every block) or H@got:K (once H holds K blocks).
    #[arg(long, value_name = "H@S")]
    pub kill: Option<String>,
    /// Seed of the data and of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A run in which no block moves for this long fails, naming the stuck receivers.
    #[arg(long, default_value_t = 10.0, value_parser = timeout_s())]
    pub stall_s: f64,
    /// A run still going after this long fails (at most a day).
    #[arg(long, default_value_t = 600.0, value_parser = timeout_s())]
    pub timeout_s: f64,
    /// Through the real system: a coordinator (Cornet's controller and the inter-transfer
    /// controller), a daemon and a client per host; host 0 calls `client.broadcast`, the
    /// others `client.get`. Runs cornet, cornet-topology and cornet-clustering.
    #[arg(long, conflicts_with = "kill")]
    pub runtime: bool,
    /// With --runtime: the coordinator's inter-transfer controller (fifo, priority,
    /// weighted-fair), which shares each NIC among the transfers running on it.
    #[arg(long, value_name = "POLICY", requires = "runtime")]
    pub itc: Option<String>,
    /// Run as one host of a broadcast (set by the launcher, with COFLOWKIT_RANK and
    /// COFLOWKIT_RENDEZVOUS).
    #[arg(long, hide = true)]
    pub node: bool,
}

/// Bytes a host holds per byte broadcast: the source keeps the data it made and its blocks
/// (peak RSS 2.0 x the bytes, `broadcast --local 2 --bytes 64m|256m|1g`, debug build: 148 MB,
/// 542 MB, 2.1 GB), a receiver its blocks and those in flight; 3 leaves room for either.
const HOLD_PER_BYTE: u64 = 3;

/// Refuse `--bytes` that the hosts (one process each, all on this machine) could not hold,
/// naming the estimate (`--bytes 100g` aborted every host on allocation).
fn check_memory(bytes: u64, hosts: u32) -> Result<()> {
    coflowkit_simcmd::sim_memory::fits_ranks(bytes.saturating_mul(HOLD_PER_BYTE), hosts.into())
        .map_err(|short| {
            anyhow::anyhow!(
                "--bytes {bytes} to {} receivers would need {} (about {HOLD_PER_BYTE} bytes a \
                 byte in each of the {hosts} host processes): broadcast fewer bytes or to fewer \
                 receivers, or raise the limit",
                hosts - 1,
                short.describe()
            )
        })
}

/// `--rate` in the range `transfers` takes, and slow enough blocks refused up front: at 1
/// kbit/s a 64 KiB broadcast went out unpaced in 0.002 s beside a bound of 525 s, and 4 MiB
/// blocks at 1 Mbit/s (34 s each) failed after `--stall-s 10` without naming why (pass 33, B16).
fn check_rate(rate: f64, text: &str, cfg: &BroadcastConfig, a: &BroadcastArgs) -> Result<()> {
    if !(1e3..=1e15).contains(&rate) {
        bail!(
            "--rate {}: {rate} bit/s; must be 1 kbit/s to 1 Pbit/s",
            echo(text)
        );
    }
    // `--runtime` has no stall limit (the daemons pace and the run has its timeout).
    let mechanisms = if a.runtime {
        &[][..]
    } else {
        &cfg.mechanisms[..]
    };
    for &m in mechanisms {
        // A broadcast smaller than one unit moves in one piece of its size.
        let unit = u64::from(cfg.opts.unit_bytes(m)).min(cfg.bytes.max(1));
        let secs = unit as f64 * 8.0 / rate;
        if secs > cfg.stall_s {
            // The flag behind `Options::unit_bytes`.
            let (flag, given) = match m {
                Mechanism::BitTorrent => ("--chunk-size", &a.chunk_size),
                Mechanism::Chain | Mechanism::Tree { .. } | Mechanism::Hdfs { .. } => {
                    ("--pipe-size", &a.pipe_size)
                }
                _ => ("--block-size", &a.block_size),
            };
            bail!(
                "{m}: one {unit}-byte unit ({flag} {}, or --bytes if smaller) takes {secs:.1} s at \
                 --rate {}, longer than --stall-s {}, after which a run where no block moved \
                 fails: raise --stall-s or --rate, or use smaller units",
                echo(given),
                echo(text),
                cfg.stall_s
            );
        }
    }
    Ok(())
}

pub fn run(a: BroadcastArgs) -> Result<()> {
    if a.node {
        let env =
            NodeEnv::from_env()?.context("--node needs COFLOWKIT_RANK and COFLOWKIT_RENDEZVOUS")?;
        crate::async_rt::reserve()?;
        return match run_node(env) {
            // The controller prints why; each host saying it again tripled the line.
            Err(OrchestraError::Aborted(_)) => std::process::exit(1),
            r => Ok(r?),
        };
    }
    crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    let size = |s: &str, what: &str| -> Result<u64> {
        parse_size_bytes(s).with_context(|| what.to_string())
    };
    let unit = |s: &str, what: &str| -> Result<u32> {
        let v = size(s, what)?;
        u32::try_from(v)
            .ok()
            .filter(|&v| v > 0)
            .with_context(|| format!("{what}: 1 byte to 4 GiB"))
    };
    let opts = Options {
        block_bytes: unit(&a.block_size, "--block-size")?,
        pipe_bytes: unit(&a.pipe_size, "--pipe-size")?,
        chunk_bytes: unit(&a.chunk_size, "--chunk-size")?,
        receive_slots: a.receive_slots,
        send_slots: a.send_slots,
        peer_set: a.peer_set,
        ..Options::default()
    };
    let rate_bps = a
        .rate
        .as_deref()
        .map(parse_rate_bps)
        .transpose()
        .context("--rate")?;
    let core_rate_bps = a
        .core_rate
        .as_deref()
        .map(parse_rate_bps)
        .transpose()
        .context("--core-rate")?;
    let cfg = BroadcastConfig {
        receivers: a.local.unwrap_or(1),
        bytes: size(&a.bytes, "--bytes")?,
        mechanisms: Mechanism::parse_list(&a.mechanism)?,
        opts,
        seed: a.seed,
        rate_bps,
        netns: a.netns,
        racks: Racks {
            count: a.racks,
            core_rate_bps,
        },
        kill: a.kill.as_deref().map(str::parse::<Kill>).transpose()?,
        stall_s: a.stall_s,
        timeout_s: a.timeout_s,
    };
    if cfg.mechanisms.is_empty() {
        bail!("--mechanism names no mechanism");
    }
    let hosts = cfg.receivers + 1;
    if let Some(k) = &cfg.kill {
        if k.host >= hosts {
            bail!(
                "--kill {}: host {} does not exist: the hosts are 0 (the source) to {} (--local {})",
                a.kill.as_deref().map(echo).unwrap_or_default(),
                k.host,
                cfg.receivers,
                cfg.receivers
            );
        }
    }
    if a.racks > hosts {
        bail!("--racks {}: more racks than the {hosts} hosts", a.racks);
    }
    check_memory(cfg.bytes, hosts)?;
    if let (Some(rate), Some(text)) = (cfg.rate_bps, a.rate.as_deref()) {
        check_rate(rate, text, &cfg, &a)?;
    }
    crate::async_rt::reserve()?;
    let results = if a.runtime {
        run_runtime(&cfg, a.itc.as_deref())?
    } else {
        let exe = std::env::current_exe().context("the current executable")?;
        let node = move || {
            let mut c = Command::new(&exe);
            c.args(["broadcast", "--node"]);
            c
        };
        run_broadcast(&cfg, &node)?
    };
    outln!(
        "{:<18} {:>9} {:>10} {:>12} {:>10} {:>10} {:>8}  note",
        "mechanism",
        "receivers",
        "MiB",
        "completion_s",
        "mean_s",
        "bound_s",
        "sha_ok"
    )?;
    for r in &results {
        let done: Vec<f64> = r.receiver_times_s.iter().flatten().copied().collect();
        let mean = (!done.is_empty()).then(|| done.iter().sum::<f64>() / done.len() as f64);
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        outln!(
            "{:<18} {:>9} {:>10.1} {:>12} {:>10} {:>10} {:>8}  {}",
            r.mechanism,
            r.receivers,
            r.bytes as f64 / (1 << 20) as f64,
            f(r.completion_s),
            f(mean),
            f(r.lower_bound_s),
            r.checksums_ok,
            r.error.clone().unwrap_or_else(|| if r.dead.is_empty() {
                String::new()
            } else {
                format!("dead hosts {:?}", r.dead)
            })
        )?;
    }
    if let Some(path) = &a.json {
        let v = serde_json::json!({ "results": results });
        std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.error.is_some() || !r.checksums_ok)
        .map(|r| r.mechanism.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("broadcast failed for {}", failed.join(", "));
    }
    Ok(())
}

/// `--runtime`: the same broadcasts through the coordinator, daemons and clients.
fn run_runtime(cfg: &BroadcastConfig, itc: Option<&str>) -> Result<Vec<BroadcastResult>> {
    let policy = itc
        .map(|p| {
            serde_json::from_value::<Policy>(serde_json::Value::String(p.trim().to_string()))
                .map_err(|_| {
                    anyhow::anyhow!("--itc `{p}`: expected fifo, weighted-fair or priority")
                })
        })
        .transpose()?;
    let rcfg = RuntimeBroadcastConfig {
        receivers: cfg.receivers,
        bytes: cfg.bytes,
        mechanisms: cfg.mechanisms.clone(),
        block_bytes: cfg.opts.block_bytes,
        peer_set: cfg.opts.peer_set,
        seed: cfg.seed,
        rate_bps: cfg.rate_bps,
        netns: cfg.netns,
        racks: cfg.racks,
        policy,
        timeout_s: cfg.timeout_s,
    };
    Ok(coflowkit_runtime::broadcast_run::run(&rcfg)?)
}
