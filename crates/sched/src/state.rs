//! What a scheduler sees: the state a coordinator could know, and nothing more. The simulated
//! world fills it from its event loop, the real coordinator from daemon reports.

use coflowkit_model::{CoflowId, Fabric};

use crate::dag::DagPos;
use serde::{Deserialize, Serialize};

/// An unfinished flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowState {
    pub src: u32,
    pub dst: u32,
    /// Bytes this flow has sent so far.
    pub sent_bytes: f64,
    /// Bytes this flow still has to send. Non-clairvoyant worlds pass `f64::INFINITY`; only
    /// policies whose [`Scheduler::clairvoyant`](crate::Scheduler::clairvoyant) is true read it.
    pub remaining_bytes: f64,
}

/// An active coflow: arrived and not finished.
#[derive(Debug, Clone, PartialEq)]
pub struct CoflowState {
    pub id: CoflowId,
    pub arrival_s: f64,
    /// Absolute deadline in seconds, if any.
    pub deadline_s: Option<f64>,
    pub weight: f64,
    /// Number of flows the coflow has in all, finished ones included (Saath's n_C).
    pub total_flows: usize,
    /// Bytes sent by all its flows so far, finished ones included (Aalo's "current size").
    pub sent_bytes: f64,
    /// The most any one of its flows has sent so far, finished ones included.
    pub max_flow_sent_bytes: f64,
    /// Unfinished flows, in the coflow's original flow order.
    pub flows: Vec<FlowState>,
    /// Its place in a DAG of coflows, when the world tracks dependencies (`None`: a coflow on
    /// its own). Aalo reads it; the other policies ignore it (docs/choices.md).
    pub dag: Option<DagPos>,
}

impl CoflowState {
    /// Bytes still to send (clairvoyant).
    pub fn remaining_bytes(&self) -> f64 {
        self.flows.iter().map(|f| f.remaining_bytes).sum()
    }

    /// Largest remaining flow (clairvoyant "length").
    pub fn remaining_length_bytes(&self) -> f64 {
        self.flows
            .iter()
            .map(|f| f.remaining_bytes)
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
impl CoflowState {
    /// A coflow (id 1, arrived at 0) with these (src, dst, remaining bytes) flows, for tests.
    pub(crate) fn of_flows(flows: &[(u32, u32, f64)]) -> Self {
        CoflowState {
            id: 1,
            arrival_s: 0.0,
            deadline_s: None,
            weight: 1.0,
            total_flows: flows.len(),
            sent_bytes: 0.0,
            max_flow_sent_bytes: 0.0,
            dag: None,
            flows: flows
                .iter()
                .map(|&(src, dst, remaining_bytes)| FlowState {
                    src,
                    dst,
                    sent_bytes: 0.0,
                    remaining_bytes,
                })
                .collect(),
        }
    }
}

/// Everything a scheduler may read for one decision.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    pub now_s: f64,
    pub fabric: &'a Fabric,
    /// Active coflows in arrival order (ties by id).
    pub coflows: &'a [CoflowState],
}

/// A rate in bytes per second for every unfinished flow of every active coflow, indexed like the
/// snapshot: `per_coflow[c][f]`. Reused between decisions to avoid allocation.
#[derive(Debug, Clone, Default)]
pub struct Rates {
    pub per_coflow: Vec<Vec<f64>>,
}

impl Rates {
    /// Shape the buffer like `coflows` with every rate zero.
    pub fn reset(&mut self, coflows: &[CoflowState]) {
        self.per_coflow.resize_with(coflows.len(), Vec::new);
        for (r, c) in self.per_coflow.iter_mut().zip(coflows) {
            r.clear();
            r.resize(c.flows.len(), 0.0);
        }
    }

    pub fn coflow_served(&self, c: usize) -> bool {
        self.per_coflow[c].iter().any(|&r| r > 0.0)
    }
}

/// What a policy does when a single flow ends between its decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowCompletion {
    /// Hand the freed bandwidth to waiting flows on the same ports in the last decision's
    /// priority order ([`crate::alloc::TopUp`]); a full decision only on coflow events.
    #[default]
    Redistribute,
    /// A full decision on every flow completion.
    Recompute,
    /// Nothing: the freed bandwidth idles until the next coflow event (the thesis' Varys).
    Ignore,
}

/// What a scheduler returns besides the rates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Decision {
    /// Call again at this time even if no arrival or completion happens first (a coordination
    /// tick, a starvation timer, the moment a coflow crosses a queue threshold at these rates).
    pub wake_at_s: Option<f64>,
}

impl Decision {
    pub fn none() -> Self {
        Decision { wake_at_s: None }
    }

    pub fn at(t: f64) -> Self {
        Decision {
            wake_at_s: t.is_finite().then_some(t),
        }
    }

    /// The earlier of two wake-ups.
    pub fn min(self, other: Decision) -> Self {
        match (self.wake_at_s, other.wake_at_s) {
            (Some(a), Some(b)) => Decision::at(a.min(b)),
            (a, b) => Decision { wake_at_s: a.or(b) },
        }
    }
}
