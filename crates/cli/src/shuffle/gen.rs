//! `coflowkit shuffle gen`: one seeded shuffle matrix, written in the plain text format.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use coflowkit_shuffle::matrix::{
    format_normalized_matrix, format_packet_matrix, generate_with, GenSpec,
};

use super::matrix_args::MatrixArgs;

#[derive(Args)]
pub struct GenArgs {
    /// Number of nodes (the matrix is nodes x nodes).
    #[arg(long)]
    pub nodes: usize,
    /// Target message skewness in [0, 1] (stddev of normalized sizes / sqrt(N - 1)).
    #[arg(long, default_value_t = 0.5)]
    pub skew: f64,
    /// Seed of every random choice; the same seed gives the same matrix.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Write the normalized matrix (rows and columns sum to N) instead of whole packets.
    #[arg(long)]
    pub normalized: bool,
    #[command(flatten)]
    pub matrix: MatrixArgs,
}

pub fn run(a: GenArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::file("--output", a.output.as_deref())])?;
    let spec = GenSpec {
        nodes: a.nodes,
        skew: a.skew,
        avg_packets: a.matrix.avg_packets,
        generator: a.matrix.generator(),
        seed: a.seed,
    };
    let t0 = Instant::now();
    let g = generate_with(&spec, &a.matrix.options(a.nodes)?).context("shuffle gen")?;
    let elapsed = t0.elapsed();
    let comments = vec![
        "coflowkit shuffle matrix: row i lists what node i sends to nodes 0..n-1; the diagonal is local".to_string(),
        format!(
            "nodes={} seed={} avg-packets={} skew-target={} {}",
            a.nodes,
            a.seed,
            a.matrix.avg_packets,
            a.skew,
            a.matrix.describe()
        ),
        format!(
            "skew={:.6} skew-packets={:.6}",
            g.skew_normalized, g.skew_packets
        ),
    ];
    let text = if a.normalized {
        format_normalized_matrix(&g.normalized, &comments)
    } else {
        format_packet_matrix(&g.packets, &comments)
    };
    match &a.output {
        Some(p) => {
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
            errln!(
                "{}: {} nodes, skewness {:.4} (target {}), {} packets, generated in {:.1} ms",
                p.display(),
                a.nodes,
                g.skew_packets,
                a.skew,
                g.packets.total_packets(),
                elapsed.as_secs_f64() * 1e3
            );
        }
        None => out!("{text}")?,
    }
    Ok(())
}
