//! The simulator's side of DAG dependencies (`Coflow::parents`): it registers every coflow with
//! the shared Pseudocode 5 ([`DagIds`], which numbers the DAGs and tallies their finished bytes),
//! reports each coflow's end with the bytes it sent, and, for starts-after, holds a child until
//! its parents are done.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

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
    /// Arrived coflows waiting for a parent (starts-after): how many of its parents are still
    /// running, by index (0 for coflows not held).
    pending: Vec<usize>,
    /// Each coflow's held children waiting for it, by index (filled as children are held).
    waiters: Vec<Vec<usize>>,
    /// When each coflow was held (the order the held are released in), by index.
    held_seq: Vec<u64>,
    next_held_seq: u64,
    /// Held coflows whose last parent ended since the last [`DagBook::release`].
    unblocked: Vec<usize>,
    /// Coflows that ended since the last [`DagBook::release`] (reported by `refresh`).
    ended: Vec<usize>,
    /// Arrived coflows whose parents have ended, waiting out their compute: (ready at, the
    /// order they started computing in, index), earliest first.
    computing: BinaryHeap<Reverse<Computing>>,
    next_computing_seq: u64,
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
        let n = trace.coflows.len();
        Ok(Some(DagBook {
            ids,
            live: Vec::new(),
            parents,
            compute_s,
            pending: vec![0; n],
            waiters: vec![Vec::new(); n],
            held_seq: vec![0; n],
            next_held_seq: 0,
            unblocked: Vec::new(),
            ended: Vec::new(),
            computing: BinaryHeap::new(),
            next_computing_seq: 0,
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
        work(parents[ti].len());
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
                self.start_computing(at, ti);
                true
            }
            None => {
                // Wait for the parents still running: each one's end counts down `pending`.
                let parents = self.parents.as_ref().expect("held only under starts-after");
                for &q in &parents[ti] {
                    if outcomes[q].is_none() {
                        self.pending[ti] += 1;
                        self.waiters[q].push(ti);
                    }
                }
                self.held_seq[ti] = self.next_held_seq;
                self.next_held_seq += 1;
                true
            }
        }
    }

    fn start_computing(&mut self, at: f64, ti: usize) {
        self.computing.push(Reverse(Computing {
            at,
            seq: self.next_computing_seq,
            ti,
        }));
        self.next_computing_seq += 1;
    }

    /// Held coflows whose parents are all done and whose compute is over by `now`,
    /// last-arrived first (pop order). Those whose parents just ended start their compute.
    ///
    /// The work is in the coflows that ended and those released, not in all that wait
    /// (adversarial pass 34, C4: a scan of every held coflow on every event made a chain of
    /// 100,000 coflows take 40 s). The order is the one that scan gave: held coflows start
    /// their compute in the order they were held, and those released together come out in the
    /// order they started computing.
    pub(crate) fn release(&mut self, now: f64, outcomes: &[Option<CoflowOutcome>]) -> Vec<usize> {
        for q in std::mem::take(&mut self.ended) {
            for ti in std::mem::take(&mut self.waiters[q]) {
                work(1);
                self.pending[ti] -= 1;
                if self.pending[ti] == 0 {
                    self.unblocked.push(ti);
                }
            }
        }
        let mut unblocked = std::mem::take(&mut self.unblocked);
        unblocked.sort_unstable_by_key(|&ti| self.held_seq[ti]);
        for ti in unblocked {
            let at = self.ready_at(ti, outcomes).expect("its parents have ended");
            self.start_computing(at, ti);
        }
        let mut done = Vec::new();
        while let Some(Reverse(c)) = self.computing.peek() {
            if c.at > now {
                break;
            }
            work(1);
            done.push((c.seq, c.ti));
            self.computing.pop();
        }
        done.sort_unstable();
        let mut out: Vec<usize> = done.into_iter().map(|(_, ti)| ti).collect();
        for &ti in &out {
            self.released_at.push((ti, now));
        }
        out.reverse();
        out
    }

    /// The next time a held coflow's compute ends (an event of the replay), if any waits.
    pub(crate) fn next_release_s(&self) -> Option<f64> {
        self.computing.peek().map(|Reverse(c)| c.at)
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
        let (ids, ended) = (&mut self.ids, &mut self.ended);
        self.live.retain(|&ti| {
            if outcomes[ti].is_none() {
                return true;
            }
            let c = &trace.coflows[ti];
            ids.ended(c.id, c.bytes());
            ended.push(ti);
            false
        });
        if self.live.len() != before && !self.hidden {
            self.ids.place(active);
        }
    }
}

/// A coflow waiting out its compute: ordered by when it is ready, then by when it started
/// computing (ties released in that order, as [`DagBook::release`] promises).
#[derive(Debug, Clone, Copy)]
struct Computing {
    at: f64,
    seq: u64,
    ti: usize,
}

impl PartialEq for Computing {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Computing {}

impl PartialOrd for Computing {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Computing {
    fn cmp(&self, other: &Self) -> Ordering {
        self.at.total_cmp(&other.at).then(self.seq.cmp(&other.seq))
    }
}

#[cfg(test)]
thread_local! {
    /// Steps of the DAG bookkeeping in this thread (parents read, waits counted down, computes
    /// released): what the test of C4 counts instead of time.
    static WORK: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[inline]
fn work(_steps: usize) {
    #[cfg(test)]
    WORK.with(|w| w.set(w.get() + _steps as u64));
}

#[cfg(test)]
mod tests {
    use coflowkit_model::{Coflow, Fabric, Flow, Trace};
    use coflowkit_sched::policy::varys::{Varys, VarysConfig};

    use super::WORK;
    use crate::{simulate_with, Dependencies, SimOptions};

    fn chain(n: u64) -> Trace {
        let coflows = (1..=n)
            .map(|i| {
                let flow = Flow {
                    src: 0,
                    dst: 1,
                    bytes: 1000.0,
                };
                let mut c = Coflow::new(i, 0.0, vec![flow]);
                if i > 1 {
                    c.parents = vec![i - 1];
                }
                c
            })
            .collect();
        Trace { ports: 2, coflows }
    }

    fn work_for(trace: &Trace) -> u64 {
        WORK.with(|w| w.set(0));
        let opts = SimOptions {
            dependencies: Dependencies::StartsAfter,
            ..SimOptions::default()
        };
        let out = simulate_with(
            trace,
            &Fabric::uniform(2, 1e9),
            &mut Varys::new(VarysConfig::default()),
            &opts,
        )
        .expect("simulates");
        assert_eq!(out.coflows.len(), trace.coflows.len());
        WORK.with(|w| w.get())
    }

    /// Adversarial pass 34, C4: a chain of N coflows, each the previous one's child, took
    /// time quadratic in N (every event re-read every held coflow's parents). The bookkeeping
    /// is now a few steps per coflow: 4,000 coflows cost no more than a few per coflow (the
    /// scan took about N^2/2 = 8,000,000).
    #[test]
    fn a_long_chain_costs_steps_linear_in_its_length() {
        let small = work_for(&chain(1_000));
        let large = work_for(&chain(4_000));
        assert!(large <= 10 * 4_000, "{large} steps for a chain of 4,000");
        assert!(
            large <= 5 * small,
            "{small} steps for 1,000, {large} for 4,000"
        );
    }
}
