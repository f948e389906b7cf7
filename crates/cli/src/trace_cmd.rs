//! `coflowkit trace ...`: statistics, format conversion and synthetic workloads.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use coflowkit_model::gen::tpcds::{MAX_COMPUTE_MS, MAX_QUERIES, MAX_SCANS};
use coflowkit_model::gen::{
    self, default_classes, ClassSpec, CustomSpec, FbScaleSpec, GenError, TpcdsSpec,
};
use coflowkit_model::trace::{self, stats::TraceStats, Format, ReadOptions, DEFAULT_MAX_FLOWS};
use coflowkit_model::Trace;
use coflowkit_simcmd::flag_range::{f64_in, zero_or_at_least};
use coflowkit_simcmd::sim::ChildSendersArg;

use crate::fabric_args::default_trace_path;

#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Ports, coflows, flows, bytes, arrivals and the SN/LN/SW/LW bins of a trace
    Stats {
        /// Trace file [default: the bundled Facebook trace]
        file: Option<PathBuf>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        limit: FlowLimit,
    },
    /// Rewrite a trace in the other format (or the same one, normalized)
    Convert {
        file: PathBuf,
        #[command(flatten)]
        out: OutArgs,
        #[command(flatten)]
        limit: FlowLimit,
    },
    /// Generate a synthetic workload
    #[command(subcommand)]
    Gen(GenCmd),
}

#[derive(Subcommand, Debug)]
pub enum GenCmd {
    /// Coflows drawn from classes of width and length (CoflowSim's CUSTOM generator)
    Custom {
        /// Fabric size
        #[arg(long, default_value_t = 150)]
        ports: u32,
        /// Number of coflows (at least 1)
        #[arg(long, default_value_t = 500, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        coflows: usize,
        /// A class NAME:FRACTION:MINW-MAXW:MINMB-MAXMB (repeat; fractions sum to 1)
        /// [default: the FB bin mix SN/LN/SW/LW]
        #[arg(long = "class", value_name = "CLASS")]
        classes: Vec<ClassSpec>,
        /// Mean of the exponential inter-arrival times, milliseconds: 0 (all at once) or at
        /// least 0.001 (arrivals are whole milliseconds; a smaller mean is 0)
        #[arg(long, default_value_t = 1000.0, value_parser = zero_or_at_least(1e-3))]
        mean_interarrival_ms: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        out: OutArgs,
        #[command(flatten)]
        limit: FlowLimit,
    },
    /// The Facebook trace resampled: more coflows, a higher load, a larger fabric
    Fb {
        /// Trace to resample [default: the bundled Facebook trace]
        #[arg(long)]
        base: Option<PathBuf>,
        /// Number of coflows, at least 1 (5260 = 10x the FB trace)
        #[arg(long, default_value_t = 5260, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        coflows: usize,
        /// Arrival rate relative to the base trace (2 = twice as many coflows per second)
        #[arg(long, default_value_t = 1.0)]
        load: f64,
        /// Fabric size [default: the base trace's]
        #[arg(long)]
        ports: Option<u32>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        out: OutArgs,
        #[command(flatten)]
        limit: FlowLimit,
    },
    /// A TPC-DS-like DAG workload (not TPC-DS): queries as DAGs of stages, several scans
    /// feeding joins feeding an aggregate (sometimes a sort), one coflow per edge with its
    /// parents and its producing stage's compute time; sizes drawn from a base trace
    /// (docs/traces.md, docs/choices.md)
    Tpcds {
        /// Trace the coflows are drawn from [default: the bundled Facebook trace]
        #[arg(long)]
        base: Option<PathBuf>,
        /// Number of queries (jobs; 1 to 1000000)
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=MAX_QUERIES as u64))]
        queries: u64,
        /// Scans per query are drawn from 1..=N (N from 1 to 64)
        #[arg(long, default_value_t = 5, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_SCANS as u64))]
        max_scans: u64,
        /// Compute time of a stage, ms: MIN-MAX (uniform) or one value (0 to 86400000, a day)
        #[arg(long, default_value = "500-5000", value_name = "MIN-MAX", value_parser = parse_ms_range)]
        compute_ms: (f64, f64),
        /// Coflow arrival rate relative to the base trace (2 = twice as many coflows per second;
        /// 0.000001 to 1000000)
        #[arg(long, default_value_t = 1.0, value_parser = f64_in(TPCDS_LOAD.0, TPCDS_LOAD.1))]
        load: f64,
        /// Fabric size [default: the ports the base trace uses]
        #[arg(long)]
        ports: Option<u32>,
        /// Where a later coflow's senders are (docs/choices.md)
        #[arg(long, value_enum, default_value_t = ChildSendersArg::DrawnOnLanded, value_name = "HOW")]
        child_senders: ChildSendersArg,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        out: OutArgs,
        #[command(flatten)]
        limit: FlowLimit,
    },
    /// HUG's host-level experiment (Fig 7.10): A one flow 0 -> 1, B n flows 0 -> 2..n+1
    HugHost {
        /// B's flows
        #[arg(long, default_value_t = 10)]
        n: u32,
        /// Every flow's size, MiB
        #[arg(long, default_value_t = 100.0)]
        mb: f64,
        #[command(flatten)]
        out: OutArgs,
    },
    /// HUG's network-level experiment (Fig 7.11): A i -> i+H/2, B all-to-all, C j -> j+H/4
    /// (permutations: write it with --format sincronia)
    HugNet {
        /// Machines H, one VM of each coflow on each
        #[arg(long, default_value_t = 8)]
        hosts: u32,
        /// Every flow's size, MiB
        #[arg(long, default_value_t = 100.0)]
        mb: f64,
        /// Arrival times of A, B and C in seconds
        #[arg(long, value_delimiter = ',', default_values_t = [0.0, 0.25, 0.5])]
        arrivals_s: Vec<f64>,
        #[command(flatten)]
        out: OutArgs,
    },
}

