//! What one rank of `shuffle run` does: join the world, agree on the matrix, then for each
//! protocol and run: a barrier, the all-to-all-v, a byte-exact check of everything received,
//! and a gather of the times and counters to rank 0, which prints and writes the results.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use coflowkit_group::{Exchange, Group, HighEntropyOptions, ShuffleProto};
use coflowkit_shuffle::matrix::{
    check_network_data, generate_with, parse_matrix, ByteMatrix, GenSpec, MatrixFile, ShuffleMatrix,
};
use coflowkit_shuffle::proto::{Protocol, REAL_GRANT_BATCH};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::run::RunArgs;
use super::run_report::{Report, Row, RunSample};
use super::run_sim;
use crate::ranks;

/// `hadoop` alone means Hadoop's default of 5 fetchers; `high-entropy` takes the run's seed.
pub fn parse_protocol(name: &str, seed: u64) -> Result<ShuffleProto> {
    parse_protocol_for(name, seed, None, None, None)
}

/// A protocol tuned to the link: the grant protocols' RTTpackets and grant batch, and MADD's
/// Gamma (the busiest rank's packets: only the whole matrix knows it).
fn parse_protocol_for(
    name: &str,
    seed: u64,
    rtt_packets: Option<u32>,
    madd_gamma: Option<u64>,
    grant_batch: Option<u32>,
) -> Result<ShuffleProto> {
    let name = if name.eq_ignore_ascii_case("hadoop") {
        "hadoop-5"
    } else {
        name
    };
    let mut p = ShuffleProto::parse(name)?;
    match &mut p {
        ShuffleProto::HighEntropy(o) => *o = HighEntropyOptions { seed, ..o.clone() },
        ShuffleProto::Wire(w) => {
            if let Some(r) = rtt_packets {
                w.grant.rtt_packets = r;
            }
            if let Some(k) = grant_batch {
                w.grant.grant_batch = k;
            }
            w.madd_gamma = madd_gamma.map(|g| (g.max(1), 1));
            w.seed = seed;
        }
        ShuffleProto::Lockstep => {}
    }
    Ok(p)
}

/// The bytes rank `src` sends rank `dst` in run `run`: seeded, so the receiver can check them.
pub fn payload(seed: u64, run: u32, src: usize, dst: usize, len: u64) -> Vec<u8> {
    let key = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(((run as u64) << 48) ^ ((src as u64) << 24) ^ dst as u64);
    let mut v = vec![0u8; len as usize];
    ChaCha8Rng::seed_from_u64(key).fill_bytes(&mut v);
    v
}

pub fn run(a: &RunArgs) -> Result<()> {
    let timeout = Duration::from_secs_f64(a.ranks.timeout_s);
    let (world, ep) = ranks::connect(&a.ranks, a.seed, timeout)?;
    let (rank, size) = (world.rank as usize, world.size as usize);
    let mut g = Group::world(ep.clone() as Arc<dyn Exchange>)?;
    let norm = agree_on_matrix(a, &mut g)?;
    if norm.n != size {
        bail!("the matrix has {} nodes but there are {size} ranks", norm.n);
    }
    let m = ByteMatrix::scaled(&norm, a.avg_bytes)?;
    let rate_bytes = match a.ranks.rate_bps()? {
        Some(bps) => bps / 8.0,
        None => calibrate(
            &mut g,
            a.avg_bytes.max(1 << 16) * size.max(2) as u64,
            a.seed,
        )?,
    };
    let rtt = a.ranks.rtt_packets()?;
    // MADD ends every message together after the busiest rank's packets (Gamma).
    let gamma = m
        .to_packets(a.ranks.payload as u64, true)
        .ideal_bound_packets();
    // Every (protocol, grant batch) to run; the batch only for protocols that grant.
    let batches = if a.grant_batch.is_empty() {
        vec![REAL_GRANT_BATCH]
    } else {
        a.grant_batch.clone()
    };
    let mut variants = Vec::new();
    for name in &a.protocol {
        let grants = matches!(
            parse_protocol(name, a.seed)?,
            ShuffleProto::Wire(ref w) if matches!(w.protocol, Protocol::Grant(_) | Protocol::Hadoop { .. })
        );
        let ks: Vec<Option<u32>> = if grants {
            batches.iter().map(|&k| Some(k)).collect()
        } else {
            vec![None]
        };
        for k in ks {
            let proto = parse_protocol_for(name, a.seed, Some(rtt), Some(gamma), k)?;
            let label = match k {
                Some(k) if batches.len() > 1 => format!("{}/b{k}", proto.name()),
                _ => proto.name(),
            };
            variants.push((label, proto, k));
        }
    }
    // Runs go round the variants (run 0 of each, then run 1, ...), so a change in the
    // machine's load hits every variant alike.
    let mut samples: Vec<Vec<RunSample>> = vec![Vec::new(); variants.len()];
    for run in 0..a.repeat {
        for (v, (label, proto, _)) in variants.iter().enumerate() {
            let sends: Vec<Vec<u8>> = (0..size)
                .map(|j| payload(a.seed, run, rank, j, m.get(rank, j)))
                .collect();
            let before = ep.stats();
            g.barrier()?;
            let t0 = Instant::now();
            let got = g
                .alltoallv(sends, proto)
                .with_context(|| format!("{label}, run {run}: rank {rank}"))?;
            let elapsed = t0.elapsed().as_secs_f64();
            let ok = (0..size)
                .all(|i| i == rank || got[i] == payload(a.seed, run, i, rank, m.get(i, rank)));
            let after = ep.stats();
            let mine = RunSample {
                completion_s: elapsed,
                ok,
                packets: after.packets_sent - before.packets_sent,
                retransmissions: after.retransmissions - before.retransmissions,
            };
            if let Some(all) = g.gather(0, mine.encode(), 6, RunSample::combine)? {
                samples[v].push(RunSample::decode(&all).ok_or_else(|| anyhow!("bad sample"))?);
            }
        }
    }
    let mut rows = Vec::new();
    if rank == 0 {
        for ((label, proto, k), samples) in variants.iter().zip(&samples) {
            let sim = a.ranks.rate_bps()?.and_then(|bps| {
                let batch = k.unwrap_or(1);
                run_sim::predict(&m, &proto.name(), a.ranks.payload, bps, rtt, batch, a.seed)
            });
            let mut row = Row::of(label, size, &m, rate_bytes, samples, sim);
            row.grant_batch = *k;
            rows.push(row);
        }
    }
    if rank == 0 {
        let report = Report::new(a, size, &m, rate_bytes, rows);
        report.print()?;
        if let Some(p) = &a.json {
            report.write_json(p)?;
        }
        if report.results.iter().any(|r| !r.checksums_ok) {
            bail!("some bytes arrived wrong (checksums_ok false above)");
        }
    }
    // Everyone leaves together, and stays until the others stop asking for lost ACKs.
    g.barrier()?;
    ep.linger();
    Ok(())
}

