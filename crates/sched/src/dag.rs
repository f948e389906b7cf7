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
    /// [`DagIds::forget`] was called: gone for good (its entry stays while its DAG has a
    /// coflow not forgotten, so later children still find it).
    gone: bool,
}

/// One DAG: its first arrival, the bytes of its coflows no longer active, its coflows.
#[derive(Debug, Clone, Default)]
struct Dag {
    arrival_s: f64,
    finished_bytes: f64,
    members: Vec<CoflowId>,
    gone: usize,
}

/// Pseudocode 5: hands every coflow its `external.internal` id as it registers, and tallies
/// each DAG's start and finished bytes. Worlds only report "coflow X ended having sent N
/// bytes" ([`DagIds::ended`]) and ask for the places of their active coflows
/// ([`DagIds::place`]).
///
/// A world that runs for ever (the coordinator) also says when a coflow is gone for good
/// ([`DagIds::forget`]): once every coflow of a DAG is, the DAG and its coflows are forgotten,
/// so the table follows the DAGs still alive, not all that ever were. A coflow registered later
/// naming a parent of a forgotten DAG is refused as an unknown parent by [`DagIds::assign`];
/// the coordinator lets it start a new DAG of its own instead (see its records).
#[derive(Debug, Default, Clone)]
pub struct DagIds {
    next_external: u64,
    known: HashMap<CoflowId, Known>,
    /// Per external id: the DAG's first arrival, the bytes of its coflows no longer active,
    /// and its coflows.
    dags: HashMap<u64, Dag>,
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
                    gone: false,
                },
                Some(j) => Known {
                    external: j.external.min(k.external),
                    internal: j.internal.max(k.internal + 1),
                    gone: false,
                },
            });
        }
        let k = joined.unwrap_or_else(|| {
            let external = self.next_external;
            self.next_external += 1;
            let dag = Dag {
                arrival_s,
                ..Dag::default()
            };
            self.dags.insert(external, dag);
            Known {
                external,
                internal: 0,
                gone: false,
            }
        });
        if let Some(d) = self.dags.get_mut(&k.external) {
            d.members.push(coflow);
        }
        self.known.insert(coflow, k);
        Ok(self.pos(coflow).expect("just inserted"))
    }

    /// The coflow's place with its DAG's current finished bytes.
    pub fn pos(&self, coflow: CoflowId) -> Option<DagPos> {
        let k = self.known.get(&coflow)?;
        let d = self.dags.get(&k.external)?;
        Some(DagPos {
            external: k.external,
            internal: k.internal,
            dag_arrival_s: d.arrival_s,
            finished_bytes: d.finished_bytes,
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
            Some(before) => d.finished_bytes += sent_bytes - before,
            None => d.finished_bytes += sent_bytes,
        }
    }

    /// Coflow `coflow`, reported [`ended`](DagIds::ended), is active again (a world that
    /// leaves a coflow out while it waits, and takes it back): its bytes leave the tally.
    pub fn resumed(&mut self, coflow: CoflowId) {
        if let Some(before) = self.ended.remove(&coflow) {
            let Some(k) = self.known.get(&coflow) else {
                return;
            };
            if let Some(d) = self.dags.get_mut(&k.external) {
                d.finished_bytes -= before;
            }
        }
    }

    /// Coflow `coflow` is gone for good (unregistered; report its bytes with
    /// [`ended`](DagIds::ended) first). Once every coflow of its DAG is gone, the DAG and its
    /// coflows are forgotten: [`pos`](DagIds::pos) no longer knows them and a later child
    /// naming one of them is an unknown parent. Unknown coflows and repeats are ignored.
    pub fn forget(&mut self, coflow: CoflowId) {
        let Some(k) = self.known.get_mut(&coflow) else {
            return;
        };
        if k.gone {
            return;
        }
        k.gone = true;
        let external = k.external;
        let Some(d) = self.dags.get_mut(&external) else {
            return;
        };
        d.gone += 1;
        if d.gone < d.members.len() {
            return;
        }
        let d = self.dags.remove(&external).expect("just seen");
        for m in d.members {
            self.known.remove(&m);
            self.ended.remove(&m);
        }
    }

    /// How many coflows and DAGs are remembered (for tests and bounds).
    pub fn remembered(&self) -> (usize, usize) {
        (self.known.len(), self.dags.len())
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

    /// Adversarial pass 33, B6: 500,000 registered and unregistered coflows grew the
    /// coordinator by ~200 bytes each for ever. A DAG is forgotten once all its coflows are.
    #[test]
    fn a_dag_is_forgotten_once_all_its_coflows_are_gone() {
        let mut ids = DagIds::new();
        for c in 0..10_000u64 {
            ids.assign(c, c as f64, &[]).unwrap();
            ids.ended(c, 1.0);
            ids.forget(c);
        }
        assert_eq!(ids.remembered(), (0, 0));
        // A chain 1 -> 2 -> 3: the parent gone, its DAG stays while a child lives, so a late
        // child still joins it and inherits its bytes.
        let mut ids = DagIds::new();
        ids.assign(1, 0.0, &[]).unwrap();
        ids.assign(2, 1.0, &[1]).unwrap();
        ids.ended(1, 5.0);
        ids.forget(1);
        ids.forget(1); // a repeat counts once
        let late = ids.assign(3, 2.0, &[1]).unwrap();
        assert_eq!(
            (late.external, late.internal, late.finished_bytes),
            (0, 1, 5.0)
        );
        ids.forget(2);
        assert_eq!(ids.remembered(), (3, 1), "coflow 3 still lives");
        ids.forget(3);
        assert_eq!(ids.remembered(), (0, 0));
        // Now DAG 0 is forgotten: a child naming coflow 1 is an unknown parent.
        assert_eq!(
            ids.assign(4, 3.0, &[1]),
            Err(DagError::UnknownParent {
                coflow: 4,
                parent: 1
            })
        );
        ids.resumed(1); // unknown: ignored, no panic
        ids.ended(1, 1.0);
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
