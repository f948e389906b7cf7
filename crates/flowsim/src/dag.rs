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
    /// its last parent's end plus its compute time (`Coflow::compute_s`, the stage's compute
    /// between the barrier and its output). Its CCT and flow times count from then (its
    /// deadline stays anchored at the trace arrival).
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
    /// Starts-after only: each coflow's compute time, seconds.
    compute_s: Vec<f64>,
    /// Arrived coflows waiting for a parent (starts-after).
    held: Vec<usize>,
    /// Arrived coflows whose parents have ended, waiting out their compute: (ready at, index).
    computing: Vec<(f64, usize)>,
    /// Held coflows released, with the time.
    released_at: Vec<(usize, f64)>,
    /// The policies see no DAG (`SimOptions::hide_dags`): dependencies still gate releases.
    hidden: bool,
}

impl DagBook {
    /// `None` when no coflow has parents: every coflow is then its own entity and the policies
    /// see no DAG at all (nothing to pay for it). `order` is the arrival order: a parent must
    /// come before its children.
    pub(crate) fn new(
        trace: &Trace,
        order: &[usize],
        deps: Dependencies,
        hidden: bool,
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
        let compute_s = match deps {
            Dependencies::StartsAfter | Dependencies::StageSlots => {
                trace.coflows.iter().map(|c| c.compute_s).collect()
            }
            Dependencies::FinishesBefore => Vec::new(),
        };
        Ok(Some(DagBook {
            ids,
            live: Vec::new(),
            parents,
            compute_s,
            held: Vec::new(),
            computing: Vec::new(),
            released_at: Vec::new(),
            hidden,
        }))
    }

    /// When coflow `ti` may start as far as its parents go: its last parent's end plus its
    /// compute time; `None` while a parent runs (always `Some(-inf)` for finishes-before).
    fn ready_at(&self, ti: usize, outcomes: &[Option<CoflowOutcome>]) -> Option<f64> {
        let Some(parents) = self.parents.as_ref() else {
            return Some(f64::NEG_INFINITY);
        };
        let mut last = f64::NEG_INFINITY;
        for &q in &parents[ti] {
            last = last.max(outcomes[q].as_ref()?.finish_s);
        }
        if parents[ti].is_empty() {
            return Some(last);
        }
        Some(last + self.compute_s[ti])
    }

    /// Trace coflow `ti` arrives at `now`: true if it must wait for a parent, or for its
    /// compute after its parents (starts-after).
    pub(crate) fn hold(&mut self, ti: usize, now: f64, outcomes: &[Option<CoflowOutcome>]) -> bool {
        match self.ready_at(ti, outcomes) {
            Some(at) if at <= now => false,
            Some(at) => {
                self.computing.push((at, ti));
                true
            }
            None => {
                self.held.push(ti);
                true
            }
        }
    }

    /// Held coflows whose parents are all done and whose compute is over by `now`,
    /// last-arrived first (pop order). Those whose parents just ended start their compute.
    pub(crate) fn release(&mut self, now: f64, outcomes: &[Option<CoflowOutcome>]) -> Vec<usize> {
        let mut out = Vec::new();
        if self.held.is_empty() && self.computing.is_empty() {
            return out;
        }
        let held = std::mem::take(&mut self.held);
        for ti in held {
            match self.ready_at(ti, outcomes) {
                Some(at) => self.computing.push((at, ti)),
                None => self.held.push(ti),
            }
        }
        let computing = std::mem::take(&mut self.computing);
        for (at, ti) in computing {
            if at <= now {
                out.push(ti);
                self.released_at.push((ti, now));
            } else {
                self.computing.push((at, ti));
            }
        }
        out.reverse();
        out
    }

    /// The next time a held coflow's compute ends (an event of the replay), if any waits.
    pub(crate) fn next_release_s(&self) -> Option<f64> {
        self.computing.iter().map(|&(at, _)| at).reduce(f64::min)
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

    /// Trace coflow `ti` arrives: its place, with its DAG's finished bytes so far (none when
    /// DAGs are hidden from the policies).
    pub(crate) fn admit(&mut self, trace: &Trace, ti: usize) -> Option<DagPos> {
        self.live.push(ti);
        if self.hidden {
            return None;
        }
        let pos = self.ids.pos(trace.coflows[ti].id);
        debug_assert!(pos.is_some(), "every coflow was assigned");
        pos
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
        if self.live.len() != before && !self.hidden {
            self.ids.place(active);
        }
    }
}
