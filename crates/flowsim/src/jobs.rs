//! Job-level results of a DAG replay (issue 18, row 24): a job is a connected component of
//! the parent graph (`Coflow::parents`), e.g. one TPC-DS-like query; it equals Aalo's DAG
//! (`DagIds`) whenever no coflow has parents in two DAGs, as in every generated workload.
//!
//! - **JCT**: from the job's first coflow release to its last coflow end. Computation before
//!   the first coflow (the scans) and after the last (the final stage) is outside it; the
//!   compute between coflows (`Coflow::compute_s`) is inside.
//! - **Communication time**: the time in which at least one of the job's coflows is active
//!   (the union of its coflows' [release, end] intervals). The thesis measures "job-level
//!   communication times" for DAGs (Fig 6.11) without defining them; for single-coflow jobs it
//!   equates communication time with CCT ("average CCT (CommTime)", Fig 6.5b), which this
//!   definition gives. Under starts-after, a coflow's release is when its parents ended and
//!   its compute passed; CCTs count from there.

use std::collections::HashMap;

use coflowkit_model::stats::percentile;
use coflowkit_model::trace::dag;
use coflowkit_model::{CoflowId, Trace};
use serde::{Deserialize, Serialize};

use crate::outcome::SimOutput;

/// One job's fate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobOutcome {
    /// The job's coflow that comes first in the trace (its id names the job).
    pub job: CoflowId,
    pub coflows: usize,
    /// Coflows on the job's longest parent chain (1: a single level).
    pub levels: u32,
    /// First release of one of its coflows.
    pub start_s: f64,
    /// Last end of one of its coflows.
    pub finish_s: f64,
    pub jct_s: f64,
    /// Time with at least one of its coflows active.
    pub comm_s: f64,
}

/// The jobs of `trace` as replayed in `out`, in the order of their first coflow in the trace.
/// Fails when the parents are not a DAG workload (`trace::dag::check`) or a coflow has no
/// outcome.
pub fn jobs(trace: &Trace, out: &SimOutput) -> Result<Vec<JobOutcome>, String> {
    dag::check(&trace.coflows)
        .map_err(|f| format!("coflow {}: {}", trace.coflows[f.coflow].id, f.why))?;
    let n = trace.coflows.len();
    let index: HashMap<CoflowId, usize> = (trace.coflows.iter().enumerate())
        .map(|(i, c)| (c.id, i))
        .collect();
    // Union-find over parent edges.
    let mut up: Vec<usize> = (0..n).collect();
    fn root(up: &mut [usize], mut i: usize) -> usize {
        while up[i] != i {
            up[i] = up[up[i]];
            i = up[i];
        }
        i
    }
    for (i, c) in trace.coflows.iter().enumerate() {
        for p in &c.parents {
            let (a, b) = (root(&mut up, i), root(&mut up, index[p]));
            if a != b {
                up[a.max(b)] = a.min(b);
            }
        }
    }
    let outcome: HashMap<CoflowId, (f64, f64)> = (out.coflows.iter())
        .map(|o| (o.id, (o.arrival_s, o.finish_s)))
        .collect();
    let depth = dag::depths(&trace.coflows);
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for i in 0..n {
        let r = root(&mut up, i);
        let g = *group_of.entry(r).or_insert_with(|| {
            groups.push((i, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(i);
    }
    groups
        .into_iter()
        .map(|(first, members)| {
            let mut spans = Vec::with_capacity(members.len());
            for &i in &members {
                let id = trace.coflows[i].id;
                let span = outcome
                    .get(&id)
                    .ok_or_else(|| format!("coflow {id} has no outcome in the run"))?;
                spans.push(*span);
            }
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            let start_s = spans[0].0;
            let finish_s = spans.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
            Ok(JobOutcome {
                job: trace.coflows[first].id,
                coflows: members.len(),
                levels: 1 + members.iter().map(|&i| depth[i]).max().unwrap_or(0),
                start_s,
                finish_s,
                jct_s: finish_s - start_s,
                comm_s: union_length(&spans),
            })
        })
        .collect()
}

/// Total length of the union of `[start, end]` intervals sorted by start.
fn union_length(spans: &[(f64, f64)]) -> f64 {
    let mut total = 0.0;
    let mut cur: Option<(f64, f64)> = None;
    for &(a, b) in spans {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        total += e - s;
    }
    total
}

/// Averages over a run's jobs, and over those of more than one level (what row 24 compares:
/// the thesis reports its DAG results "for DAGs that have more than one level").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub jobs: usize,
    pub avg_jct_s: f64,
    pub p95_jct_s: f64,
    pub avg_comm_s: f64,
    pub p95_comm_s: f64,
    pub multi_level_jobs: usize,
    pub multi_level_avg_jct_s: f64,
    pub multi_level_avg_comm_s: f64,
}

impl JobSummary {
    pub fn of(jobs: &[JobOutcome]) -> JobSummary {
        let avg = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let p95 = |mut v: Vec<f64>| {
            if v.is_empty() {
                return f64::NAN;
            }
            v.sort_by(f64::total_cmp);
            percentile(&v, 95.0)
        };
        let jct: Vec<f64> = jobs.iter().map(|j| j.jct_s).collect();
        let comm: Vec<f64> = jobs.iter().map(|j| j.comm_s).collect();
        let multi: Vec<&JobOutcome> = jobs.iter().filter(|j| j.levels > 1).collect();
        let m_jct: Vec<f64> = multi.iter().map(|j| j.jct_s).collect();
        let m_comm: Vec<f64> = multi.iter().map(|j| j.comm_s).collect();
        JobSummary {
            jobs: jobs.len(),
            avg_jct_s: avg(&jct),
            p95_jct_s: p95(jct.clone()),
            avg_comm_s: avg(&comm),
            p95_comm_s: p95(comm.clone()),
            multi_level_jobs: multi.len(),
            multi_level_avg_jct_s: avg(&m_jct),
            multi_level_avg_comm_s: avg(&m_comm),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_counts_overlaps_once_and_gaps_not_at_all() {
        assert_eq!(union_length(&[(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]), 4.0);
        assert_eq!(union_length(&[(0.0, 4.0), (1.0, 2.0)]), 4.0);
        assert_eq!(union_length(&[(1.0, 1.0)]), 0.0);
        assert_eq!(union_length(&[]), 0.0);
    }
}
