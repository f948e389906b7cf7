//! The baselines of spec §8.3.10 on this machine, for Table 5-style efficiency:
//! - local sort: one process sorting all N records alone (composite keys by pdqsort, values
//!   moved by index), records per ms per core, with 1 thread and with rayon on every core;
//! - ideal distributed sort of N records over M ranks sharing this host's cores: each rank's
//!   local sort and merge (measured here, zero partitioning), the CPU work of all ranks spread
//!   over the cores, plus the bytes that cross the network at the given rate.
//!
//! `cargo run --release -p coflowkit-millisort --example baseline -- N M [rate_gbit]`

use std::time::Instant;

use coflowkit_millisort::bucket::ranges;
use coflowkit_millisort::merge::kway_order;
use coflowkit_millisort::records::{rearrange_by_index, Block};
use coflowkit_sortdata::{generate, RecordKind, VALUE_LEN};
use rayon::slice::ParallelSliceMut;

fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = a.first().map_or(840_000, |s| s.parse().expect("N"));
    let m: usize = a.get(1).map_or(8, |s| s.parse().expect("M"));
    let rate_gbit: f64 = a.get(2).map_or(0.9, |s| s.parse().expect("rate"));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let recs = generate(0, n, RecordKind::Binary);
    let block = Block::from_records(&recs, 0);
    let local = |par: bool| {
        let mut keys = block.keys.clone();
        if par {
            keys.par_sort_unstable();
        } else {
            keys.sort_unstable();
        }
        std::hint::black_box(rearrange_by_index(&keys, &block.values));
    };
    let t1 = median_ms(5, || local(false));
    let tp = median_ms(5, || local(true));
    println!(
        "local sort of {n} records, 1 thread: {t1:.2} ms = {:.0} records/ms/core",
        n as f64 / t1
    );
    println!(
        "local sort of {n} records, {cores} threads: {tp:.2} ms = {:.0} records/ms/core",
        n as f64 / tp / cores as f64
    );
    // One rank of M: sort n/M, then merge M runs of about n/M² each and move the values.
    let per = n / m;
    let part = Block::from_records(&recs[..per * 100], 0);
    let sort_ms = median_ms(5, || {
        let mut k = part.keys.clone();
        k.sort_unstable();
        std::hint::black_box(rearrange_by_index(&k, &part.values));
    });
    let mut sorted = part.keys.clone();
    sorted.sort_unstable();
    let spl: Vec<u128> = (1..m).map(|j| sorted[j * per / m]).collect();
    let runs: Vec<&[u128]> = ranges(&sorted, &spl)
        .into_iter()
        .map(|r| &sorted[r])
        .collect();
    let values = rearrange_by_index(&sorted, &part.values);
    let merge_ms = median_ms(5, || {
        let order = kway_order(&runs);
        let mut out = Vec::with_capacity(order.len() * VALUE_LEN);
        for &(_, i) in &order {
            out.extend_from_slice(&values[i as usize * VALUE_LEN..(i as usize + 1) * VALUE_LEN]);
        }
        std::hint::black_box(out);
    });
    let cpu_ms = m as f64 * (sort_ms + merge_ms) / cores.min(m) as f64;
    let crossing = n as f64 * (m - 1) as f64 / m as f64 * 106.0;
    let net_ms = crossing * 8.0 / (rate_gbit * 1e9) * 1e3;
    let ideal = cpu_ms + net_ms;
    println!(
        "ideal distributed sort of {n} records over {m} ranks on {cores} cores: per rank sort {sort_ms:.2} ms + merge {merge_ms:.2} ms; CPU {cpu_ms:.2} ms + network {net_ms:.2} ms ({:.1} MB at {rate_gbit} Gbit/s) = {ideal:.2} ms = {:.0} records/ms/core (CPU alone: {:.0})",
        crossing / 1e6,
        n as f64 / ideal / cores.min(m) as f64,
        n as f64 / cpu_ms / cores.min(m) as f64
    );
}
