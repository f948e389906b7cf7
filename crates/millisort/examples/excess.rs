//! Partition excess of the partitioning alone (spec §2.6 Table 7), printed as Table 7 rows:
//! `cargo run --release -p coflowkit-millisort --example excess -- [runs] [ranks] [records]`
//! (defaults 200, 120, 7000; pivots per rank 120..600 as in the paper, scaled with ranks).

use coflowkit_millisort::excess::{percentile, simulate, Dist, Setup};
use coflowkit_millisort::Rule;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let runs = args.first().copied().unwrap_or(200);
    let ranks = args.get(1).copied().unwrap_or(120);
    let records = args.get(2).copied().unwrap_or(7000);
    println!("| dist | pivots/rank | naive P50 | naive P90 | weighted P50 | weighted P90 |  ({runs} runs, {ranks} ranks x {records} records)");
    println!("|---|---|---|---|---|---|");
    for dist in [Dist::Uniform, Dist::Gaussian] {
        for mult in 1..=5 {
            let setup = Setup {
                ranks,
                records,
                pivots: mult * ranks,
                dist,
            };
            let r = simulate(
                &setup,
                &[Rule::Naive, Rule::Weighted],
                runs,
                42 + mult as u64,
            )
            .expect("simulation");
            let pc = |v: &[f64], q| 100.0 * percentile(v, q);
            println!(
                "| {dist:?} | {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
                setup.pivots,
                pc(&r[0], 50.0),
                pc(&r[0], 90.0),
                pc(&r[1], 50.0),
                pc(&r[1], 90.0)
            );
        }
    }
}
