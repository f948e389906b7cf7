//! `collective bench`: each operation and size `--iters` times after `--warmup`; an
//! iteration's latency is the slowest rank's time from leaving a barrier to finishing the
//! operation (one clock per host; across hosts only durations are compared).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use coflowkit_group::{Group, ShuffleProto};
use coflowkit_model::stats::percentile;
use serde::Serialize;

use std::sync::Arc;
use std::time::Duration;

use coflowkit_group::Exchange;
use coflowkit_model::echo::echo;
use coflowkit_model::units::parse_size_bytes;

use crate::ranks::{self, RanksArgs};

/// Most `--iters` and `--warmup`.
const ITERS_MAX: u64 = 1_000_000;

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    ranks: RanksArgs,
    /// Operations, comma-separated: bcast, gather, allgather, barrier, alltoallv.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bcast,gather,allgather,alltoallv"
    )]
    op: Vec<String>,
    /// Message sizes, comma-separated (k = 1024): bcast's message, each rank's gather and
    /// all-gather contribution, each pair's all-to-all-v message.
    #[arg(long, value_delimiter = ',', default_value = "100,1k,64k")]
    bytes: Vec<String>,
    /// Measured iterations per operation and size (1 to 10^6: each is kept, 2^64 - 1 overflowed
    /// the vector of times).
    #[arg(long, default_value_t = 50, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=ITERS_MAX))]
    iters: usize,
    /// Unmeasured iterations first (0 to 10^6).
    #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=ITERS_MAX))]
    warmup: usize,
    /// Broadcast tree radix (MilliSort: 10).
    #[arg(long, default_value_t = coflowkit_group::BCAST_K)]
    bcast_k: u32,
    /// Gather tree radix (MilliSort: 6).
    #[arg(long, default_value_t = coflowkit_group::GATHER_K)]
    gather_k: u32,
    /// All-to-all-v protocol: grpf, grpt, srpt, hadoop-C, madd, lockstep, high-entropy.
    #[arg(long, default_value = "grpf")]
    protocol: String,
    /// Write `{"config", "results": [{"op", "ranks", "bytes", "p50_us", "p99_us", "messages"}]}`.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Op {
    Bcast,
    Gather,
    Allgather,
    Barrier,
    Alltoallv,
}

fn parse_op(s: &str) -> anyhow::Result<Op> {
    Ok(match s.trim().to_ascii_lowercase().as_str() {
        "bcast" | "broadcast" => Op::Bcast,
        "gather" => Op::Gather,
        "allgather" | "all-gather" => Op::Allgather,
        "barrier" => Op::Barrier,
        "alltoallv" | "all-to-all-v" => Op::Alltoallv,
        _ => bail!(
            "unknown operation `{s}` (expected bcast, gather, allgather, barrier or alltoallv)"
        ),
    })
}

#[derive(Debug, Serialize)]
struct Row {
    op: Op,
    ranks: usize,
    bytes: usize,
    p50_us: f64,
    p99_us: f64,
    /// Messages one operation sends, over all ranks.
    messages: f64,
    iters: usize,
}

