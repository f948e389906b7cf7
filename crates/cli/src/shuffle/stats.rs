//! `coflowkit shuffle stats`: what a matrix file holds, its skewness and its ideal bound.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use coflowkit_shuffle::matrix::{read_matrix_file, MatrixBody, ShuffleMatrix};
use coflowkit_simcmd::flag_range::gbps;
use coflowkit_simcmd::shuffle::sim_opts::MAX_PACKET_BYTES;

#[derive(Args)]
pub struct StatsArgs {
    /// A matrix file (`coflowkit shuffle gen` output, or a normalized matrix).
    pub file: PathBuf,
    /// Host link rate in Gbps (10^9 bit/s; 0.001 to 10000).
    #[arg(long, default_value_t = 25.0, value_parser = gbps())]
    pub rate_gbps: f64,
    /// Bytes in a full packet (1 to 1048576).
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u64).range(1..=MAX_PACKET_BYTES as u64))]
    pub packet_bytes: u64,
}

pub fn run(a: StatsArgs) -> Result<()> {
    let f = read_matrix_file(&a.file)?;
    outln!("file            {}", a.file.display())?;
    for c in &f.comments {
        outln!("# {c}")?;
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
            // In 128 bits: 2^28 cells of 2^30 packets of 2^20 bytes pass 2^64.
            let b = u128::from(a.packet_bytes);
            outln!("nodes           {n}")?;
            outln!(
                "messages        {messages} non-empty of {} (off the diagonal)",
                n * (n - 1)
            )?;
            outln!("packets         {total} ({} bytes)", u128::from(total) * b)?;
            outln!(
                "local           {local} packets ({} bytes, {:.2}%)",
                u128::from(local) * b,
                pct(local, total)
            )?;
            outln!(
                "network         {network} packets ({} bytes)",
                u128::from(network) * b
            )?;
            outln!("skewness        {:.6}", p.skewness())?;
            outln!(
                "ideal bound     {:.6} ms ({bound_pkts} packet times at {} Gbps, {} B packets)",
                bound_s * 1e3,
                a.rate_gbps,
                b
            )?;
            if bound_s > 0.0 {
                outln!(
                    "bound tput      {:.3} Gbps per node (network bytes / (nodes x bound))",
                    network as f64 * b as f64 * 8.0 / (n as f64 * bound_s) / 1e9
                )?;
            }
        }
        MatrixBody::Normalized(m) => {
            outln!("nodes           {}", m.n)?;
            outln!("unit            normalized (no bytes or bound; `shuffle gen` makes packets)")?;
            outln!("skewness        {:.6}", m.skewness())?;
            let (lo, hi) = sum_range(m);
            outln!("row/col sums    {lo:.6} .. {hi:.6}")?;
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
