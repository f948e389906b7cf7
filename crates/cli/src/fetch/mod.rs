//! `coflowkit fetch`: BASHuffler's bandwidth-aware fetch-source selection (spec A) — pull-based
//! shuffle simulation, the paper's utilization simulation, max-min rates of a flow pattern, and
//! the cost of one selection.

mod bench;
mod bw;
mod plot;
mod rates;
mod sim;
mod util;

use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum FetchCmd {
    /// Simulate pull-based shuffles (synthetic jobs or a coflow trace) under each source-selection
    /// policy and compare them with Hadoop's random choice.
    Sim(sim::FetchSimArgs),
    /// Max-min fair rates of a flow pattern on per-node links (the paper's bandwidth model).
    Bw(bw::BwArgs),
    /// The paper's §4.3 simulation: mean max-min utilization of each policy's decisions.
    Util(util::UtilArgs),
    /// Time per selection decision as the cluster grows (release build).
    Bench(bench::FetchBenchArgs),
}

pub fn run(cmd: FetchCmd) -> Result<()> {
    match cmd {
        FetchCmd::Sim(a) => sim::run(a),
        FetchCmd::Bw(a) => bw::run(a),
        FetchCmd::Util(a) => util::run(a),
        FetchCmd::Bench(a) => bench::run(a),
    }
}
