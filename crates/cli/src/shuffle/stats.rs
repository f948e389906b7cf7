//! `coflowkit shuffle stats`: what a matrix file holds, its skewness and its ideal bound.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coflowkit_shuffle::matrix::{read_matrix_file, MatrixBody, ShuffleMatrix};

#[derive(Args)]
pub struct StatsArgs {
    /// A matrix file (`coflowkit shuffle gen` output, or a normalized matrix).
    pub file: PathBuf,
    /// Host link rate in Gbps (10^9 bit/s).
    #[arg(long, default_value_t = 25.0)]
    pub rate_gbps: f64,
    /// Bytes in a full packet.
    #[arg(long, default_value_t = 1500)]
    pub packet_bytes: u64,
}

pub fn run(a: StatsArgs) -> Result<()> {
    if a.rate_gbps.is_nan() || a.rate_gbps <= 0.0 {
        anyhow::bail!("--rate-gbps {}: must be positive", a.rate_gbps);
    }
    let f = read_matrix_file(&a.file)?;
    println!("file            {}", a.file.display());
    for c in &f.comments {
        println!("# {c}");
    }
    match &f.body {
        MatrixBody::Packets(p) => {
            let n = p.n;
            let total = p.total_packets();
            let local = p.local_packets();
            let network = total - local;
            let messages = (0..n)
                .flat_map(|i| (0..n).map(move |j| (i, j)))
                .filter(|&(i, j)| i != j && p.get(i, j) > 0)
                .count();
            let bound_pkts = p.ideal_bound_packets();
            let pkt_s = a.packet_bytes as f64 * 8.0 / (a.rate_gbps * 1e9);
            let bound_s = bound_pkts as f64 * pkt_s;
            let b = a.packet_bytes;
            println!("nodes           {n}");
            println!(
                "messages        {messages} non-empty of {} (off the diagonal)",
                n * (n - 1)
            );
            println!("packets         {total} ({} bytes)", total * b);
            println!(
                "local           {local} packets ({} bytes, {:.2}%)",
                local * b,
                pct(local, total)
            );
            println!("network         {network} packets ({} bytes)", network * b);
            println!("skewness        {:.6}", p.skewness());
            println!(
                "ideal bound     {:.6} ms ({bound_pkts} packet times at {} Gbps, {} B packets)",
                bound_s * 1e3,
                a.rate_gbps,
                b
            );
            if bound_s > 0.0 {
                println!(
                    "bound tput      {:.3} Gbps per node (network bytes / (nodes x bound))",
                    network as f64 * b as f64 * 8.0 / (n as f64 * bound_s) / 1e9
                );
            }
        }
        MatrixBody::Normalized(m) => {
            println!("nodes           {}", m.n);
            println!("unit            normalized (no bytes or bound; `shuffle gen` makes packets)");
            println!("skewness        {:.6}", m.skewness());
            let (lo, hi) = sum_range(m);
            println!("row/col sums    {lo:.6} .. {hi:.6}");
        }
    }
    Ok(())
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn sum_range(m: &ShuffleMatrix) -> (f64, f64) {
    (0..m.n)
        .flat_map(|i| [m.row_sum(i), m.col_sum(i)])
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
            (lo.min(s), hi.max(s))
        })
}
