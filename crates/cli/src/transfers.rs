//! `coflowkit transfers --experiment fetch|madd|itc|iterative [--netns] --rate R ...`: the
//! coflow thesis' shuffle-side Orchestra experiments on real bytes between real processes
//! (this binary re-run with `--node`), one process per host (coflowkit-orchestra's
//! `experiments`); this process hosts the controllers and prints what they measured.

use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use coflowkit_model::units::{parse_rate_bps, parse_size_bytes};
use coflowkit_orchestra::experiments::{self, Bench, ItcSetup, IterSetup};
use coflowkit_orchestra::flows::run_flow_node;
use coflowkit_orchestra::itc::Policy;
use coflowkit_orchestra::node::NodeEnv;
use coflowkit_orchestra::topology::build_cluster;
use coflowkit_orchestra::Racks;
use coflowkit_simcmd::flag_range::{f64_in, timeout_s, wait};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// Row 3: random fetching with 1-30 connections per receiver against the link rate.
    Fetch,
    /// Row 4: MADD against the standard shuffle on Fig 4.6's variants (Table 4.2).
    Madd,
    /// Orchestra's inter-transfer controller: an ad hoc shuffle beside a batch one.
    Itc,
    /// Rows 6-7: an iterative job's broadcast + shuffle before and after Orchestra.
    Iterative,
}

/// Most hosts one experiment starts (one process each; an emulated cluster's /24 holds 252).
const MAX_HOSTS: u64 = 252;

#[derive(Args, Debug)]
pub struct TransfersArgs {
    #[arg(long, value_enum, required_unless_present = "node")]
    pub experiment: Option<Experiment>,
    /// Each host in its own network namespace, both directions shaped to --rate (root).
    #[arg(long)]
    pub netns: bool,
    /// Each host's link rate: tbf with --netns, else user-space pacing of uploads.
    #[arg(long, default_value = "200mbit")]
    pub rate: String,
    /// fetch, itc: sending hosts.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=MAX_HOSTS as i64))]
    pub senders: u32,
    /// fetch: receivers per run (comma-separated); itc: the first is used.
    #[arg(long, default_value = "1,5,10")]
    pub receivers: String,
    /// fetch: connections per receiver (comma-separated); madd: the standard shuffle's
    /// fetches per reducer (the first); itc: per receiver (the first; 0 = every flow at once).
    #[arg(long, default_value = "1,2,5,10")]
    pub connections: String,
    /// fetch: bytes per receiver; itc: the batch transfer's bytes per receiver.
    #[arg(long, default_value = "64m")]
    pub bytes: String,
    /// madd: Fig 4.6's n per run (2, 3, 4 = Table 4.2's A, B, C).
    #[arg(long, default_value = "2,3,4")]
    pub n: String,
    /// madd: one unit of Fig 4.6 (the thesis: 2 GB).
    #[arg(long, default_value = "16m")]
    pub unit: String,
    /// itc: the ad hoc transfer's bytes per receiver and when it arrives.
    #[arg(long, default_value = "16m")]
    pub adhoc_bytes: String,
    #[arg(long, default_value_t = 2.0, value_parser = f64_in(wait::AT_S.0, wait::AT_S.1))]
    pub adhoc_at_s: f64,
    /// itc: policies, comma-separated (fifo, weighted-fair, priority).
    #[arg(long, default_value = "fifo,weighted-fair,priority")]
    pub policy: String,
    /// iterative: workers per run (comma-separated); host 0 is the driver.
    #[arg(long, default_value = "4,8")]
    pub workers: String,
    /// iterative: the broadcast per iteration, and each reducer's shuffle bytes (0: none,
    /// row 7's ALS).
    #[arg(long, default_value = "32m")]
    pub broadcast_bytes: String,
    #[arg(long, default_value = "16m")]
    pub shuffle_bytes: String,
    /// iterative: flow sizes vary by up to this fraction around the even share.
    #[arg(long, default_value_t = 0.5)]
    pub skew: f64,
    /// iterative: Cornet's block size.
    #[arg(long, default_value = "1m")]
    pub block_size: String,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub iterations: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A run still going after this long fails (at most a day).
    #[arg(long, default_value_t = 600.0, value_parser = timeout_s())]
    pub timeout_s: f64,
    /// Write {"experiment", "rate_bps", "netns", "rows": [...]} here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
    /// Run as one host (set by the launcher, with COFLOWKIT_RANK and COFLOWKIT_RENDEZVOUS).
    #[arg(long, hide = true)]
    pub node: bool,
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            x.trim()
                .parse::<T>()
                .map_err(|_| anyhow::anyhow!("{what}: `{x}` is not a whole number"))
        })
        .collect()
}

