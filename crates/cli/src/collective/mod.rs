//! `coflowkit collective ...`: group communication over the UDP transport, on local processes
//! (`--local M`) or whatever started us (mpirun, srun: docs/launch.md).

mod bench;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum CollectiveCmd {
    /// Latency of bcast, gather, all-gather, barrier and all-to-all-v: p50/p99 over iterations
    /// of the slowest rank's time, and the messages one operation sends.
    Bench(bench::BenchArgs),
}

pub fn run(c: CollectiveCmd) -> anyhow::Result<()> {
    match c {
        CollectiveCmd::Bench(a) => bench::run(a),
    }
}
