//! A trace as the reference sees it (`CoflowBenchmarkTraceProducer`, `Job.arrangeTasks`,
//! `ReduceTask`):
//!
//! - one mapper and one reducer per port, ordered by port (its rack merge);
//! - each reducer's bytes rounded up to a whole MB, then up to a multiple of `mappers` MB, and
//!   split equally: every flow is a whole number of MB, at least 1 MB;
//! - self-flows (mapper and reducer on one port) are kept and use both directions of the port;
//! - coflows without mappers are ignored (they get no CCT), all others are admitted;
//! - static keys: SCF's length (largest reducer / mappers), NCF's width (min of mappers and
//!   reducers), SEBF's static bottleneck bytes `alpha`, LCF's bytes left (per reducer, rounded to
//!   1 MB only), and a deadline `alpha / capacity × (1 + U × factor)` drawn from Java's
//!   `Random(17)` in arrival order, used to order work conservation.

use std::collections::BTreeMap;

use coflowkit_model::Trace;

use super::java_random::JavaRandom;
use super::units::{MB, PORT_BYTES_PER_S};
use super::CoflowSimError;

/// One reducer port of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Reducer {
    pub port: u32,
    /// Bytes after both roundings; its flows sum to this.
    pub bytes: f64,
    /// Bytes rounded to a whole MB only (`shuffleBytesPerRack`, what LCF compares).
    pub lcf_bytes: f64,
}

/// One coflow ("job") of the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub trace_index: usize,
    pub arrival_ms: i64,
    /// Distinct mapper ports, ascending.
    pub mappers: Vec<u32>,
    /// Distinct reducer ports, ascending.
    pub reducers: Vec<Reducer>,
    /// Bytes of every flow into each reducer (`reducers[i].bytes / mappers`, at least 1 MB).
    pub flow_bytes: Vec<f64>,
    /// `maxShuffleBytes / numMappers`.
    pub scf_key: f64,
    /// `min(numMappers, numReducers)`.
    pub ncf_key: usize,
    /// Static effective bottleneck, bytes.
    pub alpha: f64,
    /// Deadline duration, ms (`deadlineDuration`).
    pub deadline_ms: f64,
}

impl Job {
    pub fn lcf_bytes(&self) -> f64 {
        self.reducers.iter().map(|r| r.lcf_bytes).sum()
    }
}

