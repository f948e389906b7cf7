//! The trace and the fabric it runs on, as every command takes them.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use coflowkit_model::fabric_file::read_port_rates;
use coflowkit_model::trace::{read_path_with, ReadOptions, DEFAULT_MAX_FLOWS};
use coflowkit_model::units::parse_rate_bps;
use coflowkit_model::{Fabric, Trace};

/// The bundled Facebook trace, found beside the binary's source tree or the working directory.
pub const DEFAULT_TRACE: &str = "data/traces/FB2010-1Hr-150-0.txt";

#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Coflow trace (coflow-benchmark or Sincronia format, detected) [default: the bundled
    /// Facebook trace, data/traces/FB2010-1Hr-150-0.txt]
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Capacity of every port, each way: bits per second (1e9), or 10gbit, 500mbit
    #[arg(long, default_value = "1gbit", value_name = "RATE", value_parser = parse_rate)]
    pub port_rate: f64,
    /// Per-port capacities (lines `<port> <uplink> [<downlink>]`); unlisted ports keep --port-rate
    #[arg(long, value_name = "FILE")]
    pub port_rates: Option<PathBuf>,
    /// Replay only the first N coflows (by arrival) of the trace (at least 1); a coflow whose
    /// parent is not among them is left out too
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub coflows: Option<usize>,
    /// The most flows the trace may hold (a coflow-benchmark line of M mappers and R reducers
    /// is M x R flows); a trace implying more is refused before they are made
    #[arg(long, default_value_t = DEFAULT_MAX_FLOWS, value_name = "N")]
    pub max_flows: u64,
}

fn parse_rate(s: &str) -> Result<f64, String> {
    parse_rate_bps(s).map_err(|e| e.to_string())
}

impl WorkloadArgs {
    pub fn trace_path(&self) -> PathBuf {
        self.trace.clone().unwrap_or_else(default_trace_path)
    }

    pub fn load(&self) -> Result<(PathBuf, Trace, Fabric)> {
        let path = self.trace_path();
        let (trace, fabric) = self.prepare(&path, self.read(&path)?)?;
        Ok((path, trace, fabric))
    }

    /// The trace at `path`, read within `--max-flows`.
    pub fn read(&self, path: &Path) -> Result<Trace> {
        Ok(read_path_with(
            path,
            &ReadOptions::with_max_flows(self.max_flows),
        )?)
    }

    /// A trace read from `path` (or made elsewhere, `path` naming it) as the flags ask for it:
    /// the first `--coflows` by arrival, and its fabric.
    pub fn prepare(&self, path: &Path, mut trace: Trace) -> Result<(Trace, Fabric)> {
        if let Some(n) = self.coflows {
            trace
                .coflows
                .sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
            trace.coflows.truncate(n);
            // Parents come before their children in arrival order: one pass keeps whole DAGs.
            if trace.coflows.iter().any(|c| !c.parents.is_empty()) {
                let mut kept = std::collections::HashSet::new();
                let before = trace.coflows.len();
                trace.coflows.retain(|c| {
                    let keep = c.parents.iter().all(|p| kept.contains(p));
                    if keep {
                        kept.insert(c.id);
                    }
                    keep
                });
                if trace.coflows.len() < before {
                    let _ = writeln!(
                        std::io::stderr(),
                        "{}: --coflows {n}: {} of the first {before} coflows have a parent \
                         outside them (or such an ancestor) and are left out",
                        path.display(),
                        before - trace.coflows.len()
                    );
                }
            }
        }
        // Tables scale with the ports the coflows use, not those the trace declares.
        let declared = trace.ports;
        let used = trace.compact_ports();
        if used.is_some() {
            let _ = writeln!(
                std::io::stderr(),
                "{}: {declared} ports declared, {} used: the simulation numbers those 0..{} in \
                 order",
                path.display(),
                trace.ports,
                trace.ports
            );
        }
        let fabric = match (&used, &self.port_rates) {
            (Some(used), Some(file)) => {
                if declared > MAX_DECLARED_WITH_RATES {
                    anyhow::bail!(
                        "{}: the trace declares {declared} ports; --port-rates reads a rate for \
                         each declared port, at most {MAX_DECLARED_WITH_RATES}",
                        path.display()
                    );
                }
                let all = read_port_rates(file, declared as usize, self.port_rate)?;
                let pick = |v: &[f64]| -> Vec<f64> {
                    let mut out: Vec<f64> = used.iter().map(|&p| v[p as usize]).collect();
                    out.resize(trace.ports as usize, self.port_rate / 8.0);
                    out
                };
                Fabric {
                    up_bytes_per_s: pick(&all.up_bytes_per_s),
                    down_bytes_per_s: pick(&all.down_bytes_per_s),
                }
            }
            _ => self.fabric(trace.ports as usize)?,
        };
        Ok((trace, fabric))
    }

    pub fn fabric(&self, ports: usize) -> Result<Fabric> {
        match &self.port_rates {
            Some(p) => Ok(read_port_rates(p, ports, self.port_rate)?),
            None => Ok(Fabric::uniform_bps(ports, self.port_rate)),
        }
    }
}

/// The bundled trace: relative to the working directory, else to the source checkout this
/// binary was built from (so `cargo run` works from anywhere inside it).
pub fn default_trace_path() -> PathBuf {
    let here = PathBuf::from(DEFAULT_TRACE);
    if here.exists() {
        return here;
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(DEFAULT_TRACE);
    if built.exists() {
        built
    } else {
        here
    }
}

/// The most ports a trace may declare when `--port-rates` gives their rates (a rate is read
/// for each, 17 bytes per port).
const MAX_DECLARED_WITH_RATES: u32 = 1 << 24;
