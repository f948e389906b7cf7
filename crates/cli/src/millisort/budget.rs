//! `--budget-ms T`: the largest records per rank whose median time over `--runs` sorts is
//! within T, at this number of ranks (spec §8.3.9; the number of ranks is the caller's sweep:
//! bench/millisort.sh). Doubling from 256 until a probe misses, then bisection to 5 %. Rank 0
//! decides each probe and broadcasts it, so every rank runs the same sequence.

use anyhow::{Context, Result};
use coflowkit_group::Counted;
use coflowkit_group::BCAST_K;
use coflowkit_millisort::burst::Report;
use coflowkit_millisort::sort::MilliSort;

use super::args::MilliSortArgs;
use super::row::{median, Row};

const FIRST: u64 = 256;
const LARGEST: u64 = 1 << 24;

/// The next probe after `n` (0: done), from the best fit and the smallest miss so far.
pub fn next_probe(n: u64, fits: bool, good: Option<u64>, bad: Option<u64>) -> u64 {
    match (good, bad) {
        (_, None) if fits && n < LARGEST => (n * 2).min(LARGEST),
        (_, None) => 0,
        // Nothing fits yet: halve (down to 1 record per rank, then give up).
        (None, Some(b)) => b / 2,
        (Some(g), Some(b)) if b <= g + (g / 20).max(1) => 0,
        (Some(g), Some(b)) => (g + b) / 2,
    }
}

pub fn search(
    ms: &mut MilliSort,
    counted: &Counted,
    a: &MilliSortArgs,
    budget_ms: f64,
    cores: usize,
) -> Result<Option<Row>> {
    let mut n = FIRST;
    let (mut good, mut bad): (Option<u64>, Option<u64>) = (None, None);
    let mut best: Option<Vec<Report>> = None;
    loop {
        let reports = super::runs(ms, counted, a, n)
            .with_context(|| format!("budget {budget_ms} ms, probe of {n} records per rank"))?;
        let mut next = 0u64;
        if let Some(reports) = reports {
            let med = median(reports.iter().map(|r| r.wall_ms));
            let fits = med <= budget_ms;
            outln!(
                "  budget {budget_ms} ms: {n} records per rank, median {med:.3} ms: {}",
                if fits { "fits" } else { "over" }
            )?;
            if fits {
                good = Some(n);
                best = Some(reports);
            } else {
                bad = Some(bad.map_or(n, |b| b.min(n)));
            }
            next = next_probe(n, fits, good, bad);
            if next == n {
                next = 0;
            }
        }
        let b = ms.world().bcast(0, next.to_le_bytes().to_vec(), BCAST_K)?;
        n = u64::from_le_bytes(
            b.try_into()
                .map_err(|_| anyhow::anyhow!("bad probe broadcast"))?,
        );
        if n == 0 {
            break;
        }
    }
    if ms.world().rank() != 0 {
        return Ok(None);
    }
    match best {
        Some(reports) => Ok(Some(Row::of(
            &reports,
            ms.config(),
            cores,
            Some(budget_ms),
        )?)),
        None => {
            outln!("budget {budget_ms} ms: not even one record per rank fits")?;
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_double_then_bisect_to_five_percent() {
        assert_eq!(next_probe(256, true, Some(256), None), 512);
        assert_eq!(next_probe(1024, false, Some(512), Some(1024)), 768);
        assert_eq!(next_probe(768, true, Some(768), Some(1024)), 896);
        // Within 5 % of the best fit: done.
        assert_eq!(next_probe(1000, false, Some(990), Some(1000)), 0);
        // The first probe misses: halve down to 1.
        assert_eq!(next_probe(256, false, None, Some(256)), 128);
        assert_eq!(next_probe(1, false, None, Some(1)), 0);
    }
}
