//! DAGs of coflows (Aalo §6.6, spec §4.5): the coflows of one job are one entity, named by the
//! external part of `CoflowId = external.internal`; the internal part orders the DAG's coflows,
//! a child after all its parents. [`DagIds`] is Pseudocode 5, shared by the simulator and the
//! coordinator so both number a workload's DAGs the same way.

use std::collections::HashMap;

use coflowkit_model::CoflowId;
use thiserror::Error;

use crate::state::CoflowState;

/// A coflow's place in its DAG, as a scheduler sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DagPos {
    /// The DAG (job). A coflow without parents starts a new DAG; external ids grow in the order
    /// DAGs start, so FIFO across DAGs is FIFO by external id.
    pub external: u64,
    /// 0 for a coflow without parents, else 1 + the largest internal id of its parents.
    pub internal: u32,
    /// Arrival of the DAG's first coflow (FIFO across DAGs inside a queue).
    pub dag_arrival_s: f64,
    /// Bytes sent by the DAG's coflows that are no longer active (finished or unregistered):
    /// the attained service the DAG's active coflows inherit.
    pub finished_bytes: f64,
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum DagError {
    #[error("coflow {coflow} names itself as a parent")]
    SelfParent { coflow: CoflowId },
    #[error("coflow {coflow}: parent {parent} is unknown (parents must be registered, or arrive, before their children)")]
    UnknownParent { coflow: CoflowId, parent: CoflowId },
    #[error("coflow {coflow} is already registered")]
    Duplicate { coflow: CoflowId },
}

#[derive(Debug, Clone, Copy)]
struct Known {
    external: u64,
    internal: u32,
}

/// Pseudocode 5: hands every coflow its `external.internal` id as it registers, and tallies
/// each DAG's start and finished bytes. Worlds only report "coflow X ended having sent N
/// bytes" ([`DagIds::ended`]) and ask for the places of their active coflows
/// ([`DagIds::place`]).
#[derive(Debug, Default, Clone)]
pub struct DagIds {
    next_external: u64,
    known: HashMap<CoflowId, Known>,
    /// Per external id: the DAG's first arrival and the bytes of its coflows no longer active.
    dags: HashMap<u64, (f64, f64)>,
    /// The bytes each coflow that is no longer active was reported to have sent.
    ended: HashMap<CoflowId, f64>,
}

impl DagIds {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `coflow` arriving at `arrival_s` with `parents`. Without parents it starts a new
    /// DAG. With parents it joins the oldest (smallest external id) of its parents' DAGs — a
    /// coflow joining two jobs' DAGs does not merge them, since merging would renumber coflows
    /// already running — and its internal id is 1 + the largest over all its parents.
    pub fn assign(
        &mut self,
        coflow: CoflowId,
        arrival_s: f64,
        parents: &[CoflowId],
    ) -> Result<DagPos, DagError> {
        if self.known.contains_key(&coflow) {
            return Err(DagError::Duplicate { coflow });
        }
        let mut joined: Option<Known> = None;
        for &p in parents {
            if p == coflow {
                return Err(DagError::SelfParent { coflow });
            }
            let k = *self
                .known
                .get(&p)
                .ok_or(DagError::UnknownParent { coflow, parent: p })?;
            joined = Some(match joined {
                None => Known {
                    external: k.external,
                    internal: k.internal + 1,
                },
                Some(j) => Known {
                    external: j.external.min(k.external),
                    internal: j.internal.max(k.internal + 1),
                },
            });
        }
        let k = joined.unwrap_or_else(|| {
            let external = self.next_external;
            self.next_external += 1;
            self.dags.insert(external, (arrival_s, 0.0));
            Known {
                external,
                internal: 0,
            }
        });
        self.known.insert(coflow, k);
        Ok(self.pos(coflow).expect("just inserted"))
    }

