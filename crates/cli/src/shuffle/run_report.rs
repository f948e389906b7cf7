//! The results of `shuffle run`: one row per protocol, as a table on stdout and as JSON
//! `{"config": {...}, "results": [{"protocol", "ranks", "bytes", "completion_s", "bound_s",
//! "optimality", "throughput_gbps_per_rank", "packets", "retransmissions", "checksums_ok"}]}`.

use std::path::Path;

use anyhow::{Context, Result};
use coflowkit_shuffle::matrix::ByteMatrix;
use serde::Serialize;

use super::run::RunArgs;

/// One run as every rank saw it, folded up the gather tree: the slowest rank's time, whether
/// every rank got every byte right, and the counters summed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSample {
    pub completion_s: f64,
    pub ok: bool,
    pub packets: u64,
    pub retransmissions: u64,
}

const SAMPLE_BYTES: usize = 8 + 1 + 8 + 8;

impl RunSample {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(SAMPLE_BYTES);
        v.extend(self.completion_s.to_le_bytes());
        v.push(self.ok as u8);
        v.extend(self.packets.to_le_bytes());
        v.extend(self.retransmissions.to_le_bytes());
        v
    }

    pub fn decode(b: &[u8]) -> Option<RunSample> {
        if b.len() != SAMPLE_BYTES {
            return None;
        }
        let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        Some(RunSample {
            completion_s: f64::from_bits(u(0)),
            ok: b[8] == 1,
            packets: u(9),
            retransmissions: u(17),
        })
    }

    /// The gather's combine: a malformed part makes the whole sample not ok.
    pub fn combine(acc: Vec<u8>, child: Vec<u8>) -> Vec<u8> {
        match (RunSample::decode(&acc), RunSample::decode(&child)) {
            (Some(a), Some(c)) => RunSample {
                completion_s: a.completion_s.max(c.completion_s),
                ok: a.ok && c.ok,
                packets: a.packets + c.packets,
                retransmissions: a.retransmissions + c.retransmissions,
            }
            .encode(),
            _ => RunSample {
                completion_s: f64::NAN,
                ok: false,
                packets: 0,
                retransmissions: 0,
            }
            .encode(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub protocol: String,
    pub ranks: usize,
    /// Bytes that crossed the network (the diagonal stays local).
    pub bytes: u64,
    /// Median over the runs of the slowest rank's time.
    pub completion_s: f64,
    pub completion_runs_s: Vec<f64>,
    pub bound_s: f64,
    pub optimality: f64,
    pub throughput_gbps_per_rank: f64,
    /// Datagrams sent by all ranks, per run (mean over runs).
    pub packets: u64,
    pub retransmissions: u64,
    pub checksums_ok: bool,
    /// The packet simulator's completion for the same matrix at the same rate (`run_sim`).
    pub sim_completion_s: Option<f64>,
    /// The grant protocols' grant batch K (`--grant-batch`); `None` for the others.
    pub grant_batch: Option<u32>,
}

impl Row {
    pub fn of(
        protocol: &str,
        ranks: usize,
        m: &ByteMatrix,
        rate_bytes_per_s: f64,
        runs: &[RunSample],
        sim_completion_s: Option<f64>,
    ) -> Row {
        let mut times: Vec<f64> = runs.iter().map(|r| r.completion_s).collect();
        let completion_runs_s = times.clone();
        times.sort_by(f64::total_cmp);
        let completion_s = times[times.len() / 2];
        let bytes = m.network_bytes();
        let bound_s = m.bound_bytes() as f64 / rate_bytes_per_s;
        let n = runs.len().max(1) as u64;
        Row {
            protocol: protocol.to_string(),
            ranks,
            bytes,
            completion_s,
            completion_runs_s,
            bound_s,
            optimality: bound_s / completion_s,
            throughput_gbps_per_rank: bytes as f64 * 8.0 / completion_s / ranks as f64 / 1e9,
            packets: runs.iter().map(|r| r.packets).sum::<u64>() / n,
            retransmissions: runs.iter().map(|r| r.retransmissions).sum::<u64>() / n,
            checksums_ok: runs.iter().all(|r| r.ok),
            sim_completion_s,
            grant_batch: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Config {
    pub ranks: usize,
    pub matrix: Option<String>,
    pub skew: f64,
    pub measured_skew: f64,
    pub avg_bytes: u64,
    pub seed: u64,
    pub repeat: u32,
    /// The rate the bound uses, bits per second per rank, and where it came from.
    pub rate_bps: f64,
    pub rate_source: &'static str,
    pub netns: bool,
    pub drop: f64,
    pub duplicate: f64,
    pub reorder: f64,
    pub payload: usize,
    /// The grant batches the grant protocols ran with (`--grant-batch`).
    pub grant_batch: Vec<u32>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub config: Config,
    pub results: Vec<Row>,
}

impl Report {
    pub fn new(a: &RunArgs, ranks: usize, m: &ByteMatrix, rate: f64, rows: Vec<Row>) -> Report {
        let measured_skew = coflowkit_shuffle::matrix::skewness_of_counts(&m.bytes, m.n);
        Report {
            config: Config {
                ranks,
                matrix: a.matrix.as_ref().map(|p| p.display().to_string()),
                skew: a.skew,
                measured_skew,
                avg_bytes: a.avg_bytes,
                seed: a.seed,
                repeat: a.repeat,
                rate_bps: rate * 8.0,
                rate_source: if a.ranks.rate.is_some() {
                    "--rate"
                } else {
                    "measured: ring exchange, best of 3"
                },
                netns: a.ranks.netns,
                drop: a.ranks.drop,
                duplicate: a.ranks.duplicate,
                reorder: a.ranks.reorder,
                payload: a.ranks.payload,
                grant_batch: if a.grant_batch.is_empty() {
                    vec![coflowkit_shuffle::proto::REAL_GRANT_BATCH]
                } else {
                    a.grant_batch.clone()
                },
            },
            results: rows,
        }
    }

    pub fn print(&self) -> Result<(), crate::out::StdoutError> {
        let c = &self.config;
        outln!(
            "{} ranks, skewness {:.3}, {} bytes per message on average, rate {:.1} Mbit/s per rank ({}), grant batch {:?}",
            c.ranks,
            c.measured_skew,
            c.avg_bytes,
            c.rate_bps / 1e6,
            c.rate_source,
            c.grant_batch
        )?;
        outln!(
            "{:<14} {:>12} {:>11} {:>10} {:>10} {:>12} {:>10} {:>8} {:>4}",
            "protocol",
            "bytes",
            "completion",
            "bound",
            "optimality",
            "Gbit/s/rank",
            "packets",
            "resent",
            "ok"
        )?;
        for r in &self.results {
            let sim = r
                .sim_completion_s
                .map_or("-".to_string(), |s| format!("{:.3}ms", s * 1e3));
            outln!(
                "{:<14} {:>12} {:>9.3}ms {:>8.3}ms {:>10.3} {:>12.3} {:>10} {:>8} {:>4} {:>10}",
                r.protocol,
                r.bytes,
                r.completion_s * 1e3,
                r.bound_s * 1e3,
                r.optimality,
                r.throughput_gbps_per_rank,
                r.packets,
                r.retransmissions,
                if r.checksums_ok { "yes" } else { "NO" },
                sim
            )?;
        }
        Ok(())
    }

    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_and_fold_to_the_slowest_and_the_sums() {
        let a = RunSample {
            completion_s: 0.5,
            ok: true,
            packets: 10,
            retransmissions: 1,
        };
        let b = RunSample {
            completion_s: 0.7,
            ok: false,
            packets: 5,
            retransmissions: 0,
        };
        assert_eq!(RunSample::decode(&a.encode()), Some(a));
        let c = RunSample::decode(&RunSample::combine(a.encode(), b.encode())).unwrap();
        assert_eq!(
            (c.completion_s, c.ok, c.packets, c.retransmissions),
            (0.7, false, 15, 1)
        );
        let bad = RunSample::decode(&RunSample::combine(a.encode(), vec![1, 2])).unwrap();
        assert!(!bad.ok);
    }

    #[test]
    fn a_row_takes_the_median_run_and_divides_the_bound_by_it() {
        let m = ByteMatrix {
            n: 2,
            bytes: vec![0, 1000, 3000, 0],
        };
        let s = |t| RunSample {
            completion_s: t,
            ok: true,
            packets: 4,
            retransmissions: 0,
        };
        let r = Row::of("grpf", 2, &m, 1e6, &[s(0.010), s(0.004), s(0.005)], None);
        assert_eq!(r.completion_s, 0.005);
        assert_eq!(r.bound_s, 0.003); // the busiest port moves 3000 bytes at 1e6 B/s
        assert!((r.optimality - 0.6).abs() < 1e-12);
        assert!((r.throughput_gbps_per_rank - 4000.0 * 8.0 / 0.005 / 2.0 / 1e9).abs() < 1e-12);
        assert!(r.checksums_ok);
    }
}
