//! `coflowkit milliquery ...`: the flash-burst paper's three queries (docs/milliquery.md):
//! synthetic tablets, and the distributed plans on local processes (`--local M`) or whatever
//! started us (mpirun, srun: docs/launch.md).

mod gen;
mod run;
mod run_rank;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum MilliqueryCmd {
    /// Write seeded synthetic tables as CSV tablets, one per rank per table.
    Gen(gen::GenArgs),
    /// Run queries q1, q2, q3 over the ranks' tablets; rank 0 prints and writes the results.
    Run(Box<run::RunArgs>),
}

pub fn run(c: MilliqueryCmd) -> anyhow::Result<()> {
    match c {
        MilliqueryCmd::Gen(a) => gen::run(a),
        MilliqueryCmd::Run(a) => run::run(*a),
    }
}
