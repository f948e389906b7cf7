//! `coflowkit shuffle run`: a real shuffle between processes over kernel UDP, under one or more
//! protocols, byte-exact against its matrix. `--local M` starts M ranks on this host (loopback,
//! or with `--netns` one network namespace per rank shaped to `--rate`); started by `mpirun`
//! or `srun` it runs as the rank their variables name (docs/transport.md).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_model::units::{parse_rate_bps, parse_size_bytes};

use super::matrix_args::MatrixArgs;
use super::run_rank;
use crate::ranks::{self, RanksArgs};

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub ranks: RanksArgs,
    /// A matrix file (`shuffle gen` writes them; packets or normalized); its sizes are scaled so
    /// the average message has --avg-bytes. Otherwise one is generated from --skew and --seed.
    #[arg(long, value_name = "FILE", conflicts_with = "skew")]
    pub matrix: Option<PathBuf>,
    /// Message skewness of the generated matrix, in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub skew: f64,
    /// Average message size in bytes (100, 1k, 64k, 1m; k = 1024).
    #[arg(long, default_value = "64k", value_parser = size)]
    pub avg_bytes: u64,
    /// Protocols, comma-separated: grpf, grpt, srpt, hadoop-C (hadoop = hadoop-5), madd,
    /// lockstep, high-entropy, push-rr, push-blocks.
    #[arg(long, short, default_value = "grpf", value_delimiter = ',')]
    pub protocol: Vec<String>,
    /// Grant batching of the grant protocols (grpf, grpt, srpt, hadoop-C): receivers grant in
    /// units of K packets, one GRANT datagram per unit (1: one per DATA packet, the thesis'
    /// protocol). Several values run each grant protocol once per value, in rows named
    /// `grpf/b4` [default: the transport's, 4].
    #[arg(long, value_name = "K", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    pub grant_batch: Vec<u32>,
    /// Runs of each protocol; the table shows the median completion.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Seed of the matrix, the payloads and every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the results as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub gen: MatrixArgs,
}

fn size(s: &str) -> Result<u64, String> {
    parse_size_bytes(s).map_err(|e| e.to_string())
}

pub fn run(a: RunArgs) -> Result<()> {
    if ranks::checks_outputs(&a.ranks) {
        crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    }
    if !(0.0..=1.0).contains(&a.skew) {
        bail!("--skew must be in [0, 1], got {}", a.skew);
    }
    if let Some(r) = &a.ranks.rate {
        parse_rate_bps(r).context("--rate")?;
    }
    for p in &a.protocol {
        run_rank::parse_protocol(p, a.seed).with_context(|| format!("--protocol {p}"))?;
    }
    if let Some(m) = &a.matrix {
        // Checked here too, so a bad file fails before any rank starts.
        let f = coflowkit_shuffle::matrix::read_matrix_file(m)?;
        run_rank::checked_matrix(&m.display().to_string(), &f, a.avg_bytes)?;
    }
    let timeout = Duration::from_secs_f64(a.ranks.timeout_s);
    if ranks::launch_here(&a.ranks, timeout)? {
        return Ok(());
    }
    run_rank::run(&a)
}
