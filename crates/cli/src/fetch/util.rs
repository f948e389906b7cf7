//! `coflowkit fetch util`: the paper's §4.3 simulation — the mean max-min utilization that each
//! policy's decisions reach, against Hadoop's random choice, over node counts and mixes of slow
//! and fast nodes.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_flowsim::pull::{simulate_rounds, RoundsSpec};
use coflowkit_model::units::parse_rate_bps;
use coflowkit_model::Fabric;
use coflowkit_sched::select::{Heaviest, Policy, SelectOptions};
use serde_json::json;

use super::plot::UtilPoint;
use super::rates::parse_policies;

#[derive(Args, Debug)]
pub struct UtilArgs {
    /// Node counts to sweep
    #[arg(long, default_value = "4,8,12,16,20,24,28,32", value_name = "LIST")]
    pub nodes: String,
    /// Fractions of nodes on the slow rate to sweep (0 = homogeneous; the first nodes are slow)
    #[arg(long, default_value = "0,0.5", value_name = "LIST")]
    pub low_share: String,
    /// Slow nodes' capacity, up and down
    #[arg(long, default_value = "512mbit", value_name = "RATE")]
    pub low_rate: String,
    /// Fast nodes' capacity, up and down
    #[arg(long, default_value = "1024mbit", value_name = "RATE")]
    pub high_rate: String,
    /// Policies (random is always run, as the baseline)
    #[arg(long, default_value = "random,pgss,opt", value_name = "LIST")]
    pub policy: String,
    /// Concurrent fetches per reduce task (1 to 1024)
    #[arg(long, default_value_t = 5, value_name = "F", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    pub fetchers: usize,
    /// Rounds per run (each node takes one turn per round; at most 10^6)
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1_000_000))]
    pub rounds: usize,
    /// Rounds before utilization is sampled
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub warmup: usize,
    /// Runs per point for every policy but random (the paper: 10; at most 100000)
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub runs: u64,
    /// Runs per point for random (the paper: 100; at most 100000)
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub runs_random: u64,
    /// PGSS's heaviest-loaded nodes: `count` (the paper) or `time` (count per uplink capacity;
    /// an exploration, not in the paper)
    #[arg(long, default_value = "count", value_name = "RULE")]
    pub heaviest: Heaviest,
    /// Seed of run 0; run r uses seed + r, wrapping past 2^64-1 to 0
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write {"results": [{"nodes", "low_share", "policy", "mean_util_bps", ...}]}
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Draw the gain over random as SVG into DIR
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

fn list<T: std::str::FromStr>(text: &str, flag: &str) -> Result<Vec<T>> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("{flag}: `{s}` is not a valid number"))
        })
        .collect()
}

pub fn run(args: UtilArgs) -> Result<()> {
    crate::out::check_outputs(&[
        crate::out::Out::file("--json", args.json.as_deref()),
        crate::out::Out::dir("--plot", args.plot.as_deref()),
    ])?;
    let nodes: Vec<usize> = list(&args.nodes, "--nodes")?;
    let shares: Vec<f64> = list(&args.low_share, "--low-share")?;
    if nodes.iter().any(|&n| n < 2) {
        bail!("--nodes: every count must be at least 2");
    }
    for &n in &nodes {
        super::rates::check_pair_nodes(n, "--nodes")?;
    }
    if shares.iter().any(|s| !(0.0..=1.0).contains(s)) {
        bail!("--low-share: fractions must be between 0 and 1");
    }
    let low = parse_rate_bps(&args.low_rate).context("--low-rate")? / 8.0;
    let high = parse_rate_bps(&args.high_rate).context("--high-rate")? / 8.0;
    let mut policies = parse_policies(&args.policy)?;
    policies.retain(|&p| p != Policy::Random);
    policies.insert(0, Policy::Random);
    if args.runs == 0 || args.runs_random == 0 || args.rounds <= args.warmup {
        bail!("need at least one run and more --rounds than --warmup");
    }

    let mut points: Vec<UtilPoint> = Vec::new();
    outln!(
        "{:>6} {:>9} {:<8} {:>5} {:>14} {:>12} {:>10}",
        "nodes",
        "low share",
        "policy",
        "runs",
        "util Mbit/s",
        "of capacity",
        "vs random"
    )?;
    for &n in &nodes {
        for &share in &shares {
            let slow = (share * n as f64).round() as usize;
            let caps: Vec<f64> = (0..n).map(|i| if i < slow { low } else { high }).collect();
            let fabric = Fabric {
                up_bytes_per_s: caps.clone(),
                down_bytes_per_s: caps,
            };
            let mut base = 0.0;
            for &policy in &policies {
                let runs = if policy == Policy::Random {
                    args.runs_random
                } else {
                    args.runs
                };
                let mut sum = 0.0;
                let mut cap = 0.0;
                for r in 0..runs {
                    let out = simulate_rounds(&RoundsSpec {
                        fabric: fabric.clone(),
                        policy,
                        fetchers: args.fetchers,
                        rounds: args.rounds,
                        warmup: args.warmup,
                        seed: args.seed.wrapping_add(r),
                        select: SelectOptions {
                            heaviest: args.heaviest,
                            ..SelectOptions::default()
                        },
                    })
                    .with_context(|| format!("{policy} on {n} nodes"))?;
                    sum += out.mean_util_bytes_per_s;
                    cap = out.capacity_bytes_per_s;
                }
                if std::io::stderr().is_terminal() {
                    errln!("  {policy} on {n} nodes ({share} slow) done");
                }
                let util = sum / runs as f64;
                if policy == Policy::Random {
                    base = util;
                }
                let p = UtilPoint {
                    nodes: n,
                    low_share: share,
                    policy: policy.name().to_string(),
                    runs,
                    mean_util_bps: util * 8.0,
                    capacity_bps: cap * 8.0,
                    of_capacity: util / cap,
                    gain_pct: 100.0 * (util - base) / base,
                };
                outln!(
                    "{:>6} {:>9.2} {:<8} {:>5} {:>14.1} {:>11.1}% {:>9.2}%",
                    n,
                    share,
                    p.policy,
                    runs,
                    p.mean_util_bps / 1e6,
                    100.0 * p.of_capacity,
                    p.gain_pct
                )?;
                points.push(p);
            }
        }
    }
    if let Some(p) = &args.json {
        let v = json!({
            "config": {
                "low_rate_bps": low * 8.0, "high_rate_bps": high * 8.0, "fetchers": args.fetchers,
                "rounds": args.rounds, "warmup": args.warmup, "seed": args.seed,
                "heaviest": args.heaviest,
            },
            "results": points,
        });
        std::fs::write(p, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(dir) = &args.plot {
        let file = super::plot::gain(dir, &points, nodes.len() > 1)?;
        outln!("gain over random: {}", file.display())?;
    }
    Ok(())
}