/// Every coflow of `trace` with at least one flow, in the reference's admission order (arrival,
/// ties in trace order); `deadline_factor` is the reference's `deadlineMultRandomFactor` (1 for
/// every simulator but DARK's, which passes 0).
pub fn jobs_of(trace: &Trace, deadline_factor: f64) -> Result<Vec<Job>, CoflowSimError> {
    let mut jobs = Vec::with_capacity(trace.coflows.len());
    for (i, c) in trace.coflows.iter().enumerate() {
        if c.flows.is_empty() {
            continue;
        }
        let arrival_ms = (c.arrival_s * 1000.0).round();
        if !(0.0..=i32::MAX as f64).contains(&arrival_ms) {
            return Err(CoflowSimError::Arrival {
                coflow: c.id,
                arrival_s: c.arrival_s,
            });
        }
        let mut cells: BTreeMap<u32, BTreeMap<u32, f64>> = BTreeMap::new();
        for f in &c.flows {
            if cells
                .entry(f.dst)
                .or_default()
                .insert(f.src, f.bytes)
                .is_some()
            {
                return Err(CoflowSimError::NotBenchmark {
                    coflow: c.id,
                    why: format!("flow {} -> {} appears twice", f.src, f.dst),
                });
            }
        }
        let mappers: Vec<u32> = {
            let mut m: Vec<u32> = c.flows.iter().map(|f| f.src).collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        let m = mappers.len();
        let mut reducers = Vec::with_capacity(cells.len());
        for (&port, row) in &cells {
            let first = *row.values().next().expect("a reducer has a flow");
            if row.len() != m
                || row
                    .values()
                    .any(|&b| (b - first).abs() > 1e-9 * first.abs())
            {
                return Err(CoflowSimError::NotBenchmark {
                    coflow: c.id,
                    why: format!(
                        "reducer {port} does not receive equal flows from all {m} mappers"
                    ),
                });
            }
            let whole_mb = whole_mb_ceil(first * m as f64);
            let bytes = whole_mb.div_ceil(m as u64) * m as u64;
            reducers.push(Reducer {
                port,
                bytes: bytes as f64 * MB,
                lcf_bytes: whole_mb as f64 * MB,
            });
        }
        let flow_bytes = reducers
            .iter()
            .map(|r| (r.bytes / m as f64).max(MB))
            .collect();
        let total: f64 = reducers.iter().map(|r| r.bytes).sum();
        let max = reducers.iter().map(|r| r.bytes).fold(0.0, f64::max);
        // `Utils.max` starts from Double.MIN_VALUE.
        let alpha = (total / m as f64).max(max).max(f64::from_bits(1));
        jobs.push(Job {
            trace_index: i,
            arrival_ms: arrival_ms as i64,
            ncf_key: m.min(reducers.len()),
            scf_key: max / m as f64,
            mappers,
            reducers,
            flow_bytes,
            alpha,
            deadline_ms: 0.0,
        });
    }
    // Java's Collections.sort is stable.
    jobs.sort_by_key(|j| j.arrival_ms);
    let mut rng = JavaRandom::new(17);
    for j in &mut jobs {
        let mult = 1.0 + rng.next_f64() * deadline_factor;
        j.deadline_ms = j.alpha / PORT_BYTES_PER_S * mult * 1000.0;
    }
    Ok(jobs)
}

/// Whole MB of a reducer's `bytes`, rounded up as the reference does after `(long)` truncation;
/// values within 1e-9 (relative) of a whole byte count as that byte, so the MB that the trace
/// reader split into flows reads back exactly.
fn whole_mb_ceil(bytes: f64) -> u64 {
    let nearest = bytes.round();
    let whole = if (bytes - nearest).abs() <= 1e-9 * nearest.max(1.0) {
        nearest
    } else {
        bytes.floor()
    };
    (whole as u64).div_ceil(MB as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::trace::benchmark::parse;

    #[test]
    fn rounds_reducers_to_whole_mb_then_to_a_multiple_of_mappers() {
        // 3 mappers; reducer 0 gets 4.2 MB -> 5 MB -> 6 MB (2 MB flows); reducer 5 gets 0.5 MB ->
        // 1 MB -> 3 MB (1 MB flows).
        let t = parse("8 1\n7 1500 3 4 2 0 2 5:0.5 0:4.2\n", "t").unwrap();
        let j = &jobs_of(&t, 1.0).unwrap()[0];
        assert_eq!(j.arrival_ms, 1500);
        assert_eq!(j.mappers, vec![0, 2, 4]);
        assert_eq!(
            j.reducers.iter().map(|r| r.port).collect::<Vec<_>>(),
            vec![0, 5]
        );
        assert_eq!(j.reducers[0].bytes, 6.0 * MB);
        assert_eq!(j.reducers[0].lcf_bytes, 5.0 * MB);
        assert_eq!(j.reducers[1].bytes, 3.0 * MB);
        assert_eq!(j.flow_bytes, vec![2.0 * MB, MB]);
        assert_eq!(j.scf_key, 2.0 * MB);
        assert_eq!(j.ncf_key, 2);
        // max(total / mappers = 3 MB, largest reducer = 6 MB)
        assert_eq!(j.alpha, 6.0 * MB);
    }

    #[test]
    fn whole_mb_survive_the_split() {
        for mb in 1..2000u64 {
            for m in [1usize, 3, 7, 49, 150] {
                let bytes = coflowkit_model::trace::num::flow_bytes(mb as f64, m) * m as f64;
                assert_eq!(whole_mb_ceil(bytes), mb, "{mb} MB over {m}");
            }
        }
    }
}
