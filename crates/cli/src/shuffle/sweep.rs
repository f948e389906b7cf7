//! `coflowkit shuffle sweep`: many seeded runs over a range of skewness, in parallel on all
//! cores; one CSV row per run, percentile summaries and thesis-style charts.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_shuffle::matrix::{generate_with, GenSpec};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use coflowkit_simcmd::flag_range::f64_in;

use super::matrix_args::MatrixArgs;
use super::sim_opts::SimOpts;
use super::sweep_plot::{band_chart, utilization_chart, Metric, UtilRun};
use super::sweep_rows::{summarize, write_runs, write_summary, Row};

#[derive(Args)]
pub struct SweepArgs {
    /// Number of nodes.
    #[arg(long, default_value_t = 160)]
    pub nodes: usize,
    /// Comma-separated protocols (as `shuffle sim --protocol`).
    #[arg(long, default_value = "grpf,hadoop-5,madd")]
    pub protocols: String,
    /// Skewness targets: START:END:STEP (inclusive) or a comma-separated list.
    #[arg(long, default_value = "0:1:0.05")]
    pub skews: String,
    /// Seeded runs per skewness point (the thesis uses at least 100; 1 to 100000).
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub runs: usize,
    /// Base seed; run r at point k uses a seed derived from (seed, k, r).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (0 = every core; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
    pub threads: usize,
    /// Skewness of the run shown in the utilization chart (run 0 at the nearest point; 0 to 1).
    #[arg(long, default_value_t = 0.5, value_parser = f64_in(0.0, 1.0))]
    pub util_skew: f64,
    /// Output directory: runs.csv, summary.csv, command.txt and the SVG charts.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub matrix: MatrixArgs,
    #[command(flatten)]
    pub sim: SimOpts,
}

/// Most simulations of one sweep: each keeps a row, and a million already takes days.
pub const MAX_SWEEP_RUNS: usize = 10_000_000;
/// Most skewness points of one sweep (0:1:0.0001).
pub const MAX_SKEW_POINTS: usize = 10_001;

/// Parses `START:END:STEP` (inclusive, no float drift) or `a,b,c`; every value in [0, 1].
pub fn parse_skews(s: &str) -> Result<Vec<f64>> {
    let v: Vec<f64> = if let Some((a, rest)) = s.split_once(':') {
        let Some((b, step)) = rest.split_once(':') else {
            bail!("--skews `{s}`: expected START:END:STEP or a comma-separated list");
        };
        let num = |t: &str| {
            t.trim()
                .parse::<f64>()
                .with_context(|| format!("--skews `{s}`: `{t}` is not a number"))
        };
        let (a, b, step) = (num(a)?, num(b)?, num(step)?);
        if step.is_nan() || step <= 0.0 || b < a {
            bail!("--skews `{s}`: STEP must be positive and END at least START");
        }
        // In f64 first: a step of 1e-300 would overflow a count (and mean nothing).
        let points = ((b - a) / step + 1e-9).floor() + 1.0;
        if points > MAX_SKEW_POINTS as f64 {
            bail!("--skews `{s}`: {points:.0} points, more than {MAX_SKEW_POINTS}");
        }
        let count = points as usize;
        (0..count)
            .map(|i| ((a + i as f64 * step) * 1e9).round() / 1e9)
            .collect()
    } else {
        s.split(',')
            .map(|t| {
                t.trim()
                    .parse::<f64>()
                    .with_context(|| format!("--skews `{s}`: `{t}` is not a number"))
            })
            .collect::<Result<_>>()?
    };
    if let Some(bad) = v.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        bail!("--skews `{s}`: {bad} is outside [0, 1]");
    }
    if v.is_empty() {
        bail!("--skews `{s}`: no skewness values");
    }
    if v.len() > MAX_SKEW_POINTS {
        bail!(
            "--skews `{s}`: {} points, more than {MAX_SKEW_POINTS}",
            v.len()
        );
    }
    Ok(v)
}

/// SplitMix64 finalizer: decorrelates nearby seeds.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of run `run` at skewness point `point`: the same whatever the thread count or the
/// protocol list, and shared by every protocol (paired comparison on the same matrix).
pub fn run_seed(base: u64, point: usize, run: usize) -> u64 {
    mix(mix(mix(base) ^ point as u64) ^ run as u64)
}

struct JobOut {
    rows: Vec<Row>,
    util: Vec<UtilRun>,
}