fn size(s: &str, what: &str) -> Result<u64> {
    parse_size_bytes(s).with_context(|| what.to_string())
}

pub fn run(a: TransfersArgs) -> Result<()> {
    if a.node {
        let env =
            NodeEnv::from_env()?.context("--node needs COFLOWKIT_RANK and COFLOWKIT_RENDEZVOUS")?;
        crate::async_rt::reserve()?;
        return Ok(run_flow_node(env)?);
    }
    crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    let exp = a.experiment.context("--experiment")?;
    let rate_bps = parse_rate_bps(&a.rate).context("--rate")?;
    let receivers: Vec<u32> = list(&a.receivers, "--receivers")?;
    let connections: Vec<u32> = list(&a.connections, "--connections")?;
    let ns: Vec<u32> = list(&a.n, "--n")?;
    let workers: Vec<u32> = list(&a.workers, "--workers")?;
    if receivers.is_empty() || receivers.contains(&0) || a.senders == 0 {
        bail!("--senders and --receivers must be at least 1");
    }
    if ns.is_empty() || ns.contains(&0) {
        bail!("--n must be at least 1");
    }
    let policies: Vec<Policy> = a
        .policy
        .split(',')
        .map(|p| {
            serde_json::from_value(serde_json::Value::String(p.trim().to_string())).map_err(|_| {
                anyhow::anyhow!("--policy `{p}`: expected fifo, weighted-fair or priority")
            })
        })
        .collect::<Result<_>>()?;
    // In u64: --receivers 4294967295 must not wrap (or panic) before it is refused.
    let most = |v: &[u32], or: u32| u64::from(v.iter().max().copied().unwrap_or(or));
    let hosts = match exp {
        Experiment::Fetch => u64::from(a.senders) + most(&receivers, 1),
        Experiment::Madd => 2 * most(&ns, 2) + 3,
        Experiment::Itc => u64::from(a.senders) + u64::from(receivers[0]),
        Experiment::Iterative => most(&workers, 3) + 1,
    };
    if hosts > MAX_HOSTS {
        bail!("the {exp:?} experiment would start {hosts} hosts (one process each): at most {MAX_HOSTS}");
    }
    let hosts = hosts as u32;
    crate::async_rt::reserve()?;
    let cluster = if a.netns {
        Some(build_cluster(hosts, rate_bps, &Racks::default())?)
    } else {
        None
    };
    let exe = std::env::current_exe().context("the current executable")?;
    let exe2 = exe.clone();
    let flow_node = move || {
        let mut c = Command::new(&exe);
        c.args(["transfers", "--node"]);
        c
    };
    let broadcast_node = move || {
        let mut c = Command::new(&exe2);
        c.args(["broadcast", "--node"]);
        c
    };
    let b = Bench {
        cluster: cluster.as_ref(),
        rate_bps,
        seed: a.seed,
        timeout_s: a.timeout_s,
        flow_node: &flow_node,
    };
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let (rows, failed): (serde_json::Value, bool) = match exp {
        Experiment::Fetch => {
            let rows = experiments::fetch(
                &b,
                a.senders,
                &receivers,
                &connections,
                size(&a.bytes, "--bytes")?,
            )?;
            outln!(
                "{:>7} {:>9} {:>11} {:>12} {:>10} {:>9} {:>9}  note",
                "senders",
                "receivers",
                "connections",
                "completion_s",
                "mean_mbps",
                "min_mbps",
                "of_link"
            )?;
            for r in &rows {
                outln!(
                    "{:>7} {:>9} {:>11} {:>12} {:>10} {:>9} {:>9}  {}",
                    r.senders,
                    r.receivers,
                    r.connections,
                    f(r.completion_s),
                    f(r.mean_receiver_mbps),
                    f(r.min_receiver_mbps),
                    f(r.mean_receiver_mbps.map(|m| m / r.link_mbps)),
                    r.error.clone().unwrap_or_default()
                )?;
            }
            let failed = rows.iter().any(|r| r.error.is_some());
            (serde_json::to_value(rows)?, failed)
        }
        Experiment::Madd => {
            let rows = experiments::madd(
                &b,
                &ns,
                size(&a.unit, "--unit")?,
                connections.first().copied().unwrap_or(5),
            )?;
            outln!(
                "{:>8} {:>3} {:>11} {:>7} {:>8} {:>7} {:>8}  note",
                "topology",
                "n",
                "standard_s",
                "madd_s",
                "speedup",
                "theory",
                "bound_s"
            )?;
            for r in &rows {
                let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0));
                outln!(
                    "{:>8} {:>3} {:>11} {:>7} {:>8} {:>7} {:>8}  {}",
                    r.topology,
                    r.n,
                    f(r.standard_s),
                    f(r.madd_s),
                    pct(r.speedup),
                    pct(Some(r.theory)),
                    f(r.bound_s),
                    r.error.clone().unwrap_or_default()
                )?;
            }
            let failed = rows.iter().any(|r| r.error.is_some());
            (serde_json::to_value(rows)?, failed)
        }
        Experiment::Itc => {
            let s = ItcSetup {
                senders: a.senders,
                receivers: receivers[0],
                batch_bytes: size(&a.bytes, "--bytes")?,
                adhoc_bytes: size(&a.adhoc_bytes, "--adhoc-bytes")?,
                adhoc_at_s: a.adhoc_at_s,
                connections: connections.first().copied().unwrap_or(0),
            };
            let rows = experiments::itc_policies(&b, &s, &policies)?;
            outln!(
                "{:<14} {:>8} {:>8} {:>12} {:>12} {:>13} {:>13} {:>11} {:>17}  note",
                "policy",
                "batch_s",
                "adhoc_s",
                "batch_end_s",
                "adhoc_end_s",
                "model_batch_s",
                "model_adhoc_s",
                "adhoc_share",
                "model_adhoc_share"
            )?;
            for r in &rows {
                outln!(
                    "{:<14} {:>8} {:>8} {:>12} {:>12} {:>13.3} {:>13.3} {:>11} {:>17.3}  {}",
                    serde_json::to_value(r.policy)?.as_str().unwrap_or("?"),
                    f(r.batch_s),
                    f(r.adhoc_s),
                    f(r.batch_end_s),
                    f(r.adhoc_end_s),
                    r.model_batch_s,
                    r.model_adhoc_s,
                    f(r.adhoc_share),
                    r.model_adhoc_share,
                    r.error.clone().unwrap_or_default()
                )?;
            }
            let failed = rows.iter().any(|r| r.error.is_some());
            (serde_json::to_value(rows)?, failed)
        }
        Experiment::Iterative => {
            let block = size(&a.block_size, "--block-size")?;
            let s = IterSetup {
                workers,
                broadcast_bytes: size(&a.broadcast_bytes, "--broadcast-bytes")?,
                shuffle_bytes: size(&a.shuffle_bytes, "--shuffle-bytes")?,
                skew: a.skew.clamp(0.0, 1.0),
                block_bytes: u32::try_from(block)
                    .ok()
                    .filter(|&b| b > 0)
                    .context("--block-size: 1 byte to 4 GiB")?,
                iterations: a.iterations,
            };
            let rows = experiments::iterative(&b, &s, &broadcast_node)?;
            outln!(
                "{:>7} {:<7} {:<10} {:>11} {:<22} {:>9} {:>7}  note",
                "workers",
                "phase",
                "broadcast",
                "broadcast_s",
                "shuffle",
                "shuffle_s",
                "comm_s"
            )?;
            for r in &rows {
                outln!(
                    "{:>7} {:<7} {:<10} {:>11} {:<22} {:>9} {:>7}  {}",
                    r.workers,
                    r.phase,
                    r.broadcast,
                    f(r.broadcast_s),
                    r.shuffle,
                    f(r.shuffle_s),
                    f(r.comm_s),
                    r.error.clone().unwrap_or_default()
                )?;
            }
            let failed = rows.iter().any(|r| r.error.is_some());
            (serde_json::to_value(rows)?, failed)
        }
    };
    if let Some(c) = cluster {
        c.teardown()?;
    }
    if let Some(path) = &a.json {
        let v = serde_json::json!({
            "experiment": format!("{exp:?}").to_lowercase(),
            "rate_bps": rate_bps,
            "netns": a.netns,
            "rows": rows,
        });
        std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if failed {
        bail!("some runs failed (see the note column)");
    }
    Ok(())
}