/// The most flows a trace read or written may hold.
#[derive(Args, Debug, Clone, Copy)]
pub struct FlowLimit {
    /// The most flows a trace may hold (a coflow-benchmark line of M mappers and R reducers is
    /// M x R flows): a trace implying more is refused before they are made, and a generated one
    /// is not written
    #[arg(long, default_value_t = DEFAULT_MAX_FLOWS, value_name = "N")]
    pub max_flows: u64,
}

impl FlowLimit {
    fn read(&self, path: &std::path::Path) -> Result<Trace> {
        Ok(trace::read_path_with(
            path,
            &ReadOptions::with_max_flows(self.max_flows),
        )?)
    }

    /// A generated trace, unless the readers would refuse it for its flows.
    fn check(&self, t: Trace) -> Result<Trace> {
        let flows = t.flows() as u64;
        if flows > self.max_flows {
            anyhow::bail!(
                "the generated trace has {flows} flows, over the limit of {} a trace may hold \
                 (--max-flows; the readers would refuse it): ask for fewer --coflows",
                self.max_flows
            );
        }
        Ok(t)
    }
}

#[derive(Args, Debug)]
pub struct OutArgs {
    /// Output file [default: standard output]
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Output format: benchmark (coflow-benchmark) or sincronia
    #[arg(long, default_value = "benchmark")]
    pub format: Format,
}

impl OutArgs {
    fn write(&self, t: &Trace) -> Result<()> {
        match &self.output {
            Some(p) => {
                let f = File::create(p).with_context(|| format!("creating {}", p.display()))?;
                let mut w = BufWriter::new(f);
                // The file is named: `-o /dev/full` said only "cannot write trace" (B14).
                let writing = || format!("writing {}", p.display());
                trace::write(t, self.format, &mut w).with_context(writing)?;
                w.flush().with_context(writing)?;
                errln!(
                    "wrote {} coflows, {} flows to {}",
                    t.coflows.len(),
                    t.flows(),
                    p.display()
                );
            }
            None => {
                trace::write(t, self.format, crate::out::Stdout)?;
            }
        }
        Ok(())
    }
}

