//! The simulator's side of DAG dependencies (`Coflow::parents`): every coflow's
//! `external.internal` id from the shared Pseudocode 5 ([`DagIds`]), and each DAG's finished
//! bytes, which its active coflows inherit. Dependencies are finishes-before (pipelined): a child
//! arrives at its trace arrival and runs beside its parents, behind them during contention.

use coflowkit_model::Trace;
use coflowkit_sched::{CoflowState, DagIds, DagPos};

use crate::engine::SimError;
use crate::outcome::CoflowOutcome;

pub(crate) struct DagBook {
    /// Per trace index, its place (finished bytes filled in on admission).
    pos: Vec<DagPos>,
    /// Per external id, the bytes of its coflows that finished.
    finished: Vec<f64>,
    /// Admitted trace indices not yet finished.
    live: Vec<usize>,
}

impl DagBook {
    /// `None` when no coflow has parents: every coflow is then its own entity and the policies
    /// see no DAG at all (nothing to pay for it). `order` is the arrival order: a parent must
    /// come before its children.
    pub(crate) fn new(trace: &Trace, order: &[usize]) -> Result<Option<DagBook>, SimError> {
        if trace.coflows.iter().all(|c| c.parents.is_empty()) {
            return Ok(None);
        }
        let mut ids = DagIds::new();
        let mut pos = vec![None; trace.coflows.len()];
        for &ti in order {
            let c = &trace.coflows[ti];
            pos[ti] = Some(ids.assign(c.id, c.arrival_s, &c.parents)?);
        }
        let pos: Vec<DagPos> = pos.into_iter().map(|p| p.expect("all assigned")).collect();
        let dags = pos.iter().map(|p| p.external + 1).max().unwrap_or(0) as usize;
        Ok(Some(DagBook {
            pos,
            finished: vec![0.0; dags],
            live: Vec::new(),
        }))
    }

    /// Trace coflow `ti` arrives.
    pub(crate) fn admit(&mut self, ti: usize) -> DagPos {
        self.live.push(ti);
        let mut p = self.pos[ti];
        p.finished_bytes = self.finished[p.external as usize];
        p
    }

    /// After coflows finished: add their bytes to their DAGs and tell the active coflows.
    pub(crate) fn refresh(
        &mut self,
        trace: &Trace,
        outcomes: &[Option<CoflowOutcome>],
        active: &mut [CoflowState],
    ) {
        let before = self.live.len();
        let (pos, finished) = (&self.pos, &mut self.finished);
        self.live.retain(|&ti| {
            if outcomes[ti].is_none() {
                return true;
            }
            finished[pos[ti].external as usize] += trace.coflows[ti].bytes();
            false
        });
        if self.live.len() == before {
            return;
        }
        for d in active.iter_mut().filter_map(|c| c.dag.as_mut()) {
            d.finished_bytes = self.finished[d.external as usize];
        }
    }
}
