//! The simulation of policies that rate flows by port pair (`fair`, `wss`; see `PairPolicy`):
//! a pair's flows share its rate equally or in proportion to the bytes they have left, so the
//! state, the progress and the predicted completions are kept per pair, not per flow. Same
//! fluid model and events as the per-flow world: these policies decide at every completion.
//!
//! Why: fair decides at each of the FB trace's 43,767 flow-completion times, over tens of
//! thousands of active flows but a few thousand active pairs; per flow, bringing bytes up to
//! date, grouping flows into pairs and predicting completions cost more than the water-filling
//! itself. Here a decision costs O(pairs) and a flow costs O(log flows of its pair) once.
//!
//! Equal share: each flow of a pair gets the same rate, so the pair counts the bytes each of
//! its flows got since it opened (`served`); a flow ends when that reaches its own `end`
//! (what was served when it joined, plus its size). Remaining share: the flows of a pair
//! finish together (each gets its bytes left over the pair's, times the pair's rate), so the
//! pair is one flow of its summed bytes left.
//!
//! The per-flow world stays the reference (`SimOptions::per_flow`); tests hold the two to the
//! same CCTs.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Instant;

use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::alloc::Demand;
use coflowkit_sched::{PairPolicy, PairShare};

use crate::engine::SimError;
use crate::outcome::{CoflowOutcome, SimOutput};
use crate::world::{check_capacity, finish_flow, outcome, same_time, Meta, DONE_FRACTION};

/// A flow in its pair, earliest `end` first. Under `Remaining` only `size` and `coflow` count.
#[derive(PartialEq)]
struct Member {
    end: f64,
    size: f64,
    /// The coflow's admission slot.
    coflow: u32,
}

impl Eq for Member {}

impl Ord for Member {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .end
            .total_cmp(&self.end)
            .then(other.coflow.cmp(&self.coflow))
    }
}

impl PartialOrd for Member {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An (uplink, downlink) pair with unfinished flows.
struct Pair {
    src: u32,
    dst: u32,
    /// Equal: bytes each flow of the pair got since the pair opened.
    served: f64,
    /// Remaining: bytes the pair's flows have left, and their sizes summed.
    left: f64,
    size: f64,
    members: BinaryHeap<Member>,
    rate: f64,
}

impl Pair {
    fn new(src: u32, dst: u32) -> Pair {
        Pair {
            src,
            dst,
            served: 0.0,
            left: 0.0,
            size: 0.0,
            members: BinaryHeap::new(),
            rate: 0.0,
        }
    }

    fn weight(&self, share: PairShare) -> f64 {
        match share {
            PairShare::Equal => self.members.len() as f64,
            PairShare::Remaining => self.left,
        }
    }

    /// What each flow gets of the pair's rate, for the flow at the head.
    fn flow_rate(&self, share: PairShare) -> f64 {
        match share {
            PairShare::Equal => self.rate / self.members.len() as f64,
            PairShare::Remaining => self.rate,
        }
    }

    /// Bytes the flow at the head has left (under `Remaining`: all of the pair's).
    fn head_left(&self, share: PairShare) -> f64 {
        match share {
            PairShare::Equal => self
                .members
                .peek()
                .map_or(0.0, |m| (m.end - self.served).max(0.0)),
            PairShare::Remaining => self.left,
        }
    }

    /// Whether the head is done at `now`: due by `horizon`, or left with floating-point dust.
    fn head_done(&self, share: PairShare, now: f64, horizon: f64, flow_rate: f64) -> bool {
        let Some(head) = self.members.peek() else {
            return false;
        };
        let left = self.head_left(share);
        let size = match share {
            PairShare::Equal => head.size,
            PairShare::Remaining => self.size,
        };
        left <= size * DONE_FRACTION || (flow_rate > 0.0 && now + left / flow_rate <= horizon)
    }

    /// Move `dt` seconds on at the pair's rate.
    fn advance(&mut self, share: PairShare, dt: f64) {
        if self.rate <= 0.0 {
            return;
        }
        match share {
            PairShare::Equal => self.served += self.flow_rate(share) * dt,
            PairShare::Remaining => self.left = (self.left - self.rate * dt).max(0.0),
        }
    }
}

/// The pairs with unfinished flows, found by `index[src * ports + dst]`.
struct Pairs {
    share: PairShare,
    ports: usize,
    index: Vec<u32>,
    list: Vec<Pair>,
    synced_at: f64,
}

const NONE: u32 = u32::MAX;

impl Pairs {
    fn join(&mut self, src: u32, dst: u32, bytes: f64, coflow: u32) {
        let k = src as usize * self.ports + dst as usize;
        if self.index[k] == NONE {
            self.index[k] = self.list.len() as u32;
            self.list.push(Pair::new(src, dst));
        }
        let p = &mut self.list[self.index[k] as usize];
        p.members.push(Member {
            end: p.served + bytes,
            size: bytes,
            coflow,
        });
        p.left += bytes;
        p.size += bytes;
    }

    fn sync(&mut self, now: f64) {
        let dt = now - self.synced_at;
        if dt > 0.0 {
            for p in &mut self.list {
                p.advance(self.share, dt);
            }
        }
        self.synced_at = now;
    }