    /// The coflow's place with its DAG's current finished bytes.
    pub fn pos(&self, coflow: CoflowId) -> Option<DagPos> {
        let k = self.known.get(&coflow)?;
        let (dag_arrival_s, finished_bytes) = self.dags[&k.external];
        Some(DagPos {
            external: k.external,
            internal: k.internal,
            dag_arrival_s,
            finished_bytes,
        })
    }

    /// Coflow `coflow` is no longer active (it ended, or was unregistered), having sent
    /// `sent_bytes` in all: the active coflows of its DAG inherit them. A second report of the
    /// same coflow replaces the first (a coflow that ends and is then unregistered counts
    /// once). Unknown coflows are ignored.
    pub fn ended(&mut self, coflow: CoflowId, sent_bytes: f64) {
        let Some(k) = self.known.get(&coflow) else {
            return;
        };
        let Some(d) = self.dags.get_mut(&k.external) else {
            return;
        };
        match self.ended.insert(coflow, sent_bytes) {
            Some(before) if before == sent_bytes => {}
            Some(before) => d.1 += sent_bytes - before,
            None => d.1 += sent_bytes,
        }
    }

    /// Coflow `coflow`, reported [`ended`](DagIds::ended), is active again (a world that
    /// leaves a coflow out while it waits, and takes it back): its bytes leave the tally.
    pub fn resumed(&mut self, coflow: CoflowId) {
        if let Some(before) = self.ended.remove(&coflow) {
            let k = self.known[&coflow];
            if let Some(d) = self.dags.get_mut(&k.external) {
                d.1 -= before;
            }
        }
    }

    /// Every active coflow's place in its DAG as of now (`None` for coflows never assigned).
    pub fn place(&self, active: &mut [CoflowState]) {
        for c in active {
            c.dag = self.pos(c.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudocode_5_numbers_dags_and_their_coflows() {
        let mut ids = DagIds::new();
        let a = ids.assign(10, 0.0, &[]).unwrap();
        let b = ids.assign(11, 1.0, &[]).unwrap();
        assert_eq!((a.external, a.internal), (0, 0));
        assert_eq!((b.external, b.internal), (1, 0));
        // A chain 10 -> 12 -> 13 and a join 13 + 11 -> 14 (joins the older DAG 0).
        let c = ids.assign(12, 2.0, &[10]).unwrap();
        assert_eq!((c.external, c.internal, c.dag_arrival_s), (0, 1, 0.0));
        let d = ids.assign(13, 3.0, &[12]).unwrap();
        assert_eq!((d.external, d.internal), (0, 2));
        let e = ids.assign(14, 4.0, &[11, 13]).unwrap();
        assert_eq!((e.external, e.internal), (0, 3));
        ids.ended(10, 5.0);
        assert_eq!(ids.pos(12).unwrap().finished_bytes, 5.0);
        assert_eq!(ids.pos(11).unwrap().finished_bytes, 0.0);
        // Reported again (ended, then unregistered with more bytes): counted once.
        ids.ended(10, 7.0);
        assert_eq!(ids.pos(12).unwrap().finished_bytes, 7.0);
        ids.ended(12, 1.0);
        ids.resumed(12);
        assert_eq!(ids.pos(13).unwrap().finished_bytes, 7.0);
        ids.ended(99, 1.0); // unknown: ignored
        let mut active = vec![crate::CoflowState::of_flows(&[(0, 1, 1.0)])];
        active[0].id = 13;
        ids.place(&mut active);
        assert_eq!(active[0].dag, ids.pos(13));
    }

    #[test]
    fn bad_parents_are_refused() {
        let mut ids = DagIds::new();
        assert_eq!(
            ids.assign(1, 0.0, &[2]),
            Err(DagError::UnknownParent {
                coflow: 1,
                parent: 2
            })
        );
        assert_eq!(
            ids.assign(1, 0.0, &[1]),
            Err(DagError::SelfParent { coflow: 1 })
        );
        ids.assign(1, 0.0, &[]).unwrap();
        assert_eq!(
            ids.assign(1, 0.0, &[]),
            Err(DagError::Duplicate { coflow: 1 })
        );
    }
}
