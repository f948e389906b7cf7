//! Partition excess of the partitioning alone (spec §2.6 Table 7, §9.2): `ranks` ranks of
//! `records` keys each, drawn uniform integers in [0, 10^7] (duplicates happen, as in the
//! authors' script) or Gaussian (mu 0, sigma 100); each rank sorts its keys and takes its
//! pivots; the splitters come from one-level partitioning; a run's excess is the largest
//! bucket over the mean, minus one. Seeded, so runs are reproducible.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::bucket::{excess, ranges};
use crate::key::compose_u64;
use crate::one_level;
use crate::rule::Rule;
use crate::sample::regular_pivots;
use crate::MilliSortError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    Uniform,
    Gaussian,
}

#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub ranks: usize,
    pub records: usize,
    /// Pivots per rank (s·M in the paper); the weighted rule adds the head.
    pub pivots: usize,
    pub dist: Dist,
}

/// f64 to u64 preserving order.
fn ordered(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Every rank's sorted composite keys for one run.
pub fn draw(setup: &Setup, rng: &mut impl Rng) -> Vec<Vec<u128>> {
    (0..setup.ranks)
        .map(|src| {
            let mut keys: Vec<u128> = (0..setup.records)
                .map(|i| {
                    let v = match setup.dist {
                        Dist::Uniform => rng.gen_range(0..=10_000_000u64),
                        Dist::Gaussian => {
                            // Box-Muller.
                            let (u1, u2): (f64, f64) = (rng.gen(), rng.gen());
                            let z = (-2.0 * (1.0 - u1).ln()).sqrt()
                                * (2.0 * std::f64::consts::PI * u2).cos();
                            ordered(100.0 * z)
                        }
                    };
                    compose_u64(v, src as u16, i as u32)
                })
                .collect();
            keys.sort_unstable();
            keys
        })
        .collect()
}

/// Bucket sizes of one run's keys under one rule.
pub fn bucket_sizes(
    keys: &[Vec<u128>],
    pivots: usize,
    rule: Rule,
) -> Result<Vec<u64>, MilliSortError> {
    let lists: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(src, k)| regular_pivots(k, pivots, rule, src as u32))
        .collect();
    let splitters = one_level::splitters(&lists, rule)?;
    let mut sizes = vec![0u64; keys.len()];
    for k in keys {
        for (j, r) in ranges(k, &splitters).into_iter().enumerate() {
            sizes[j] += r.len() as u64;
        }
    }
    Ok(sizes)
}

/// Excess per run for each rule (same keys for both), `runs` runs from `seed`.
pub fn simulate(
    setup: &Setup,
    rules: &[Rule],
    runs: usize,
    seed: u64,
) -> Result<Vec<Vec<f64>>, MilliSortError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = vec![Vec::with_capacity(runs); rules.len()];
    for _ in 0..runs {
        let keys = draw(setup, &mut rng);
        for (i, &rule) in rules.iter().enumerate() {
            out[i].push(excess(&bucket_sizes(&keys, setup.pivots, rule)?));
        }
    }
    Ok(out)
}

/// The q-th percentile (0..=100) by nearest rank of unsorted values.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let i = ((q / 100.0 * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}
