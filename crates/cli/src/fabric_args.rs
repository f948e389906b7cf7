//! The trace and the fabric it runs on, as every command takes them.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coflowkit_model::fabric_file::read_port_rates;
use coflowkit_model::trace::read_path;
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
    /// Replay only the first N coflows (by arrival) of the trace
    #[arg(long, value_name = "N")]
    pub coflows: Option<usize>,
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
        let mut trace = read_path(&path)?;
        if let Some(n) = self.coflows {
            trace
                .coflows
                .sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
            trace.coflows.truncate(n);
        }
        let fabric = self.fabric(trace.ports as usize)?;
        Ok((path, trace, fabric))
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
