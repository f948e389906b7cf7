//! The simulator's side of DAG dependencies (`Coflow::parents`): it registers every coflow with
//! the shared Pseudocode 5 ([`DagIds`], which numbers the DAGs and tallies their finished bytes),
//! reports each coflow's end with the bytes it sent, and, for starts-after, holds a child until
//! its parents are done.

use std::collections::HashMap;

use coflowkit_model::Trace;
use coflowkit_sched::{CoflowState, DagIds, DagPos};
use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::outcome::CoflowOutcome;

/// How a child depends on its parents (spec §1.1; Aalo §6.6.1, `C_E` a parent of `C_F`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dependencies {
    /// `C_E → C_F`, pipelined stages: the child arrives at its trace arrival and may run beside
    /// its parents; only the scheduler's priorities (Aalo: behind them in its DAG) order them.
    /// What Aalo schedules for, and what a trace's arrival times already describe.
    #[default]
    FinishesBefore,
    /// `C_E ↦ C_F`, explicit barriers: the child arrives at the later of its trace arrival and
    /// its last parent's end. Its CCT and flow times count from then (its deadline stays
    /// anchored at the trace arrival).
    StartsAfter,
    /// Multi-wave stages without barriers (`--wave-timing overlap`, `waves::split_slots`): a
    /// coflow's *first* parent is a finishes-before edge (it joins that parent's DAG: Aalo's
    /// one entity per stage) and every further parent a starts-after edge (it is held until
    /// they have ended, then counts from its release as under `StartsAfter`).
    StageSlots,
}

pub(crate) struct DagBook {
    /// Every coflow's place, and the tally of finished bytes per DAG.
    ids: DagIds,
    /// Admitted trace indices not yet finished.
    live: Vec<usize>,
    /// Starts-after only: each coflow's parents as trace indices.
    parents: Option<Vec<Vec<usize>>>,
    /// Arrived coflows waiting for a parent (starts-after).
    held: Vec<usize>,
    /// Held coflows released, with the time.
    released_at: Vec<(usize, f64)>,
}

impl DagBook {
    /// `None` when no coflow has parents: every coflow is then its own entity and the policies
    /// see no DAG at all (nothing to pay for it). `order` is the arrival order: a parent must
    /// come before its children.
    pub(crate) fn new(
        trace: &Trace,
        order: &[usize],
        deps: Dependencies,
    ) -> Result<Option<DagBook>, SimError> {
        if trace.coflows.iter().all(|c| c.parents.is_empty()) {
            return Ok(None);
        }
        let mut ids = DagIds::new();
        for &ti in order {
            let c = &trace.coflows[ti];
            ids.assign(c.id, c.arrival_s, &c.parents)?;
        }
        // The parents a coflow waits for: all under starts-after, all but the first under
        // stage slots.
        let skip = match deps {
            Dependencies::FinishesBefore => None,
            Dependencies::StartsAfter => Some(0),
            Dependencies::StageSlots => Some(1),
        };
        let parents = skip.map(|skip| {
            let index: HashMap<_, _> = order.iter().map(|&ti| (trace.coflows[ti].id, ti)).collect();
            trace
                .coflows
                .iter()
                .map(|c| c.parents.iter().skip(skip).map(|p| index[p]).collect())
                .collect()
        });
        Ok(Some(DagBook {
            ids,
            live: Vec::new(),
            parents,
            held: Vec::new(),
            released_at: Vec::new(),
        }))
    }

    fn parents_done(&self, ti: usize, outcomes: &[Option<CoflowOutcome>]) -> bool {
        self.parents
            .as_ref()
            .is_none_or(|p| p[ti].iter().all(|&q| outcomes[q].is_some()))
    }

    /// Trace coflow `ti` arrives: true if it must wait for a parent (starts-after).
    pub(crate) fn hold(&mut self, ti: usize, outcomes: &[Option<CoflowOutcome>]) -> bool {
        if self.parents_done(ti, outcomes) {
            return false;
        }
        self.held.push(ti);
        true
    }

    /// Held coflows whose parents are all done by `now`, last-arrived first (pop order).
    pub(crate) fn release(&mut self, now: f64, outcomes: &[Option<CoflowOutcome>]) -> Vec<usize> {
        let mut out = Vec::new();
        if self.held.is_empty() {
            return out;
        }
        let held = std::mem::take(&mut self.held);
        for ti in held {
            if self.parents_done(ti, outcomes) {
                out.push(ti);
                self.released_at.push((ti, now));
            } else {
                self.held.push(ti);
            }
        }
        out.reverse();
        out
    }

    /// A released coflow's outcome counts from its release (the CCT of the coflow, not the
    /// wait for its parents); its deadline stays the trace's.
    pub(crate) fn restate_released(&self, outcomes: &mut [Option<CoflowOutcome>]) {
        for &(ti, at) in &self.released_at {
            if let Some(o) = outcomes[ti].as_mut() {
                let (wait, cct) = (at - o.arrival_s, o.cct_s);
                o.arrival_s = at;
                o.cct_s -= wait;
                if o.cct_s > 0.0 {
                    o.fct_spread *= cct / o.cct_s;
                }
            }
        }
    }

    /// Trace coflow `ti` arrives: its place, with its DAG's finished bytes so far.
    pub(crate) fn admit(&mut self, trace: &Trace, ti: usize) -> DagPos {
        self.live.push(ti);
        self.ids
            .pos(trace.coflows[ti].id)
            .expect("every coflow was assigned")
    }

    /// After coflows finished: report each one's end with the bytes it sent (all of them) and
    /// give the active coflows their DAGs' new tallies.
    pub(crate) fn refresh(
        &mut self,
        trace: &Trace,
        outcomes: &[Option<CoflowOutcome>],
        active: &mut [CoflowState],
    ) {
        let before = self.live.len();
        let ids = &mut self.ids;
        self.live.retain(|&ti| {
            if outcomes[ti].is_none() {
                return true;
            }
            let c = &trace.coflows[ti];
            ids.ended(c.id, c.bytes());
            false
        });
        if self.live.len() != before {
            self.ids.place(active);
        }
    }
}