    /// End the flows done at `now` (those due by `horizon`, and dust), calling `done` with
    /// each one's coflow slot; pairs left empty close.
    fn settle(&mut self, now: f64, horizon: f64, mut done: impl FnMut(u32)) {
        let share = self.share;
        let mut i = 0;
        while i < self.list.len() {
            let p = &mut self.list[i];
            // The rate each flow had since the decision: fixed while the pair empties.
            let flow_rate = p.flow_rate(share);
            while p.head_done(share, now, horizon, flow_rate) {
                match share {
                    PairShare::Equal => {
                        let m = p.members.pop().expect("a head");
                        done(m.coflow);
                    }
                    PairShare::Remaining => {
                        for m in p.members.drain() {
                            done(m.coflow);
                        }
                        p.left = 0.0;
                        p.size = 0.0;
                    }
                }
            }
            if !p.members.is_empty() {
                i += 1;
                continue;
            }
            let k = p.src as usize * self.ports + p.dst as usize;
            self.index[k] = NONE;
            self.list.swap_remove(i);
            if let Some(moved) = self.list.get(i) {
                self.index[moved.src as usize * self.ports + moved.dst as usize] = i as u32;
            }
        }
    }

    fn flows(&self) -> usize {
        self.list.iter().map(|p| p.members.len()).sum()
    }
}

/// The admitted coflows and the outcomes of those done.
struct Book<'a> {
    trace: &'a Trace,
    fabric: &'a Fabric,
    /// By admission slot.
    metas: Vec<Meta>,
    outcomes: Vec<Option<CoflowOutcome>>,
    makespan: f64,
}

impl Book<'_> {
    /// Admit trace coflow `ti` with `running` flows to move; returns its slot.
    fn admit(&mut self, ti: usize, running: usize, now: f64) -> u32 {
        let slot = self.metas.len() as u32;
        let flows = self.trace.coflows[ti].flows.len();
        self.metas.push(Meta::new(ti, running, flows));
        if running == 0 {
            self.record(slot, now);
        }
        slot
    }

    fn finish(&mut self, slot: u32, now: f64) {
        let m = &mut self.metas[slot as usize];
        finish_flow(m, now - self.trace.coflows[m.trace_index].arrival_s);
        if m.unfinished == 0 {
            self.record(slot, now);
        }
    }

    fn record(&mut self, slot: u32, now: f64) {
        let m = &self.metas[slot as usize];
        self.outcomes[m.trace_index] = Some(outcome(self.trace, self.fabric, m, now));
        self.makespan = self.makespan.max(now);
    }
}

/// Replay `trace` (coflows admitted in `order`) under a pair-rated policy.
pub(crate) fn simulate(
    trace: &Trace,
    fabric: &Fabric,
    order: &[usize],
    name: String,
    policy: &mut dyn PairPolicy,
    started: Instant,
) -> Result<SimOutput, SimError> {
    let share = policy.share();
    let ports = fabric.ports();
    let mut pairs = Pairs {
        share,
        ports,
        index: vec![NONE; ports * ports],
        list: Vec::new(),
        synced_at: 0.0,
    };
    let mut book = Book {
        trace,
        fabric,
        metas: Vec::new(),
        outcomes: vec![None; trace.coflows.len()],
        makespan: 0.0,
    };
    let (mut demands, mut rates) = (Vec::new(), Vec::new());
    let (mut up, mut down) = (vec![0.0; ports], vec![0.0; ports]);
    let mut next = 0usize;
    let mut now = 0.0f64;
    let mut decisions = 0u64;
    // Whether `now` is a completion event: then flows due by its horizon end with it.
    let mut event = false;

    loop {
        pairs.sync(now);
        let horizon = if event { same_time(now) } else { now };
        pairs.settle(now, horizon, |slot| book.finish(slot, now));
        while let Some(&ti) = order.get(next) {
            let c = &trace.coflows[ti];
            if c.arrival_s > now {
                break;
            }
            next += 1;
            let running = c.flows.iter().filter(|f| f.bytes > 0.0).count();
            let slot = book.admit(ti, running, now);
            for f in c.flows.iter().filter(|f| f.bytes > 0.0) {
                pairs.join(f.src, f.dst, f.bytes, slot);
            }
        }
        let next_arrival = order
            .get(next)
            .map_or(f64::INFINITY, |&ti| trace.coflows[ti].arrival_s);
        if pairs.list.is_empty() {
            if next_arrival.is_infinite() {
                break;
            }
            (now, event) = (next_arrival, false);
            continue;
        }

        demands.clear();
        demands.extend(pairs.list.iter().map(|p| Demand {
            src: p.src,
            dst: p.dst,
            weight: p.weight(share),
        }));
        rates.clear();
        rates.resize(demands.len(), 0.0);
        policy.allocate_pairs(fabric, &demands, &mut rates);
        decisions += 1;

        up.fill(0.0);
        down.fill(0.0);
        let mut first = f64::INFINITY;
        for (p, &rate) in pairs.list.iter_mut().zip(&rates) {
            if !(rate >= 0.0 && rate.is_finite()) {
                return Err(SimError::BadRate {
                    scheduler: name,
                    time_s: now,
                    rate,
                });
            }
            p.rate = rate;
            if rate > 0.0 {
                up[p.src as usize] += rate;
                down[p.dst as usize] += rate;
                first = first.min(now + p.head_left(share) / p.flow_rate(share));
            }
        }
        check_capacity(&name, now, fabric, &up, &down)?;

        if first <= next_arrival {
            (now, event) = (first, true);
        } else if next_arrival.is_finite() {
            (now, event) = (next_arrival, false);
        } else {
            return Err(SimError::Stalled {
                scheduler: name,
                time_s: now,
                flows: pairs.flows(),
            });
        }
    }
    Ok(SimOutput {
        scheduler: name,
        coflows: book.outcomes.into_iter().flatten().collect(),
        decisions,
        makespan_s: book.makespan,
        wall_s: started.elapsed().as_secs_f64(),
    })
}
