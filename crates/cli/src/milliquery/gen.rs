//! `milliquery gen`: the synthetic tables of spec millisort.md §8.4.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use coflowkit_milliquery::gen::{generate, GenParams};

#[derive(Args)]
pub struct GenArgs {
    /// Tablets per table (one per rank).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    ranks: u32,
    /// Rows in each tablet (Q3: in each of its two tables).
    #[arg(long)]
    rows_per_rank: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory (gets q1/, q2/ and q3/).
    #[arg(long, short)]
    out: PathBuf,
}

pub fn run(a: GenArgs) -> anyhow::Result<()> {
    let files = generate(
        &a.out,
        a.ranks as usize,
        a.rows_per_rank,
        a.seed,
        &GenParams::default(),
    )
    .with_context(|| format!("generating into {}", a.out.display()))?;
    outln!(
        "wrote {} tablets ({} ranks x {} rows per table, seed {}) under {}",
        files.len(),
        a.ranks,
        a.rows_per_rank,
        a.seed,
        a.out.display()
    )?;
    Ok(())
}