pub fn run(a: BenchArgs) -> anyhow::Result<()> {
    let ops: Vec<Op> = a.op.iter().map(|s| parse_op(s)).collect::<Result<_, _>>()?;
    let sizes: Vec<usize> = (a.bytes.iter())
        .map(|s| {
            let b = parse_size_bytes(s).with_context(|| format!("--bytes `{}`", echo(s)))?;
            if b > MAX_MESSAGE_BYTES {
                bail!(
                    "--bytes {b}: at most {MAX_MESSAGE_BYTES} (4 GiB - 1), the largest message \
                     the transport carries"
                );
            }
            Ok(b as usize)
        })
        .collect::<anyhow::Result<_>>()?;
    let proto = ShuffleProto::parse(&a.protocol)?;
    if a.iters == 0 {
        bail!("--iters must be at least 1");
    }
    if ranks::checks_outputs(&a.ranks) {
        crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    }
    let timeout = Duration::from_secs_f64(a.ranks.timeout_s);
    if let Some(m) = a.ranks.local {
        check_memory(&ops, &sizes, a.iters, m as usize, m as u64)?;
    }
    if ranks::launch_here(&a.ranks, timeout)? {
        return Ok(()); // the launcher: the ranks did the work
    }
    let (_world, ep) = ranks::connect(&a.ranks, 1, timeout)?;
    let mut g = Group::world(ep.clone() as Arc<dyn Exchange>)?;
    // A rank of mpirun's (or any): its own share, before the first operation.
    check_memory(&ops, &sizes, a.iters, g.size(), 1)?;
    let mut rows = Vec::new();
    for &op in &ops {
        let sizes: &[usize] = if op == Op::Barrier { &[0] } else { &sizes };
        for &bytes in sizes {
            let (lat, msgs) = measure(&mut g, op, bytes, &a, &proto)
                .with_context(|| format!("{op:?} of {bytes} bytes"))?;
            if let (Some(lat), Some(msgs)) = (lat, msgs) {
                let row = Row {
                    op,
                    ranks: g.size(),
                    bytes,
                    p50_us: percentile(&lat, 50.0),
                    p99_us: percentile(&lat, 99.0),
                    messages: msgs,
                    iters: a.iters,
                };
                outln!(
                    "{:<10} ranks {:>4}  bytes {:>8}  p50 {:>10.1} us  p99 {:>10.1} us  messages {:>8.0}",
                    format!("{:?}", row.op).to_lowercase(),
                    row.ranks,
                    row.bytes,
                    row.p50_us,
                    row.p99_us,
                    row.messages
                )?;
                rows.push(row);
            }
        }
    }
    if g.rank() == 0 {
        if let Some(path) = &a.json {
            let doc = serde_json::json!({
                "config": {
                    "ranks": g.size(), "iters": a.iters, "warmup": a.warmup,
                    "bcast_k": a.bcast_k, "gather_k": a.gather_k,
                    "alltoallv_protocol": proto.name(),
                    "latency": "per iteration, the slowest rank's time from leaving a barrier to finishing",
                },
                "results": rows,
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

/// The transport's largest message (`EndpointConfig::max_message_bytes`'s default).
const MAX_MESSAGE_BYTES: u64 = u32::MAX as u64;

/// Copies of a rank's contribution one operation holds at its peak, per rank of the world
/// (the gathers' concatenation and the transport's buffers of it, the all-to-all-v's messages
/// out and in), beside 3 of its own. Measured peak RSS of the largest rank, `collective bench
/// --local M --bytes B --iters 1 --warmup 0 --op OP` (debug build): M = 2, B = 64 MiB: bcast
/// 3.2 B, gather 4.2 B, allgather 5.2 B, alltoallv 4.2 B; M = 4, B = 32 MiB: gather 6.4 B,
/// alltoallv 5.4 B, allgather 3.5 B; the estimate (2 M + 3) B is 7 B and 11 B.
const COPIES_PER_RANK: u64 = 2;

/// Bytes one rank holds at its peak for `ops` of these `sizes` among `m` ranks: its own
/// message and clones, `COPIES_PER_RANK` x m of the largest, and the rank reports gathered at
/// the root (8 bytes an iteration per rank). Saturates.
fn rank_bytes(ops: &[Op], sizes: &[usize], iters: usize, m: usize) -> u64 {
    let largest = if ops.iter().all(|&o| o == Op::Barrier) {
        0
    } else {
        sizes.iter().copied().max().unwrap_or(0) as u64
    };
    let m = m as u64;
    let spread = ops
        .iter()
        .any(|o| matches!(o, Op::Gather | Op::Allgather | Op::Alltoallv));
    let per = if spread {
        largest.saturating_mul(COPIES_PER_RANK.saturating_mul(m).saturating_add(3))
    } else {
        largest.saturating_mul(4) // bcast: 3.2 B measured
    };
    let reports = (iters as u64 + 1)
        .saturating_mul(8)
        .saturating_mul(m)
        .saturating_mul(2);
    per.saturating_add(reports)
}

/// Refuse, before any rank starts (with --local) or before the first operation, a run whose
/// ranks would not fit: a gather's concatenation past the transport's largest message, or
/// `ranks_here` ranks past this process's or this machine's memory (an allocation failure in
/// every rank before: `--bytes 4294967296`, and `--bytes 2^64 - 1` a capacity-overflow panic).
fn check_memory(
    ops: &[Op],
    sizes: &[usize],
    iters: usize,
    m: usize,
    ranks_here: u64,
) -> anyhow::Result<()> {
    let largest = sizes.iter().copied().max().unwrap_or(0) as u64;
    if ops.iter().any(|o| matches!(o, Op::Gather | Op::Allgather))
        && largest.saturating_mul(m as u64) > MAX_MESSAGE_BYTES
    {
        bail!(
            "--bytes {largest} x {m} ranks: a gather's concatenation would pass \
             {MAX_MESSAGE_BYTES} bytes, the largest message the transport carries: lower --bytes"
        );
    }
    let per_rank = rank_bytes(ops, sizes, iters, m);
    coflowkit_simcmd::sim_memory::fits_ranks(per_rank, ranks_here).map_err(|short| {
        anyhow::anyhow!(
            "--bytes {largest} among {m} ranks ({ranks_here} on this host) would need {} \
             (about {per_rank} bytes a rank: {COPIES_PER_RANK} copies per rank of the largest \
             message, and --iters {iters} reports): lower --bytes, --iters or --local, or raise \
             the limit",
            short.describe()
        )
    })
}

/// At rank 0: the per-iteration latencies (µs, sorted) and messages per operation.
fn measure(
    g: &mut Group,
    op: Op,
    bytes: usize,
    a: &BenchArgs,
    proto: &ShuffleProto,
) -> anyhow::Result<(Option<Vec<f64>>, Option<f64>)> {
    let (me, m) = (g.rank(), g.size());
    let mine: Vec<u8> = (0..bytes).map(|i| (i + me) as u8).collect();
    let mut times = Vec::with_capacity(a.iters);
    let mut sent = 0u64;
    for it in 0..a.warmup + a.iters {
        g.barrier()?;
        let before = g.messages_sent();
        let t0 = Instant::now();
        match op {
            Op::Bcast => {
                let root = it % m;
                let send = if me == root { mine.clone() } else { Vec::new() };
                let got = g.bcast(root, send, a.bcast_k)?;
                if got.len() != bytes {
                    bail!("bcast delivered {} bytes, not {bytes}", got.len());
                }
            }
            Op::Gather => {
                let got = g.gather(0, mine.clone(), a.gather_k, |mut x, y| {
                    x.extend(y);
                    x
                })?;
                if let Some(got) = got {
                    if got.len() != bytes * m {
                        bail!("gather delivered {} bytes, not {}", got.len(), bytes * m);
                    }
                }
            }
            Op::Allgather => {
                let got = g.allgather(mine.clone())?;
                if got.iter().any(|x| x.len() != bytes) {
                    bail!("all-gather delivered a value of the wrong size");
                }
            }
            Op::Barrier => g.barrier()?,
            Op::Alltoallv => {
                let got = g.alltoallv(vec![mine.clone(); m], proto)?;
                if got.iter().any(|x| x.len() != bytes) {
                    bail!("all-to-all-v delivered a message of the wrong size");
                }
            }
        }
        let dt = t0.elapsed().as_secs_f64() * 1e6;
        if it >= a.warmup {
            times.push(dt);
            sent += g.messages_sent() - before;
        }
    }
    // Report to rank 0: our times and message count, concatenated in rank order.
    let mut report: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    report.extend_from_slice(&(sent as f64).to_le_bytes());
    let all = g.gather(0, report, a.gather_k, |mut x, y| {
        x.extend(y);
        x
    })?;
    let Some(all) = all else {
        return Ok((None, None));
    };
    let per = a.iters + 1;
    let vals: Vec<f64> = all
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if vals.len() != per * m {
        bail!(
            "rank reports of {} values, expected {}",
            vals.len(),
            per * m
        );
    }
    let mut lat: Vec<f64> = (0..a.iters)
        .map(|i| (0..m).map(|r| vals[r * per + i]).fold(0.0, f64::max))
        .collect();
    lat.sort_by(f64::total_cmp);
    let msgs: f64 = (0..m).map(|r| vals[r * per + a.iters]).sum::<f64>() / a.iters as f64;
    Ok((Some(lat), Some(msgs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_parse_and_unknown_ones_list_the_choices() {
        assert_eq!(parse_op("BCAST").unwrap(), Op::Bcast);
        assert_eq!(parse_op("all-gather").unwrap(), Op::Allgather);
        let e = parse_op("reduce").unwrap_err().to_string();
        assert!(e.contains("reduce") && e.contains("alltoallv"), "{e}");
    }
}
