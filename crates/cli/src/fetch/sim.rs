//! `coflowkit fetch sim`: pull-based shuffles under each source-selection policy, compared
//! with Hadoop's random choice on the same jobs.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_flowsim::pull::{
    from_trace, simulate_pull_observed, Job, LocalFetch, PullOptions, PullOutput, PullProgress,
    SyntheticSpec,
};
use coflowkit_model::trace::{read_path_with, ReadOptions, DEFAULT_MAX_FLOWS};
use coflowkit_model::units::MB;
use coflowkit_model::Fabric;
use coflowkit_sched::select::{Heaviest, Policy, SelectOptions};
use serde::Serialize;
use serde_json::json;

use super::rates::{node_rates, parse_policies};

#[derive(Args, Debug)]
pub struct FetchSimArgs {
    /// Nodes, 1 to 65536 [default: as many as --rates lists, else 16; with --trace, the
    /// trace's ports]
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=65_536))]
    pub nodes: Option<usize>,
    /// Node capacities, same up and down: `RATE[:COUNT],...` in node order (e.g.
    /// 160mbit:8,320mbit:8); one plain rate applies to every node [default: 1gbit]
    #[arg(long, value_name = "LIST")]
    pub rates: Option<String>,
    /// Map tasks per node and job; each map output holds one partition for every reducer
    #[arg(long, default_value_t = 4, value_name = "M")]
    pub maps_per_node: u32,
    /// Reduce tasks per job, placed on nodes round-robin [default: one per node]
    #[arg(long, value_name = "R")]
    pub reducers: Option<u32>,
    /// Concurrent fetches per reduce task (Hadoop's mapreduce.reduce.shuffle.parallelcopies)
    #[arg(long, default_value_t = 5, value_name = "F")]
    pub fetchers: usize,
    /// Source-selection policies: random, gss, pgss, opt (random is always run, as the baseline)
    #[arg(long, default_value = "random,gss,pgss", value_name = "LIST")]
    pub policy: String,
    /// PGSS's heaviest-loaded nodes: `count` (the paper) or `time` (count per uplink capacity;
    /// an exploration, not in the paper)
    #[arg(long, default_value = "count", value_name = "RULE")]
    pub heaviest: Heaviest,
    /// Seed of the workload (partition sizes) and of the policies' tie-breaks and random picks
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Repeat with seeds seed, seed+1, ... (wrapping past 2^64-1 to 0) and report means (1 to 100000)
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub runs: u64,
    /// Concurrent jobs (identical shape; job j's reducers start at node j)
    #[arg(long, default_value_t = 1, value_name = "J", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: u32,
    /// Seconds between job arrivals (0 to 2^53 ms, where times stop being exact)
    #[arg(long, default_value_t = 0.0, value_name = "S", value_parser = coflowkit_simcmd::flag_range::f64_in(0.0, coflowkit_model::trace::MAX_EXACT_MS / 1000.0))]
    pub job_gap: f64,
    /// Mean size of one partition (one map output for one reducer), MB (2^20 bytes); above 0
    /// and at most 2^33 MB (2^53 bytes, as the trace readers)
    #[arg(long, default_value_t = 16.0, value_name = "MB", value_parser = coflowkit_simcmd::flag_range::f64_positive(coflowkit_model::trace::MAX_MB))]
    pub partition_mb: f64,
    /// Partition sizes are uniform in mean x [1-s, 1+s]
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub size_spread: f64,
    /// Sources pre-scheduled per request by the reducer's cache (1 = no pre-scheduling)
    #[arg(long, default_value_t = 1, value_name = "B", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub batch: usize,
    /// Hadoop's rule: a node one fetcher of a task is pulling from is not offered to the task's
    /// other fetchers (default: the paper's model, which allows it)
    #[arg(long)]
    pub one_fetch_per_host: bool,
    /// A fetch from the reducer's own node: skip (local disk, no network) or network
    #[arg(long, default_value = "skip", value_name = "MODE")]
    pub local_fetch: LocalFetch,
    /// Replay a coflow trace pull-based instead: coflow = job, each reducer port = one reduce
    /// task, each flow = one fetch from its mapper port
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// With --trace: only the first N coflows by arrival (at least 1)
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub coflows: Option<usize>,
    /// The most fetches a run may hold: with --trace, the flows the trace may hold (a
    /// coflow-benchmark line of M mappers and R reducers is M x R flows); synthetic, jobs x
    /// reducers x nodes x maps per node. More is refused up front
    #[arg(long, default_value_t = DEFAULT_MAX_FLOWS, value_name = "N")]
    pub max_flows: u64,
    /// Write {"config", "results": [{"policy", "shuffle_time_s", "avg_task_rate_bps", ...}]}
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Draw the cumulative completion ratio of every policy (first run) as SVG into DIR
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// One policy's results, averaged over the runs.
#[derive(Serialize)]
pub struct PolicyResult {
    pub policy: String,
    pub shuffle_time_s: f64,
    pub avg_task_rate_bps: f64,
    pub link_utilization: f64,
    /// (T_random - T) / T_random, percent.
    pub shuffle_time_gain_pct: f64,
    /// (rate - rate_random) / rate_random, percent.
    pub task_rate_gain_pct: f64,
    pub decisions: f64,
    pub select_us_per_decision: f64,
    pub runs: Vec<RunResult>,
}