pub fn run(a: SweepArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::dir("--out", Some(&a.out))])?;
    let targets = parse_skews(&a.skews)?;
    let protocols: Vec<String> = a
        .protocols
        .split(',')
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if protocols.is_empty() {
        bail!("--protocols: no protocol given");
    }
    let total = targets.len() * a.runs * protocols.len();
    if total > MAX_SWEEP_RUNS {
        bail!(
            "{} skewness points x {} runs x {} protocols = {total} runs, more than {MAX_SWEEP_RUNS}",
            targets.len(),
            a.runs,
            protocols.len()
        );
    }
    let opts = a.matrix.options(a.nodes)?;
    // Refuse bad settings before hours of work: every protocol's configuration, and one
    // generation with the matrix options.
    for p in &protocols {
        let cfg = a
            .sim
            .to_config(p, 0)
            .with_context(|| format!("protocol `{p}`"))?;
        cfg.validate(a.nodes)
            .map_err(|e| anyhow::anyhow!("protocol `{p}`: {e}"))?;
    }
    let spec = |k: usize, r: usize| GenSpec {
        nodes: a.nodes,
        skew: targets[k],
        avg_packets: a.matrix.avg_packets,
        generator: a.matrix.generator(),
        seed: run_seed(a.seed, k, r),
    };
    generate_with(&spec(0, 0), &opts).context("matrix options")?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;

    // The representative run for the utilization chart: run 0 at the point nearest --util-skew.
    let dist = |k: usize| (targets[k] - a.util_skew).abs();
    let rep = (0..targets.len())
        .min_by(|&x, &y| dist(x).total_cmp(&dist(y)))
        .unwrap_or(0);
    // The command line, so a directory of results says how to make it again.
    let argv: Vec<String> = std::env::args().collect();
    let command = a.out.join("command.txt");
    std::fs::write(&command, argv.join(" ") + "\n")
        .with_context(|| format!("writing {}", command.display()))?;
    let jobs: Vec<(usize, usize)> = (0..targets.len())
        .flat_map(|k| (0..a.runs).map(move |r| (k, r)))
        .collect();
    let bar = ProgressBar::new((jobs.len() * protocols.len()) as u64);
    if std::io::stderr().is_terminal() {
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {elapsed} (eta {eta}) {msg}")
                .expect("valid template"),
        );
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads)
        .build()
        .context("starting worker threads")?;
    let outs: Vec<Result<JobOut>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(k, r)| -> Result<JobOut> {
                let s = spec(k, r);
                let g = generate_with(&s, &opts)?;
                let mut out = JobOut {
                    rows: Vec::with_capacity(protocols.len()),
                    util: Vec::new(),
                };
                for p in &protocols {
                    let cfg = a.sim.to_config(p, s.seed)?;
                    let rep_run = coflowkit_pktsim::run(&g.packets, &cfg);
                    out.rows.push(Row {
                        protocol: p.clone(),
                        skew_target: targets[k],
                        skew: g.skew_packets,
                        run: r,
                        seed: s.seed,
                        completion_s: rep_run.completion_s,
                        throughput_gbps: rep_run.throughput_gbps,
                        // Under preemption the bound is the oracle (optimality is against it).
                        bound_gbps: rep_run.oracle_gbps.unwrap_or(rep_run.bound_gbps),
                        optimality: rep_run.optimality,
                        peak_buffer_bytes: rep_run.peak_buffer_bytes,
                        peak_port_bytes: rep_run.peak_port_bytes,
                        peak_tor_bytes: rep_run.peak_tor_bytes,
                        peak_core_bytes: rep_run.peak_core_bytes,
                    });
                    if k == rep && r == 0 {
                        // T_opt = T x throughput / bound: both divide the same bytes. The
                        // network bound even under preemption: time axes stay comparable.
                        let ideal_s =
                            rep_run.completion_s * rep_run.throughput_gbps / rep_run.bound_gbps;
                        out.util.push(UtilRun {
                            protocol: p.clone(),
                            skew: g.skew_packets,
                            samples: rep_run.utilization,
                            ideal_s,
                        });
                    }
                    bar.inc(1);
                }
                Ok(out)
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut rows = Vec::with_capacity(jobs.len() * protocols.len());
    let mut util = Vec::new();
    for o in outs {
        let o = o?;
        rows.extend(o.rows);
        util.extend(o.util);
    }
    let points = summarize(&rows, &protocols, &targets);
    write_runs(&a.out.join("runs.csv"), &rows)?;
    write_summary(&a.out.join("summary.csv"), &points)?;
    let mut files = vec![command, a.out.join("runs.csv"), a.out.join("summary.csv")];
    files.push(band_chart(&a.out, Metric::Throughput, &points, &protocols)?);
    files.push(band_chart(&a.out, Metric::Optimality, &points, &protocols)?);
    if util
        .iter()
        .any(|u| !u.samples.is_empty() && u.ideal_s > 0.0)
    {
        files.push(utilization_chart(&a.out, &util)?);
    }
    outln!(
        "{:<12} {:>6} {:>8} {:>24} {:>10}",
        "protocol",
        "skew",
        "runs",
        "throughput p10/p50/p90",
        "opt p50"
    )?;
    for p in &points {
        outln!(
            "{:<12} {:>6.2} {:>8} {:>8.2}/{:>6.2}/{:>6.2} {:>10.4}",
            p.protocol,
            p.skew_target,
            p.runs,
            p.throughput.p10,
            p.throughput.p50,
            p.throughput.p90,
            p.optimality.p50
        )?;
    }
    for f in files {
        outln!("wrote {}", f.display())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skew_ranges_are_inclusive_without_drift() {
        let v = parse_skews("0:1:0.05").unwrap();
        assert_eq!(v.len(), 21);
        assert_eq!(v[3], 0.15);
        assert_eq!(v[20], 1.0);
        assert_eq!(parse_skews("0.05, 0.5").unwrap(), vec![0.05, 0.5]);
        assert!(parse_skews("0:1.5:0.5")
            .unwrap_err()
            .to_string()
            .contains("1.5 is outside"));
        assert!(parse_skews("0:1:0").is_err());
        assert!(parse_skews("0:1").is_err());
        assert!(parse_skews("a")
            .unwrap_err()
            .to_string()
            .contains("`a` is not a number"));
    }

    #[test]
    fn seeds_are_per_point_and_run() {
        let s = run_seed(7, 3, 5);
        assert_eq!(s, run_seed(7, 3, 5));
        assert_ne!(s, run_seed(7, 5, 3));
        assert_ne!(s, run_seed(8, 3, 5));
        assert_ne!(run_seed(7, 0, 1), run_seed(7, 1, 0));
    }
}
