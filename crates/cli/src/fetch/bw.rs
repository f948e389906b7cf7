//! `coflowkit fetch bw`: the max-min fair rate of every flow of a pattern and their total (the
//! paper's "Overall"), on nodes whose uplink and downlink have the same capacity.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use coflowkit_model::Fabric;
use coflowkit_sched::select::Bandwidth;
use serde_json::json;

use super::rates::{parse_flows, parse_rates};

#[derive(Args, Debug)]
pub struct BwArgs {
    /// Node capacities, same up and down: `RATE[:COUNT],...` in node order; a plain number is
    /// bits per second (e.g. 6,6,12 or 160mbit:8,320mbit:8)
    #[arg(long, value_name = "LIST")]
    pub rates: String,
    /// Flows as SRC-DST node indices (0-based), repeats allowed: e.g. 0-2,1-2,0-1
    #[arg(long, value_name = "LIST")]
    pub flows: String,
    /// Also write {"rates": [...], "total": ...} (bits per second, flows in the order given)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn run(args: BwArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::file("--json", args.json.as_deref())])?;
    let caps = parse_rates(&args.rates)?;
    let flows = parse_flows(&args.flows, caps.len())?;
    // Max-min fairness is scale-free, so the water-filling runs on bits per second directly.
    let fabric = Fabric {
        up_bytes_per_s: caps.clone(),
        down_bytes_per_s: caps,
    };
    let mut bw = Bandwidth::new(fabric);
    let rates: Vec<f64> = bw.rates(&flows, &[]).iter().map(|&r| tidy(r)).collect();
    let total = tidy(rates.iter().sum());
    outln!("{:>5} {:>5} {:>5} {:>16}", "flow", "src", "dst", "rate bps")?;
    for (i, (&(s, d), r)) in flows.iter().zip(&rates).enumerate() {
        outln!("{i:>5} {s:>5} {d:>5} {r:>16}")?;
    }
    outln!("{:>17} {total:>16}", "total")?;
    if let Some(p) = &args.json {
        let v = json!({ "rates": rates, "total": total });
        std::fs::write(p, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

/// Rounds away the last bits of floating-point dust (12 significant digits), so that rates
/// that are exactly 4 print as 4 rather than 3.9999999999999996.
fn tidy(x: f64) -> f64 {
    format!("{x:.11e}").parse().unwrap_or(x)
}