#[derive(Serialize)]
pub struct RunResult {
    pub seed: u64,
    pub shuffle_time_s: f64,
    pub avg_task_rate_bps: f64,
    pub link_utilization: f64,
    pub job_shuffle_times_s: Vec<f64>,
}

pub fn run(args: FetchSimArgs) -> Result<()> {
    crate::out::check_outputs(&[
        crate::out::Out::file("--json", args.json.as_deref()),
        crate::out::Out::dir("--plot", args.plot.as_deref()),
    ])?;
    let mut policies = parse_policies(&args.policy)?;
    if !policies.contains(&Policy::Random) {
        policies.insert(0, Policy::Random);
    }
    if args.fetchers == 0 {
        bail!("--fetchers must be at least 1");
    }
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    if !(args.partition_mb > 0.0 && args.partition_mb.is_finite()) {
        bail!("--partition-mb must be positive");
    }
    if !(0.0..=1.0).contains(&args.size_spread) {
        bail!("--size-spread must be between 0 and 1");
    }
    if !(args.job_gap >= 0.0 && args.job_gap.is_finite()) {
        bail!("--job-gap must be a non-negative number of seconds");
    }
    // Per-node tables scale with the ports a trace's coflows use, not those it declares.
    let (trace, used) = match &args.trace {
        Some(p) => {
            let mut t = read_path_with(p, &ReadOptions::with_max_flows(args.max_flows))?;
            // As `replay`: an empty trace ran to a table of zeros with exit 0 (pass 33, B18).
            if t.coflows.is_empty() {
                bail!("{}: the trace has no coflows to simulate", p.display());
            }
            t.coflows
                .sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
            if let Some(n) = args.coflows {
                t.coflows.truncate(n);
            }
            // Refused, not ignored (pass 34, C6).
            coflowkit_simcmd::sim::refuse_dags(
                p,
                &t,
                "`fetch sim` runs each coflow as a job started at its arrival, with no \
                 dependencies between coflows and no compute time",
            )?;
            let declared = t.ports;
            let used = t.compact_ports();
            if used.is_some() {
                errln!(
                    "{}: {declared} ports declared, {} used: the simulation numbers those 0..{} \
                     in order",
                    p.display(),
                    t.ports,
                    t.ports
                );
            }
            (Some(t), used.map(|u| (declared, u)))
        }
        None => (None, None),
    };
    let bps = match (&trace, &used) {
        (Some(t), Some((declared, used))) => {
            // `--rates`/`--nodes` describe the declared ports; one plain rate needs no list.
            let single = (args.rates.as_deref()).is_none_or(|r| !r.contains([',', ':']));
            if single && args.nodes.is_none_or(|n| n == *declared as usize) {
                node_rates(args.rates.as_deref(), None, t.ports as usize)?
            } else {
                let all = node_rates(args.rates.as_deref(), args.nodes, *declared as usize)?;
                if all.len() != *declared as usize {
                    bail!(
                        "--rates describes {} nodes but the trace declares {declared} ports",
                        all.len()
                    );
                }
                used.iter().map(|&p| all[p as usize]).collect()
            }
        }
        _ => {
            let default_nodes = trace.as_ref().map_or(16, |t| t.ports as usize);
            node_rates(args.rates.as_deref(), args.nodes, default_nodes)?
        }
    };
    let n = bps.len();
    if let Some(t) = &trace {
        if n != t.ports as usize {
            bail!(
                "--rates describes {n} nodes but the trace has {} ports",
                t.ports
            );
        }
    } else {
        // The synthetic workload is every reducer fetching from every map output.
        let reducers = args.reducers.unwrap_or(n as u32);
        let fetches = [args.jobs, reducers, args.maps_per_node]
            .iter()
            .try_fold(n as u64, |acc, &k| acc.checked_mul(u64::from(k)));
        if fetches.is_none_or(|f| f > args.max_flows) {
            bail!(
                "{} jobs x {reducers} reducers x {n} nodes x {} maps per node = {} fetches, over \
                 the limit of {} (--max-flows)",
                args.jobs,
                args.maps_per_node,
                fetches.map_or("more than 2^64".to_string(), |f| f.to_string()),
                args.max_flows
            );
        }
    }
    let fabric = Fabric {
        up_bytes_per_s: bps.iter().map(|b| b / 8.0).collect(),
        down_bytes_per_s: bps.iter().map(|b| b / 8.0).collect(),
    };
    let workload = |seed: u64| -> Vec<Job> {
        match &trace {
            Some(t) => from_trace(t, args.local_fetch),
            None => SyntheticSpec {
                nodes: n as u32,
                maps_per_node: args.maps_per_node,
                reducers: args.reducers.unwrap_or(n as u32),
                jobs: args.jobs,
                job_gap_s: args.job_gap,
                partition_bytes: args.partition_mb * MB,
                size_spread: args.size_spread,
                local: args.local_fetch,
                seed,
            }
            .generate(),
        }
    };

    // Long runs (traces, GSS on big clusters) report progress on a terminal, quiet when piped.
    let progress = std::io::stderr().is_terminal();
    let mut outs: Vec<Vec<PullOutput>> = vec![Vec::new(); policies.len()];
    for r in 0..args.runs {
        let seed = args.seed.wrapping_add(r);
        let jobs = workload(seed);
        for (i, &policy) in policies.iter().enumerate() {
            let opts = PullOptions {
                policy,
                fetchers: args.fetchers,
                batch: args.batch,
                seed,
                one_fetch_per_host: args.one_fetch_per_host,
                select: SelectOptions {
                    heaviest: args.heaviest,
                    ..SelectOptions::default()
                },
            };
            let out = simulate_pull_observed(&fabric, &jobs, &opts, progress_printer(policy))
                .with_context(|| format!("simulating {policy} (seed {seed})"))?;
            if progress {
                errln!("  {policy} (seed {seed}) done in {:.1} s", out.wall_s);
            }
            outs[i].push(out);
        }
    }

    let mean = |v: &[PullOutput], f: &dyn Fn(&PullOutput) -> f64| {
        v.iter().map(f).sum::<f64>() / v.len() as f64
    };
    let base = &outs[policies.iter().position(|&p| p == Policy::Random).unwrap()];
    let base_time = mean(base, &|o| o.shuffle_time_s);
    let base_rate = mean(base, &|o| o.avg_task_rate_bps());
    let results: Vec<PolicyResult> = policies
        .iter()
        .zip(&outs)
        .map(|(p, v)| {
            let time = mean(v, &|o| o.shuffle_time_s);
            let rate = mean(v, &|o| o.avg_task_rate_bps());
            let decisions = mean(v, &|o| o.decisions as f64);
            PolicyResult {
                policy: p.name().to_string(),
                shuffle_time_s: time,
                avg_task_rate_bps: rate,
                link_utilization: mean(v, &|o| o.link_utilization()),
                shuffle_time_gain_pct: pct(base_time - time, base_time),
                task_rate_gain_pct: pct(rate - base_rate, base_rate),
                decisions,
                select_us_per_decision: 1e6 * mean(v, &|o| o.select_wall_s) / decisions.max(1.0),
                runs: v
                    .iter()
                    .enumerate()
                    .map(|(r, o)| RunResult {
                        seed: args.seed.wrapping_add(r as u64),
                        shuffle_time_s: o.shuffle_time_s,
                        avg_task_rate_bps: o.avg_task_rate_bps(),
                        link_utilization: o.link_utilization(),
                        job_shuffle_times_s: o.jobs.iter().map(|j| j.shuffle_time_s).collect(),
                    })
                    .collect(),
            }
        })
        .collect();

    let first = &outs[0][0];
    let fetches: usize = workload(args.seed)
        .iter()
        .flat_map(|j| &j.reducers)
        .map(|r| r.fetches.len())
        .sum();
    outln!(
        "{}: {n} nodes, {} jobs, {} reduce tasks, {fetches} fetches, {:.1} MB, {} fetchers, {} run(s)",
        args.trace
            .as_ref()
            .map_or("synthetic".to_string(), |p| p.display().to_string()),
        first.jobs.len(),
        first.tasks.len(),
        first.total_bytes / MB,
        args.fetchers,
        args.runs
    )?;
    outln!(
        "{:<8} {:>12} {:>10} {:>17} {:>10} {:>9} {:>10} {:>12}",
        "policy",
        "shuffle s",
        "vs random",
        "task rate Mbit/s",
        "vs random",
        "link use",
        "decisions",
        "µs/decision"
    )?;
    for r in &results {
        outln!(
            "{:<8} {:>12.3} {:>9.2}% {:>17.2} {:>9.2}% {:>8.1}% {:>10.0} {:>12.1}",
            r.policy,
            r.shuffle_time_s,
            r.shuffle_time_gain_pct,
            r.avg_task_rate_bps / 1e6,
            r.task_rate_gain_pct,
            100.0 * r.link_utilization,
            r.decisions,
            r.select_us_per_decision
        )?;
    }
    if let Some(p) = &args.json {
        let v = json!({
            "config": {
                "trace": args.trace.as_ref().map(|p| p.display().to_string()),
                "coflows": args.coflows,
                "nodes": n,
                "rates_bps": bps,
                "maps_per_node": args.maps_per_node,
                "reducers": args.reducers.unwrap_or(n as u32),
                "fetchers": args.fetchers,
                "jobs": args.jobs,
                "job_gap_s": args.job_gap,
                "partition_mb": args.partition_mb,
                "size_spread": args.size_spread,
                "batch": args.batch,
                "one_fetch_per_host": args.one_fetch_per_host,
                "local_fetch": args.local_fetch,
                "seed": args.seed,
                "runs": args.runs,
                "select": SelectOptions {
                    heaviest: args.heaviest,
                    ..SelectOptions::default()
                },
            },
            "results": results,
        });
        std::fs::write(p, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(dir) = &args.plot {
        let curves: Vec<(&str, &[(f64, f64)])> = policies
            .iter()
            .zip(&outs)
            .map(|(p, v)| (p.name(), v[0].completion_curve.as_slice()))
            .collect();
        let file = super::plot::completion_ratio(dir, &curves)?;
        outln!("completion ratio: {}", file.display())?;
    }
    Ok(())
}

/// A run longer than a few seconds (GSS and PGSS evaluate every candidate source against the
/// whole pattern: a task of M sources costs them about M^2 / 2 evaluations) says on stderr
/// every few seconds how far it has come.
fn progress_printer(policy: Policy) -> impl FnMut(PullProgress) {
    let mut every = crate::every::Every::new();
    move |p| {
        if let Some(t) = every.due() {
            errln!(
                "  {policy}: {:.0} s: at {:.3} s simulated, {} of {} fetches done ({:.1}%), {} \
                 decisions, {} max-min evaluations",
                t.as_secs_f64(),
                p.time_s,
                p.fetches_done,
                p.fetches,
                100.0 * p.fetches_done as f64 / p.fetches.max(1) as f64,
                p.decisions,
                p.evaluations
            );
        }
    }
}

fn pct(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        100.0 * num / den
    } else {
        0.0
    }
}
