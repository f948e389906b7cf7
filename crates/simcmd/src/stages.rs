//! Stage completion times of a multi-wave replay (`sim --max-waves`): a stage ends when its last
//! wave does, and counts from the stage's arrival (its first wave's). What the thesis compares
//! for multi-wave coflows (row 23), where a coflow per wave would hide the stage's wait.

use std::collections::BTreeMap;

use coflowkit_flowsim::SimOutput;
use coflowkit_model::gen::waves::stage_of;
use coflowkit_model::stats::percentile;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StageSummary {
    pub stages: usize,
    /// Stages of more than one wave.
    pub multi_wave: usize,
    pub avg_s: f64,
    pub p95_s: f64,
}

/// Every stage's completion time, by stage id.
pub fn stage_times(out: &SimOutput) -> BTreeMap<u64, (f64, usize)> {
    let mut span: BTreeMap<u64, (f64, f64, usize)> = BTreeMap::new();
    for c in &out.coflows {
        let e = span
            .entry(stage_of(c.id))
            .or_insert((f64::INFINITY, f64::NEG_INFINITY, 0));
        e.0 = e.0.min(c.arrival_s);
        e.1 = e.1.max(c.finish_s);
        e.2 += 1;
    }
    span.into_iter()
        .map(|(id, (a, f, n))| (id, (f - a, n)))
        .collect()
}

/// Average and p95 stage completion time of a multi-wave replay.
pub fn summary(out: &SimOutput) -> StageSummary {
    let times = stage_times(out);
    let mut v: Vec<f64> = times.values().map(|t| t.0).collect();
    v.sort_by(f64::total_cmp);
    StageSummary {
        stages: v.len(),
        multi_wave: times.values().filter(|t| t.1 > 1).count(),
        avg_s: v.iter().sum::<f64>() / v.len().max(1) as f64,
        p95_s: if v.is_empty() {
            f64::NAN
        } else {
            percentile(&v, 95.0)
        },
    }
}

/// The stage table `sim --max-waves` prints: one line per run.
pub fn table(names: &[&str], stages: &[Option<StageSummary>]) -> Option<String> {
    if stages.iter().all(Option::is_none) {
        return None;
    }
    let mut t = String::from("stage completion (a stage ends with its last wave):\n");
    t += &format!(
        "{:<14} {:>8} {:>11} {:>12} {:>12}\n",
        "scheduler", "stages", "multi-wave", "avg s", "p95 s"
    );
    for (name, s) in names.iter().zip(stages) {
        if let Some(s) = s {
            t += &format!(
                "{:<14} {:>8} {:>11} {:>12.3} {:>12.3}\n",
                name, s.stages, s.multi_wave, s.avg_s, s.p95_s
            );
        }
    }
    Some(t)
}
