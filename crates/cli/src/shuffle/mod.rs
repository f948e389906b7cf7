//! `coflowkit shuffle ...`: shuffle matrices and the packet-level simulator.

mod gen;
mod run;
mod run_rank;
mod run_report;
mod run_sim;
mod sim;
mod stats;
mod sweep;
mod sweep_plot;
mod sweep_rows;

use clap::Subcommand;
// The flags `shuffle sim` shares with the Python package live in coflowkit_simcmd.
use coflowkit_simcmd::shuffle::{matrix_args, sim_opts};

#[derive(Subcommand)]
pub enum ShuffleCmd {
    /// Generate a seeded shuffle matrix in whole packets.
    Gen(gen::GenArgs),
    /// Nodes, bytes, skewness and bound of a shuffle matrix.
    Stats(stats::StatsArgs),
    /// Simulate one shuffle packet by packet under one protocol.
    Sim(sim::SimArgs),
    /// Many seeded runs over a range of skewness, in parallel; CSV and charts.
    Sweep(sweep::SweepArgs),
    /// Simulator speed: one large shuffle timed in a release build.
    Bench(sim::BenchArgs),
    /// A real shuffle between processes over UDP, under one or more protocols, byte-exact.
    Run(run::RunArgs),
}

pub fn run(cmd: ShuffleCmd) -> anyhow::Result<()> {
    match cmd {
        ShuffleCmd::Gen(a) => gen::run(a),
        ShuffleCmd::Stats(a) => stats::run(a),
        ShuffleCmd::Sim(a) => sim::run(a),
        ShuffleCmd::Sweep(a) => sweep::run(a),
        ShuffleCmd::Bench(a) => sim::bench(a),
        ShuffleCmd::Run(a) => run::run(a),
    }
}