impl TraceCmd {
    /// Where the command writes its trace (`-o`), if it writes one to a file.
    fn output(&self) -> Option<&std::path::Path> {
        let out = match self {
            TraceCmd::Stats { .. } => return None,
            TraceCmd::Convert { out, .. }
            | TraceCmd::Gen(
                GenCmd::Custom { out, .. }
                | GenCmd::Fb { out, .. }
                | GenCmd::Tpcds { out, .. }
                | GenCmd::HugHost { out, .. }
                | GenCmd::HugNet { out, .. },
            ) => out,
        };
        out.output.as_deref()
    }
}

pub fn run(cmd: TraceCmd) -> Result<()> {
    // `-o` is checked before the trace is read or generated (pass 34, C9).
    crate::out::check_outputs(&[crate::out::Out::file("--output", cmd.output())])?;
    match cmd {
        TraceCmd::Stats { file, json, limit } => {
            let path = file.unwrap_or_else(default_trace_path);
            let t = limit.read(&path)?;
            let s = TraceStats::of(&t);
            if json {
                outln!("{}", serde_json::to_string_pretty(&s)?)?;
            } else {
                outln!("{}", path.display())?;
                out!("{s}")?;
            }
        }
        TraceCmd::Convert { file, out, limit } => out.write(&limit.read(&file)?)?,
        TraceCmd::Gen(GenCmd::Custom {
            ports,
            coflows,
            classes,
            mean_interarrival_ms,
            seed,
            out,
            limit,
        }) => {
            check_gen_size(coflows, 1.0)?;
            let spec = CustomSpec {
                ports,
                coflows,
                classes: if classes.is_empty() {
                    default_classes()
                } else {
                    classes
                },
                mean_interarrival_ms,
                seed,
            };
            out.write(&limit.check(spec.generate().map_err(flag_error)?)?)?;
        }
        TraceCmd::Gen(GenCmd::Fb {
            base,
            coflows,
            load,
            ports,
            seed,
            out,
            limit,
        }) => {
            let base = limit.read(&base.unwrap_or_else(default_trace_path))?;
            let per_coflow = base.flows() as f64 / base.coflows.len().max(1) as f64;
            check_gen_size(coflows, per_coflow)?;
            let spec = FbScaleSpec {
                coflows,
                load,
                ports,
                seed,
            };
            out.write(&limit.check(spec.generate(&base).map_err(flag_error)?)?)?;
        }
        TraceCmd::Gen(GenCmd::Tpcds {
            base,
            queries,
            max_scans,
            compute_ms,
            load,
            ports,
            child_senders,
            seed,
            out,
            limit,
        }) => {
            let mut base = limit.read(&base.unwrap_or_else(default_trace_path))?;
            // Ports renumbered to those the base uses, as `sim` does before `--tpcds`: the
            // same seed then gives `sim --tpcds` this very workload.
            base.compact_ports();
            let per_coflow = base.flows() as f64 / base.coflows.len().max(1) as f64;
            let (queries, max_scans) = (queries as usize, max_scans as usize);
            // At most 2 x scans coflows a query; the message names the flags given
            // (adversarial pass 34, C7: it named `--coflows`, which tpcds does not have).
            check_gen_size_of(
                &format!("--queries {queries} with --max-scans {max_scans}"),
                queries.saturating_mul(2 * max_scans.max(1)),
                per_coflow,
            )?;
            let spec = TpcdsSpec {
                queries,
                max_scans,
                compute_ms,
                load,
                ports,
                seed,
                child_senders: child_senders.into(),
            };
            out.write(&limit.check(spec.generate(&base).map_err(flag_error)?)?)?;
        }
        TraceCmd::Gen(GenCmd::HugHost { n, mb, out }) => {
            out.write(&gen::hug::host_level(n, mb).map_err(flag_error)?)?
        }
        TraceCmd::Gen(GenCmd::HugNet {
            hosts,
            mb,
            arrivals_s,
            out,
        }) => {
            let at: [f64; 3] = arrivals_s.try_into().map_err(|v: Vec<f64>| {
                anyhow::anyhow!("--arrivals-s: {} values, want 3", v.len())
            })?;
            out.write(&gen::hug::network_level(hosts, mb, at).map_err(flag_error)?)?
        }
    }
    Ok(())
}

