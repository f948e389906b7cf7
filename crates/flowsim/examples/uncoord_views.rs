//! How far the senders' local views put a coflow from Aalo's global queue, on the bundled FB
//! trace (docs/fb-results.md, "Row 22"): per coflow, the queue its total bytes reach (where
//! coordinated Aalo ends it) against the queue each sender's own bytes reach (where that
//! sender of `aalo-uncoord` ends it), with Aalo's default queues. Prints the tally, and with
//! `csv=FILE` one line per coflow: `id,senders,bytes,global_queue,lowest_local,highest_local`.
//! `cargo run --release -p coflowkit-flowsim --example uncoord_views -- [csv=FILE]`

use std::collections::HashMap;
use std::io::Write;

use coflowkit_model::trace::read_path;
use coflowkit_sched::policy::aalo::AaloConfig;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut csv = None;
    for a in std::env::args().skip(1) {
        match a.split_once('=') {
            Some(("csv", f)) => csv = Some(std::io::BufWriter::new(std::fs::File::create(f)?)),
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/traces/FB2010-1Hr-150-0.txt"
    );
    let trace = read_path(std::path::Path::new(path))?;
    let queues = AaloConfig::default().queues;
    // Tallies: coflows and their bytes, by how many queues the highest-placed sender lags.
    let mut by_lag: Vec<(usize, f64)> = Vec::new();
    let (mut single, mut all_agree, mut total_bytes) = (0usize, 0usize, 0.0);
    for c in &trace.coflows {
        let mut per_sender: HashMap<u32, f64> = HashMap::new();
        for f in &c.flows {
            *per_sender.entry(f.src).or_default() += f.bytes;
        }
        let bytes: f64 = per_sender.values().sum();
        let global = queues.index_reached(bytes);
        let local: Vec<usize> = per_sender
            .values()
            .map(|&b| queues.index_reached(b))
            .collect();
        let (lo, hi) = (
            *local.iter().min().unwrap_or(&0),
            *local.iter().max().unwrap_or(&0),
        );
        single += usize::from(per_sender.len() == 1);
        all_agree += usize::from(lo == global);
        let lag = global - hi;
        if by_lag.len() <= lag {
            by_lag.resize(lag + 1, (0, 0.0));
        }
        by_lag[lag].0 += 1;
        by_lag[lag].1 += bytes;
        total_bytes += bytes;
        if let Some(w) = csv.as_mut() {
            writeln!(
                w,
                "{},{},{},{},{},{}",
                c.id,
                per_sender.len(),
                bytes,
                global,
                lo,
                hi
            )?;
        }
    }
    let n = trace.coflows.len();
    println!("{n} coflows, {single} with one sender; every sender's final queue = the global one: {all_agree}");
    for (lag, (count, bytes)) in by_lag.iter().enumerate() {
        println!(
            "highest sender {lag} queue(s) above the global one: {count} coflows, {:.1}% of bytes",
            100.0 * bytes / total_bytes
        );
    }
    Ok(())
}
