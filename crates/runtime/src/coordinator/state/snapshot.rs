//! What the scheduler sees, built from the records: the READY coflows with unfinished flows
//! of connected daemons, in arrival order, on the fabric of the registered daemons; and the last
//! decision's snapshot kept for hand-ons of freed bandwidth between rounds (and its priority
//! order, for the dashboard).

use coflowkit_model::Fabric;
use coflowkit_sched::{CoflowState, DecisionClock, FlowState, Rates};

use super::records::{CoflowRec, FlowKey, Records};

/// The last decision: what the scheduler saw (a finished flow's bytes left set to 0 when its
/// end is reported), on which fabric, each flow's key, and the current rates.
pub(super) struct Last {
    pub(super) active: Vec<CoflowState>,
    pub(super) keys: Vec<Vec<FlowKey>>,
    pub(super) fabric: Fabric,
    pub(super) rates: Rates,
    /// Coflow ids in the policy's priority order, highest first (empty: it keeps none).
    pub(super) order: Vec<u64>,
}

impl Default for Last {
    fn default() -> Self {
        Last {
            active: Vec::new(),
            keys: Vec::new(),
            fabric: Fabric::uniform(0, 0.0),
            rates: Rates::default(),
            order: Vec::new(),
        }
    }
}

impl Last {
    /// The flow at `slot` ended: its rate goes back to its ports (for the clock's hand-on)
    /// and the policy sees it finished.
    pub(super) fn flow_ended(&mut self, (ci, fi): (u32, u32), clock: &mut DecisionClock) {
        let (ci, fi) = (ci as usize, fi as usize);
        let rate = std::mem::replace(&mut self.rates.per_coflow[ci][fi], 0.0);
        let f = &mut self.active[ci].flows[fi];
        f.remaining_bytes = 0.0;
        if rate > 0.0 {
            clock.flow_ended(f.src, f.dst, rate);
        }
    }
}

/// The scheduler's view of `rec` now: the active coflows (their DAG places from the records'
/// tally, which learns here which registered coflows are left out) and each flow's key.
pub(super) fn build(
    rec: &mut Records,
    clairvoyant: bool,
) -> (Fabric, Vec<CoflowState>, Vec<Vec<FlowKey>>) {
    let fabric = rec.fabric();
    let outside = (fabric.ports() - 1) as u32;
    let mut order: Vec<&CoflowRec> = rec.coflows.values().collect();
    order.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s).then(a.id.cmp(&b.id)));
    let mut active = Vec::new();
    let mut keys: Vec<Vec<FlowKey>> = Vec::new();
    // A registered coflow the snapshot leaves out (not READY, or all flows done) is not
    // active: its DAG's active coflows inherit its bytes (sched tallies them).
    let mut left_out = Vec::new();
    let mut taken = Vec::new();
    for c in order {
        match coflow(rec, c, clairvoyant, outside) {
            Some((state, fk)) => {
                active.push(state);
                keys.push(fk);
                taken.push(c.id);
            }
            None => {
                let sent: f64 = (c.flows.iter())
                    .filter_map(|k| rec.flows.get(k))
                    .map(|f| f.sent_bytes)
                    .sum();
                left_out.push((c.id, sent));
            }
        }
    }
    for (id, sent) in left_out {
        rec.dags.ended(id, sent);
    }
    for id in taken {
        rec.dags.resumed(id);
    }
    rec.dags.place(&mut active);
    (fabric, active, keys)
}

/// The coflow's state for the scheduler, if it is READY and has unfinished flows (its `dag`
/// is filled in by the caller).
fn coflow(
    rec: &Records,
    c: &CoflowRec,
    clairvoyant: bool,
    outside: u32,
) -> Option<(CoflowState, Vec<FlowKey>)> {
    if !c.ready() {
        return None; // not READY: the scheduler considers it once all hinted gets started
    }
    let clairvoyant = clairvoyant && !c.sizes_hidden;
    let mut sent = 0.0;
    let mut max_sent: f64 = 0.0;
    let mut flows = Vec::new();
    let mut fk = Vec::new();
    for k in &c.flows {
        let Some(f) = rec.flows.get(k) else { continue };
        sent += f.sent_bytes;
        max_sent = max_sent.max(f.sent_bytes);
        if f.done || !rec.daemons[f.src].connected || (clairvoyant && f.size_pending) {
            continue;
        }
        // A flow whose reported bytes caught up with its size is finishing; it keeps a
        // crumb so clairvoyant policies still give it a rate until its end is reported.
        let remaining = if clairvoyant {
            (f.size_bytes - f.sent_bytes).max(1.0)
        } else {
            f64::INFINITY
        };
        flows.push(FlowState {
            src: f.src as u32,
            dst: f.dst.map_or(outside, |d| d as u32),
            sent_bytes: f.sent_bytes,
            remaining_bytes: remaining,
        });
        fk.push(*k);
    }
    if flows.is_empty() {
        return None;
    }
    let state = CoflowState {
        id: c.id,
        arrival_s: c.arrival_s,
        deadline_s: c.deadline_s,
        weight: c.weight,
        total_flows: (c.num_flows as usize).max(c.flows.len()),
        sent_bytes: sent,
        max_flow_sent_bytes: max_sent,
        flows,
        dag: None,
    };
    Some((state, fk))
}
