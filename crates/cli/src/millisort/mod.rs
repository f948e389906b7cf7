//! `coflowkit millisort`: MilliSort (spec millisort.md §2, §8.3) on ranks started here
//! (`--local M`, `--netns`) or by mpirun/srun (docs/launch.md). Each rank generates its Sort
//! Benchmark records, the ranks sort them in a synchronised, timed burst, and the output is
//! validated globally outside the timed region. `--budget-ms` searches the largest input whose
//! median time fits a budget.

mod args;
mod budget;
mod row;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use coflowkit_group::Counted;
use coflowkit_group::{Exchange, Group};
use coflowkit_millisort::burst::{self, BurstOptions, Report};
use coflowkit_millisort::sort::MilliSort;

pub use args::MilliSortArgs;
use row::Row;

use crate::ranks;

/// Bytes a rank holds per record at its peak: the 100-byte records, their keys and the
/// shuffle's and validation's copies. Peak RSS of the largest rank, `millisort --local 2 --runs
/// 1 --warmup 0` (debug build), 105.7 MB at 200,000 records per rank and 353.3 MB at 10^6:
/// 309 bytes a record, rounded up.
const BYTES_PER_RECORD: u64 = 400;

/// Refuse `--records-per-rank` that `ranks_here` ranks could not hold, naming the estimate
/// (its top, 2^32 - 1, is 1.7 TB a rank; it aborted every rank on allocation).
fn check_memory(records: u64, ranks_here: u64) -> Result<()> {
    let per_rank = records.saturating_mul(BYTES_PER_RECORD);
    coflowkit_simcmd::sim_memory::fits_ranks(per_rank, ranks_here).map_err(|short| {
        anyhow::anyhow!(
            "--records-per-rank {records} with {ranks_here} rank(s) on this host would need {} \
             (about {BYTES_PER_RECORD} bytes a record in each rank): sort fewer records per \
             rank, start fewer ranks here, or raise the limit",
            short.describe()
        )
    })
}

pub fn run(a: MilliSortArgs) -> Result<()> {
    let configs = a.configs()?; // bad options are refused before any rank starts
    if crate::ranks::checks_outputs(&a.ranks) {
        crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    }
    let timeout = Duration::from_secs_f64(a.ranks.timeout_s);
    if a.budget_ms.is_empty() {
        // Before any rank starts (--local M: M on this host), else in each rank.
        check_memory(a.records_per_rank, a.ranks.local.map_or(1, u64::from))?;
    }
    if ranks::launch_here(&a.ranks, timeout)? {
        return Ok(());
    }
    let (world, ep) = ranks::connect(&a.ranks, a.seed, timeout)?;
    if a.fail_rank == Some(world.rank) {
        // Fault injection for the tests: this rank leaves without a word (exit status 0).
        errln!("rank {}: leaving before the sort (--fail-rank)", world.rank);
        return Ok(());
    }
    let counted = Counted::new(ep.clone() as Arc<dyn Exchange>);
    let mut g = Some(Group::world(counted.clone() as Arc<dyn Exchange>)?);
    let cores = a.cores(g.as_ref().expect("world").size());
    let mut rows: Vec<Row> = Vec::new();
    for (epoch, cfg) in configs.into_iter().enumerate() {
        let mut ms = MilliSort::new(g.take().expect("world"), cfg, epoch as u32)?;
        if a.budget_ms.is_empty() {
            let reports = runs(&mut ms, &counted, &a, a.records_per_rank)?;
            if let Some(reports) = reports {
                let row = Row::of(&reports, ms.config(), cores, None)?;
                row.print()?;
                rows.push(row);
            }
        } else {
            for &t in &a.budget_ms {
                if let Some(row) = budget::search(&mut ms, &counted, &a, t, cores)? {
                    row.print()?;
                    rows.push(row);
                }
            }
        }
        g = Some(ms.into_world());
    }
    let mut g = g.expect("world");
    if g.rank() == 0 {
        if let Some(path) = &a.json {
            let doc = if rows.len() == 1 && a.budget_ms.is_empty() {
                serde_json::to_value(&rows[0])?
            } else {
                serde_json::to_value(&rows)?
            };
            std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let bad: Vec<String> = rows
            .iter()
            .filter(|r| !r.validation.ok)
            .map(|r| {
                format!(
                    "levels {} splitters {} ({} records)",
                    r.levels, r.splitters, r.records
                )
            })
            .collect();
        if !bad.is_empty() {
            bail!("validation FAILED for {}", bad.join("; "));
        }
    }
    // Leave together, and stay until the others stop asking for lost ACKs.
    g.barrier()?;
    ep.linger();
    Ok(())
}

/// `--warmup` then `--runs` sorts of `per_rank` records per rank; rank 0 gets the measured
/// runs' reports.
fn runs(
    ms: &mut MilliSort,
    counted: &Counted,
    a: &MilliSortArgs,
    per_rank: u64,
) -> Result<Option<Vec<Report>>> {
    let opts = BurstOptions {
        per_rank,
        kind: a.kind(),
        margin: Duration::from_secs_f64(a.start_margin_ms / 1e3),
        validate: a.depth()?,
    };
    let mut out = Vec::new();
    for i in 0..a.warmup + a.runs {
        let rep = burst::run(ms, counted, &opts).with_context(|| {
            format!(
                "sort {} of {} ({per_rank} records per rank)",
                i + 1,
                a.warmup + a.runs
            )
        })?;
        if let Some(rep) = rep {
            if let Some(v) = &rep.validation {
                if !v.ok {
                    errln!("validation FAILED: {v:?}");
                }
            }
            if i >= a.warmup {
                out.push(rep);
            }
        }
    }
    Ok((ms.world().rank() == 0).then_some(out))
}