/// Rank 0 reads `--matrix` and broadcasts its text; otherwise every rank generates the same
/// matrix from the seed.
fn agree_on_matrix(a: &RunArgs, g: &mut Group) -> Result<ShuffleMatrix> {
    match &a.matrix {
        Some(path) => {
            let text = if g.rank() == 0 {
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?
            } else {
                Vec::new()
            };
            let text = g.bcast(0, text, 8)?;
            let text = String::from_utf8(text).context("matrix file is not UTF-8")?;
            let file = path.display().to_string();
            checked_matrix(&file, &parse_matrix(&text, &file)?, a.avg_bytes)
        }
        None => {
            let spec = GenSpec {
                nodes: g.size(),
                skew: a.skew,
                avg_packets: a.gen.avg_packets,
                generator: a.gen.generator(),
                seed: a.seed,
            };
            Ok(generate_with(&spec, &a.gen.options(g.size())?)?.normalized)
        }
    }
}

/// The normalized matrix of the file `f`, refused as `shuffle sim` refuses it when nothing is off
/// its diagonal, or when scaled to `avg_bytes` a message would be too large or every message off
/// the diagonal would be 0 bytes (errors name the file).
pub fn checked_matrix(file: &str, f: &MatrixFile, avg_bytes: u64) -> Result<ShuffleMatrix> {
    check_network_data(file, &f.body)?;
    let norm = f.normalized();
    let bytes = ByteMatrix::scaled(&norm, avg_bytes).with_context(|| file.to_string())?;
    if bytes.network_bytes() == 0 {
        bail!(
            "{file}: every message off the diagonal rounds to 0 bytes at --avg-bytes \
             {avg_bytes}: a shuffle with no data to send over the network (raise --avg-bytes)"
        );
    }
    Ok(norm)
}

/// Without --rate, the link rate is measured: every rank sends `bytes` to the next rank (a
/// ring: each sends and receives one message, nobody contends), three times; a rank's rate is
/// bytes over the slowest rank's time, and the best of the three is taken.
fn calibrate(g: &mut Group, bytes: u64, seed: u64) -> Result<f64> {
    let (rank, size) = (g.rank(), g.size());
    if size < 2 {
        return Ok(f64::INFINITY);
    }
    let proto = parse_protocol("grpf", seed)?;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let sends: Vec<Vec<u8>> = (0..size)
            .map(|j| {
                if j == (rank + 1) % size {
                    vec![0u8; bytes as usize]
                } else {
                    Vec::new()
                }
            })
            .collect();
        g.barrier()?;
        let t0 = Instant::now();
        g.alltoallv(sends, &proto)?;
        let t = t0.elapsed().as_secs_f64();
        let worst = g.allgather(t.to_le_bytes().to_vec())?;
        let worst = worst
            .iter()
            .filter_map(|b| b.as_slice().try_into().ok().map(f64::from_le_bytes))
            .fold(0.0, f64::max);
        best = best.min(worst);
    }
    Ok(bytes as f64 / best)
}
