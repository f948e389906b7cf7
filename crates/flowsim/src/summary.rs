//! Summary statistics of a run: the numbers of the comparison table and the JSON summary.

use std::collections::BTreeMap;

use coflowkit_model::bins::Bin;
use coflowkit_model::stats::{mean, percentile};
use serde::{Deserialize, Serialize};

use crate::outcome::SimOutput;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub coflows: usize,
    pub avg_cct_s: f64,
    pub p50_cct_s: f64,
    pub p95_cct_s: f64,
    pub p99_cct_s: f64,
    /// Average CCT per bin (SN, LN, SW, LW); bins without coflows are left out.
    pub avg_cct_by_bin_s: BTreeMap<String, f64>,
    pub coflows_by_bin: BTreeMap<String, usize>,
    /// Mean of CCT / isolated CCT.
    pub avg_slowdown: f64,
    /// CCT / isolated CCT: min, max, mean, stdev (Table 7.3). Absent from older JSON.
    #[serde(default)]
    pub slowdown: SlowdownStats,
    pub avg_fct_s: f64,
    pub makespan_s: f64,
    /// Coflows that had a deadline, and how many met it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlines: Option<DeadlineStats>,
    pub decisions: u64,
    /// Absent from JSON written before it was counted.
    #[serde(default)]
    pub redistributions: u64,
    pub wall_s: f64,
}

/// The spread of slowdowns (CCT / isolated CCT) over a run's coflows, as in Table 7.3. The
/// standard deviation is the population one (divided by n): the thesis does not say which.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SlowdownStats {
    pub min: f64,
    pub max: f64,
    pub avg: f64,
    pub stdev: f64,
}

impl SlowdownStats {
    /// NaN everywhere for no values.
    pub fn of(v: &[f64]) -> Self {
        if v.is_empty() {
            return SlowdownStats {
                min: f64::NAN,
                max: f64::NAN,
                avg: f64::NAN,
                stdev: f64::NAN,
            };
        }
        let avg = mean(v);
        let var = v.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / v.len() as f64;
        SlowdownStats {
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            avg,
            stdev: var.sqrt(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeadlineStats {
    pub with_deadline: usize,
    pub met: usize,
    pub met_fraction: f64,
}

impl Summary {
    pub fn of(run: &SimOutput) -> Summary {
        let mut ccts: Vec<f64> = run.coflows.iter().map(|c| c.cct_s).collect();
        ccts.sort_by(f64::total_cmp);
        let mut avg_by_bin = BTreeMap::new();
        let mut n_by_bin = BTreeMap::new();
        for bin in Bin::ALL {
            let v: Vec<f64> = run
                .coflows
                .iter()
                .filter(|c| c.bin == bin)
                .map(|c| c.cct_s)
                .collect();
            if !v.is_empty() {
                avg_by_bin.insert(bin.name().to_string(), mean(&v));
                n_by_bin.insert(bin.name().to_string(), v.len());
            }
        }
        let slowdowns: Vec<f64> = run
            .coflows
            .iter()
            .filter(|c| c.isolated_cct_s > 0.0)
            .map(|c| c.cct_s / c.isolated_cct_s)
            .collect();
        let flows: usize = run.coflows.iter().map(|c| c.flows).sum();
        let fct_total: f64 = run
            .coflows
            .iter()
            .map(|c| c.avg_fct_s * c.flows as f64)
            .sum();
        let with_deadline = run
            .coflows
            .iter()
            .filter(|c| c.deadline_s.is_some())
            .count();
        let met = run
            .coflows
            .iter()
            .filter(|c| c.met_deadline == Some(true))
            .count();
        Summary {
            coflows: run.coflows.len(),
            avg_cct_s: mean(&ccts),
            p50_cct_s: percentile(&ccts, 50.0),
            p95_cct_s: percentile(&ccts, 95.0),
            p99_cct_s: percentile(&ccts, 99.0),
            avg_cct_by_bin_s: avg_by_bin,
            coflows_by_bin: n_by_bin,
            avg_slowdown: mean(&slowdowns),
            slowdown: SlowdownStats::of(&slowdowns),
            avg_fct_s: if flows > 0 {
                fct_total / flows as f64
            } else {
                f64::NAN
            },
            makespan_s: run.makespan_s,
            deadlines: (with_deadline > 0).then(|| DeadlineStats {
                with_deadline,
                met,
                met_fraction: met as f64 / with_deadline as f64,
            }),
            decisions: run.decisions,
            redistributions: run.redistributions,
            wall_s: run.wall_s,
        }
    }
}
