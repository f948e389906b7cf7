//! `milliquery run`: checks the arguments (and with `--local`, that the tablets are for that
//! many ranks) before any rank starts, then launches the ranks or runs as one.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use coflowkit_group::ShuffleProto;
use coflowkit_milliquery::tablet::Table;
use coflowkit_milliquery::{HotKeys, Query};
use coflowkit_simcmd::flag_range::{f64_in, timeout_s, wait};

use super::run_rank;
use crate::ranks::{self, RanksArgs};

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub ranks: RanksArgs,
    /// Queries, comma-separated: q1, q2, q3.
    #[arg(long, value_delimiter = ',', default_value = "q1,q2,q3")]
    pub query: Vec<String>,
    /// The directory `milliquery gen` wrote (q1/, q2/, q3/ with one tablet per rank).
    #[arg(long)]
    pub data: PathBuf,
    /// Shuffle protocol: grpf, grpt, srpt, hadoop-C, madd, lockstep, high-entropy.
    #[arg(long, default_value = "grpf")]
    pub protocol: String,
    /// Hot-key handling, comma-separated to run each: off (as the paper), combine
    /// (pre-aggregate before Q2's shuffle and Q3's shuffle 1).
    #[arg(long, value_delimiter = ',', default_value = "off")]
    pub hot_keys: Vec<String>,
    /// Timed runs of each query; the report is the run with the median wall time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Untimed runs of each query first.
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// Seed of the partitioning hash (and of the high-entropy shuffle's choices).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seconds of silence before a peer is declared dead. A rank computes for a long time
    /// between collectives at large row counts (and longer on a loaded host), and the
    /// transport's default (100 resend periods, 0.5 s) takes that for death.
    #[arg(long, default_value_t = 60.0, value_parser = timeout_s())]
    pub dead_after_s: f64,
    /// Gather tree radix (spec: 6).
    #[arg(long, default_value_t = coflowkit_group::GATHER_K)]
    pub gather_k: u32,
    /// Lead time of the synchronised start (ms): rank 0 broadcasts a start this far ahead (at
    /// most 60,000).
    #[arg(long, default_value_t = 20.0,
          value_parser = f64_in(wait::START_MARGIN_MS.0, wait::START_MARGIN_MS.1))]
    pub start_margin_ms: f64,
    /// Write `{"config": {...}, "results": [one object per query and hot-key mode]}`.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn parse_queries(a: &RunArgs) -> Result<Vec<Query>> {
    let qs: Vec<Query> = a
        .query
        .iter()
        .map(|s| Query::parse(s))
        .collect::<Result<_, _>>()?;
    if qs.is_empty() {
        bail!("--query names no query");
    }
    Ok(qs)
}

pub fn parse_hot_keys(a: &RunArgs) -> Result<Vec<HotKeys>> {
    Ok(a.hot_keys
        .iter()
        .map(|s| HotKeys::parse(s))
        .collect::<Result<_, _>>()?)
}

pub fn run(a: RunArgs) -> Result<()> {
    let queries = parse_queries(&a)?;
    if ranks::checks_outputs(&a.ranks) {
        crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    }
    parse_hot_keys(&a)?;
    ShuffleProto::parse(&a.protocol)?;
    if let Some(m) = a.ranks.local {
        // Every table the queries read must have exactly M tablets: say so before starting.
        for q in &queries {
            let tables: &[Table] = match q {
                Query::Q1 => &[Table::Views],
                Query::Q2 => &[Table::Edits],
                Query::Q3 => &[Table::Commits, Table::Languages],
            };
            for t in tables {
                let n = t.count(&a.data)?;
                if n != m as usize {
                    bail!(
                        "{}: the tablets are for {n} ranks, but --local {m} ranks would run",
                        a.data.join(t.dir()).display()
                    );
                }
            }
        }
    }
    let timeout = Duration::from_secs_f64(a.ranks.timeout_s);
    if ranks::launch_here(&a.ranks, timeout)? {
        return Ok(());
    }
    run_rank::run(&a, &queries)
}
