//! One rank of `milliquery run`: join the world, load this rank's tablets (every rank learns
//! every rank's loading error, so a bad tablet fails the job at once, named, rather than at a
//! timeout), run each query `--warmup + --repeat` times, and at rank 0 print and write the
//! reports.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use coflowkit_group::Counted;
use coflowkit_group::{Exchange, Group, HighEntropyOptions, ShuffleProto};
use coflowkit_milliquery::tablet::{self, Table};
use coflowkit_milliquery::{run_query, Data, Options, Query, QueryReport};

use super::run::{parse_hot_keys, RunArgs};
use crate::ranks;

pub fn run(a: &RunArgs, queries: &[Query]) -> Result<()> {
    let timeout = Duration::from_secs_f64(a.ranks.timeout_s);
    let (world, ep) = ranks::connect_with(&a.ranks, a.seed, timeout, |cfg| {
        let periods = a.dead_after_s / cfg.resend_timeout.as_secs_f64().max(1e-6);
        cfg.dead_after = cfg
            .dead_after
            .max(periods.ceil().min(u32::MAX as f64) as u32);
    })?;
    let (rank, size) = (world.rank as usize, world.size as usize);
    let counter = Counted::new(ep.clone() as Arc<dyn Exchange>);
    let mut g = Group::world(counter.clone() as Arc<dyn Exchange>)?;
    let loaded = fits_in_memory(&a.data, rank, size, queries)
        .and_then(|()| Data::load(&a.data, rank, size, queries).map_err(|e| e.to_string()));
    // Every rank learns every rank's loading error, so whichever rank exits first (and the
    // launcher then stops the rest) names the bad tablet.
    let mine = loaded.as_ref().err().cloned().unwrap_or_default();
    let all = g.allgather(mine.into_bytes())?;
    if let Some((bad, why)) = all.iter().enumerate().find(|(_, e)| !e.is_empty()) {
        bail!("rank {bad} of {size}: {}", String::from_utf8_lossy(why));
    }
    let data = loaded.map_err(anyhow::Error::msg)?;
    let mut proto = ShuffleProto::parse(&a.protocol)?;
    if let ShuffleProto::HighEntropy(o) = &mut proto {
        *o = HighEntropyOptions {
            seed: a.seed,
            ..o.clone()
        };
    }
    let mut reports: Vec<(QueryReport, Vec<f64>)> = Vec::new();
    for hot in parse_hot_keys(a)? {
        let opt = Options {
            proto: proto.clone(),
            hot_keys: hot,
            seed: a.seed,
            gather_k: a.gather_k,
            start_margin: std::time::Duration::from_secs_f64(a.start_margin_ms / 1e3),
        };
        for &q in queries {
            for _ in 0..a.warmup {
                run_query(&mut g, &counter, q, &data, &opt)?;
            }
            let mut runs = Vec::new();
            for _ in 0..a.repeat {
                if let Some(r) = run_query(&mut g, &counter, q, &data, &opt)? {
                    runs.push(r);
                }
            }
            if rank == 0 {
                runs.sort_by(|x, y| x.wall_ms.total_cmp(&y.wall_ms));
                let walls = runs.iter().map(|r| r.wall_ms).collect();
                let median = runs.swap_remove((runs.len() - 1) / 2);
                print_row(&median)?;
                reports.push((median, walls));
            }
        }
    }
    if rank == 0 {
        if let Some(path) = &a.json {
            let results: Vec<serde_json::Value> = reports
                .iter()
                .map(|(r, walls)| {
                    let mut v = serde_json::to_value(r).expect("serialisable");
                    v["wall_ms_runs"] = serde_json::json!(walls);
                    v
                })
                .collect();
            let doc = serde_json::json!({
                "config": {
                    "ranks": size, "data": a.data, "protocol": proto.name(),
                    "repeat": a.repeat, "warmup": a.warmup, "seed": a.seed,
                    "gather_k": a.gather_k,
                    "wall_ms": "the slowest rank's time from leaving the start barrier to its last step; the run with the median of --repeat",
                },
                "results": results,
            });
            std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    // Leave together, and stay until the others stop asking for lost ACKs.
    g.barrier()?;
    ep.linger();
    Ok(())
}

fn print_row(r: &QueryReport) -> Result<(), crate::out::StdoutError> {
    let rows_per_ms = r.input_rows as f64 / r.wall_ms.max(1e-9);
    outln!(
        "{} hot-keys {:<7} ranks {:>3}  input rows {:>9}  wall {:>9.3} ms  rows/ms {:>9.0}  messages {:>6}  bytes {:>10}  max/mean rows {:.2}",
        r.query,
        r.hot_keys,
        r.ranks,
        r.input_rows,
        r.wall_ms,
        rows_per_ms,
        r.messages,
        r.bytes,
        r.max_over_mean_rows
    )?;
    Ok(())
}

/// Refuse, before reading them, tablets this rank could not hold: their sizes x
/// `HOLD_PER_TABLET_BYTE` past this process's address-space limit or the machine's memory (a
/// 150 MB tablet of 5-byte rows took a rank to 1.7 GB and aborted it on allocation).
fn fits_in_memory(data: &Path, rank: usize, size: usize, queries: &[Query]) -> Result<(), String> {
    let mut tables = Vec::new();
    for q in queries {
        tables.extend_from_slice(match q {
            Query::Q1 => &[Table::Views][..],
            Query::Q2 => &[Table::Edits][..],
            Query::Q3 => &[Table::Commits, Table::Languages][..],
        });
    }
    tables.sort_by_key(|t| *t as u8);
    tables.dedup();
    let need = tablet::hold_bytes(data, &tables, rank, size).map_err(|e| e.to_string())?;
    coflowkit_simcmd::sim_memory::fits(need, 0).map_err(|short| {
        format!(
            "{}: rank {rank}'s tablets would need {} to load (about {} bytes held per byte of \
             CSV): split the data over more ranks, or raise the limit",
            data.display(),
            short.describe(),
            tablet::HOLD_PER_TABLET_BYTE
        )
    })
}
