//! `coflowkit sortdata ...`: Sort Benchmark records, as gensort and valsort make and check them.

mod bench;
mod check;
mod gen;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum SortdataCmd {
    /// Generate records byte-identical to gensort 1.5 (`gensort [-a] [-s] [-c] [-bN] N FILE`).
    Gen(gen::GenArgs),
    /// Check sorted records or partition summaries, printing valsort 1.5's lines.
    Check(check::CheckArgs),
    /// Generator and checker speed in MB/s, one core and all cores.
    Bench(bench::BenchArgs),
}

pub fn run(cmd: SortdataCmd) -> anyhow::Result<()> {
    match cmd {
        SortdataCmd::Gen(a) => gen::run(a),
        SortdataCmd::Check(a) => check::run(a),
        SortdataCmd::Bench(a) => bench::run(a),
    }
}
