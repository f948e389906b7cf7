//! One- against two-level partitioning as ranks grow (spec §6.6 Fig 6 analogue), without a
//! network: for M ranks of `records` uniform keys, the pivots are taken and both schemes run
//! as pure functions; printed per scheme are the work of its busiest process (µs of CPU here,
//! the pivots it merges) and the messages the scheme sends (formulas of the group library's
//! collectives for the same steps the distributed sort takes).
//! `cargo run --release -p coflowkit-millisort --example partition_scaling -- [records] [r]`

use std::time::Instant;

use coflowkit_millisort::excess::{draw, Dist, Setup};
use coflowkit_millisort::merge::merge_all;
use coflowkit_millisort::sample::regular_pivots;
use coflowkit_millisort::two_level::{self, Roles};
use coflowkit_millisort::{one_level, Pivot, Rule, Totals};
use rand::SeedableRng;

fn log2_ceil(m: usize) -> usize {
    (usize::BITS - (m.max(1) - 1).leading_zeros()) as usize
}

/// Median of `reps` timings of `f`, µs.
fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut ts = Vec::new();
    let mut out = None;
    for _ in 0..reps {
        let t = Instant::now();
        out = Some(f());
        ts.push(t.elapsed().as_secs_f64() * 1e6);
    }
    ts.sort_by(f64::total_cmp);
    (ts[reps / 2], out.expect("reps >= 1"))
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let records = args.first().copied().unwrap_or(1000);
    let r = args.get(1).copied().unwrap_or(10);
    let rule = Rule::Weighted;
    println!("| M | one-level busiest µs | pivots merged | messages | two-level busiest µs | pivots merged | messages | same splitters |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for m in [10, 20, 40, 80, 120, 200, 280, 400, 600, 1000] {
        let keys = draw(
            &Setup {
                ranks: m,
                records,
                pivots: m,
                dist: Dist::Uniform,
            },
            &mut rng,
        );
        let lists: Vec<Vec<Pivot>> = keys
            .iter()
            .enumerate()
            .map(|(s, k)| regular_pivots(k, m, rule, s as u32))
            .collect();
        // One level: rank 0 merges everything and selects (a gather then a broadcast).
        let (t1, one) = time(5, || one_level::splitters(&lists, rule).unwrap());
        let msgs1 = 2 * (m - 1);
        // Two levels: the busiest of a pivot sorter's three stages on the critical path.
        let roles = Roles::new(m, r).unwrap();
        let k = roles.sorters();
        let (t_gather, merged) = time(5, || merge_all(&lists[roles.group(0)]));
        let all_merged: Vec<Vec<Pivot>> =
            (0..k).map(|s| merge_all(&lists[roles.group(s)])).collect();
        let level2: Vec<Vec<Pivot>> = all_merged
            .iter()
            .map(|x| two_level::level2_pivots(x, k))
            .collect();
        let (t_coord, bounds) = time(5, || two_level::bucket_bounds(&merge_all(&level2), k));
        let sent: Vec<Vec<_>> = all_merged
            .iter()
            .map(|x| two_level::split(x, &bounds))
            .collect();
        let total = all_merged
            .iter()
            .fold(Totals::default(), |a, x| a.plus(Totals::of(x)));
        let mut t_sel: f64 = 0.0;
        let mut most = 0;
        for dst in 0..k {
            let pieces: Vec<_> = sent.iter().map(|row| row[dst].clone()).collect();
            let (t, n) = time(3, || {
                let (below, mine) = two_level::receive(&pieces);
                coflowkit_millisort::rule::select_in_range(&mine, below, total, m, rule);
                mine.len()
            });
            t_sel = t_sel.max(t);
            most = most.max(n);
        }
        let t2 = t_gather + t_coord + t_sel;
        let two = two_level::splitters(&lists, r, rule).unwrap();
        // Messages: groups' gathers (m - k), sorters' gather and broadcast (2(k - 1)), pivot
        // shuffle (k(k - 1)), splitter all-gather (<= k ceil(log2 k)), groups' broadcasts (m - k).
        let msgs2 = 2 * (m - k) + 2 * (k - 1) + k * (k - 1) + k * log2_ceil(k);
        println!(
            "| {m} | {t1:.0} | {} | {msgs1} | {t2:.0} | {} | {msgs2} | {} |",
            m * (m + 1),
            merged.len().max(k * k).max(most),
            one == two
        );
    }
}
