//! What one simulation run produces.

use coflowkit_model::bins::Bin;
use coflowkit_model::CoflowId;
use serde::{Deserialize, Serialize};

/// One coflow's fate. CCT is measured from arrival.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoflowOutcome {
    pub id: CoflowId,
    pub arrival_s: f64,
    pub finish_s: f64,
    pub cct_s: f64,
    /// Γ: its completion time alone on the empty fabric; `cct_s / isolated_cct_s` is the slowdown.
    pub isolated_cct_s: f64,
    pub bytes: f64,
    pub flows: usize,
    pub length_bytes: f64,
    pub bin: Bin,
    /// Absolute deadline, when the coflow had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met_deadline: Option<bool>,
    /// Mean flow completion time, from arrival.
    pub avg_fct_s: f64,
    /// Last minus first flow completion, over the coflow's CCT (0 = all flows finish in sync).
    pub fct_spread: f64,
}

/// A whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SimOutput {
    pub scheduler: String,
    /// In trace order.
    pub coflows: Vec<CoflowOutcome>,
    /// Scheduler decisions taken (one per event time).
    pub decisions: u64,
    /// Hand-outs of freed bandwidth between decisions (see `FlowCompletion::Redistribute`);
    /// 0 where every change of rates is a decision.
    #[serde(default)]
    pub redistributions: u64,
    /// When the last coflow finished.
    pub makespan_s: f64,
    /// Wall-clock seconds the simulation took.
    pub wall_s: f64,
}