/// A generator's refusal of a setting, naming the flag the setting came from.
fn flag_error(e: GenError) -> anyhow::Error {
    match e {
        GenError::BadSpec { field, why }
            if matches!(
                field,
                "load"
                    | "ports"
                    | "mean_interarrival_ms"
                    | "mb"
                    | "n"
                    | "hosts"
                    | "arrivals_s"
                    | "queries"
                    | "max_scans"
                    | "compute_ms"
            ) =>
        {
            anyhow::anyhow!("--{}: {why}", field.replace('_', "-"))
        }
        e => e.into(),
    }
}

/// `trace gen tpcds --load`: a millionth to a million times the base trace's rate (1e-320
/// printed a 330-digit mean interarrival, adversarial pass 34, C11).
const TPCDS_LOAD: (f64, f64) = (1e-6, 1e6);

/// `MIN-MAX` or a single value, in ms, each from 0 to a day and MIN at most MAX (1e308 was
/// echoed back in 309 digits by the generator, adversarial pass 34, C11).
fn parse_ms_range(s: &str) -> Result<(f64, f64), String> {
    let num = |t: &str| {
        match t.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=MAX_COMPUTE_MS).contains(&v) => Ok(v + 0.0),
        Ok(_) => Err(format!(
            "`{}` ms is out of range: each of MIN-MAX must lie from 0 to {MAX_COMPUTE_MS} ms (a day)",
            short(t)
        )),
        Err(_) => Err(format!(
            "`{}` is not a number of ms (expected MIN-MAX, e.g. 500-5000)",
            short(t)
        )),
    }
    };
    let (lo, hi) = match s.split_once('-') {
        Some((a, b)) if !a.trim().is_empty() => (num(a)?, num(b)?),
        _ => {
            let v = num(s)?;
            (v, v)
        }
    };
    if lo > hi {
        return Err(format!(
            "MIN is above MAX in `{}` (expected MIN-MAX, e.g. 500-5000)",
            short(s)
        ));
    }
    Ok((lo, hi))
}

/// A token as typed, cut to 40 characters (a flag value may be a 300-digit number).
fn short(t: &str) -> String {
    let t = t.trim();
    match t.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t.to_string(),
    }
}

/// Bytes a generated flow takes in memory, about.
const FLOW_BYTES: f64 = 64.0;
/// The most memory a generated trace may take; more is refused up front with the estimate.
const MAX_GEN_BYTES: f64 = 8e9;

/// Refuse `coflows` of about `flows_per_coflow` flows each (at least) if they would pass
/// [`MAX_GEN_BYTES`].
fn check_gen_size(coflows: usize, flows_per_coflow: f64) -> Result<()> {
    check_gen_size_of(&format!("--coflows {coflows}"), coflows, flows_per_coflow)
}

/// [`check_gen_size`], naming the flags that set the size as `flags`.
fn check_gen_size_of(flags: &str, coflows: usize, flows_per_coflow: f64) -> Result<()> {
    let need = coflows as f64 * flows_per_coflow.max(1.0) * FLOW_BYTES;
    if need > MAX_GEN_BYTES {
        anyhow::bail!(
            "{flags}: the trace would need about {:.0} GB in memory ({coflows} coflows \
             x {flows_per_coflow:.0} flows x {FLOW_BYTES} bytes), over the limit of {:.0} GB",
            need / 1e9,
            MAX_GEN_BYTES / 1e9
        );
    }
    Ok(())
}
