//! `coflowkit hug ...`: multi-tenant network sharing (thesis ch. 7): HUG, DRF and PS-P
//! allocations for given correlation vectors, and how long computing them takes.

mod alloc;
pub(crate) mod bench;
mod distribute;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum HugCmd {
    /// Allocate links among tenants given their correlation vectors (JSON in, JSON out):
    /// the isolation guarantee P*, each tenant's guarantee, consumption and progress.
    Alloc(alloc::AllocArgs),
    /// Allocation computing time at 100, 10,000 and 100,000 machines (run a release build).
    Bench(bench::BenchArgs),
    /// How long a new allocation takes to reach every machine: a coordinator and N emulated
    /// daemons on loopback (run a release build).
    Distribute(distribute::DistributeArgs),
}

pub fn run(cmd: HugCmd) -> anyhow::Result<()> {
    match cmd {
        HugCmd::Alloc(a) => alloc::run(a),
        HugCmd::Bench(a) => bench::run(a),
        HugCmd::Distribute(a) => distribute::run(a),
    }
}
