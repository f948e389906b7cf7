//! The policies' unit tests' world: one decision at time 0 on a uniform fabric of 4 machines
//! at rate 1.

use coflowkit_model::Fabric;

use crate::{CoflowState, Rates, Scheduler, Snapshot};

/// Each coflow's per-flow rates after one `allocate` of `s`.
pub(crate) fn decide(s: &mut dyn Scheduler, coflows: &[CoflowState]) -> Vec<Vec<f64>> {
    let fabric = Fabric::uniform(4, 1.0);
    let mut rates = Rates::default();
    rates.reset(coflows);
    let snap = Snapshot {
        now_s: 0.0,
        fabric: &fabric,
        coflows,
    };
    s.allocate(&snap, &mut rates);
    rates.per_coflow
}
