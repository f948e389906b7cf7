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

/// The largest probe: 2^24 records per rank, or fewer when `ranks_here` ranks could not hold
/// that many (the memory estimate of `--records-per-rank`, [`super::check_memory`]); 0 when not
/// even one record fits.
pub fn largest_probe(ranks_here: u64) -> u64 {
    if super::check_memory(LARGEST, ranks_here).is_ok() {
        return LARGEST;
    }
    // The largest n that fits, by bisection: fits(lo), !fits(hi).
    let (mut lo, mut hi) = (0u64, LARGEST);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if super::check_memory(mid, ranks_here).is_ok() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The next probe after `n` (0: done), from the best fit and the smallest miss so far, never
/// past `largest`.
pub fn next_probe(n: u64, fits: bool, good: Option<u64>, bad: Option<u64>, largest: u64) -> u64 {
    match (good, bad) {
        (_, None) if fits && n < largest => (n * 2).min(largest),
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
    // Probes up to 2^24 records per rank, about 6.7 GB a rank: bounded by memory first, as
    // --records-per-rank is (they allocated until a rank aborted).
    let ranks_here = a.ranks.local.map_or(1, u64::from);
    let largest = largest_probe(ranks_here);
    if largest == 0 {
        super::check_memory(1, ranks_here)?;
    }
    if largest < LARGEST && ms.world().rank() == 0 {
        outln!(
            "  budget {budget_ms} ms: probes stop at {largest} records per rank, the most \
             {ranks_here} rank(s) here can hold (about {} bytes a record)",
            super::BYTES_PER_RECORD
        )?;
    }
    let mut n = FIRST.min(largest);
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
            next = next_probe(n, fits, good, bad, largest);
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
        const L: u64 = LARGEST;
        assert_eq!(next_probe(256, true, Some(256), None, L), 512);
        assert_eq!(next_probe(1024, false, Some(512), Some(1024), L), 768);
        assert_eq!(next_probe(768, true, Some(768), Some(1024), L), 896);
        // Within 5 % of the best fit: done.
        assert_eq!(next_probe(1000, false, Some(990), Some(1000), L), 0);
        // The first probe misses: halve down to 1.
        assert_eq!(next_probe(256, false, None, Some(256), L), 128);
        assert_eq!(next_probe(1, false, None, Some(1), L), 0);
    }

    /// Adversarial pass 31: `--budget-ms` probed up to 2^24 records per rank (about 6.7 GB a
    /// rank) with no memory estimate.
    #[test]
    fn probes_stop_at_what_memory_holds() {
        assert_eq!(next_probe(4096, true, Some(4096), None, 5000), 5000);
        assert_eq!(next_probe(5000, true, Some(5000), None, 5000), 0);
        // 256 ranks of 2^24 records (1.7 TB) pass this machine's memory: the ceiling is the
        // most records that fit, by the very estimate of --records-per-rank.
        let largest = largest_probe(256);
        assert!(largest < LARGEST, "{largest}");
        assert!(super::super::check_memory(largest + 1, 256).is_err());
        assert!(largest == 0 || super::super::check_memory(largest, 256).is_ok());
    }
}
