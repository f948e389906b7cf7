//! The simulation of policies that rate flows by port pair (`fair`, `wss`; see `PairPolicy`):
//! a pair's flows share its rate equally or in proportion to the bytes they have left, so the
//! state, the progress and the predicted completions are kept per pair, not per flow. Same
//! fluid model and events as the per-flow world: these policies decide at every completion.
//!
//! Why: fair decides at each of the FB trace's 43,767 flow-completion times, over tens of
//! thousands of active flows but about 15,000 active pairs; per flow, bringing bytes up to
//! date, grouping flows into pairs and predicting completions cost more than the water-filling
//! itself. Here a pair's progress is brought up to date only when its rate changes, and the
//! pairs' next completions wait in a heap. A decision after completions alone (weights only
//! went down, bytes left apart) hands the policy the pairs that lost flows, and a policy that
//! refills only what can change (`fair`, `wss`, see `Refill`) costs what changed. Arrivals
//! take whole decisions.
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
use coflowkit_sched::alloc::pair_index::{PairIndex, NONE};
use coflowkit_sched::alloc::Demand;
use coflowkit_sched::alloc::LevelAnswer;
use coflowkit_sched::{DecisionClock, PairRater, PairShare};

use crate::error::SimError;
use crate::outcome::{CoflowOutcome, SimOutput};
use port_clocks::Clocks;

mod clocked;
mod port_clocks;
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

/// A pair's predicted next completion; earliest first. Stale once the pair's `stamp` moved on.
#[derive(PartialEq)]
struct Due {
    at: f64,
    pair: u32,
    stamp: u32,
}

impl Eq for Due {}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at
            .total_cmp(&self.at)
            .then(other.pair.cmp(&self.pair))
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An (uplink, downlink) pair and its unfinished flows (none: closed, until compacted away).
struct Pair {
    src: u32,
    dst: u32,
    rate: f64,
    /// When `served` and `left` were last brought up to date.
    since: f64,
    /// Equal: bytes each flow of the pair got since the pair opened.
    served: f64,
    /// Remaining: bytes the pair's flows have left, and their sizes summed.
    left: f64,
    size: f64,
    members: BinaryHeap<Member>,
    /// Equal: the `end` of the flow at the head of `members`, kept beside it (a decision
    /// predicts thousands of pairs and would otherwise read each pair's heap).
    head_end: f64,
    /// Its flows changed since its prediction: it needs a new one even at the same rate.
    moved: bool,
}

impl Pair {
    fn new(src: u32, dst: u32, now: f64) -> Pair {
        Pair {
            src,
            dst,
            rate: 0.0,
            since: now,
            served: 0.0,
            left: 0.0,
            size: 0.0,
            members: BinaryHeap::new(),
            head_end: f64::INFINITY,
            moved: true,
        }
    }

    fn weight(&self, share: PairShare) -> f64 {
        match share {
            PairShare::Equal => self.members.len() as f64,
            PairShare::Remaining => self.left,
        }
    }

    /// What the flow at the head gets of the pair's rate.
    fn flow_rate(&self, share: PairShare) -> f64 {
        match share {
            PairShare::Equal => self.rate / self.members.len().max(1) as f64,
            PairShare::Remaining => self.rate,
        }
    }

    /// Bring progress up to `now` at the present rate (before the rate or the flows change).
    fn bring(&mut self, share: PairShare, now: f64) {
        let dt = now - self.since;
        if self.rate > 0.0 && dt > 0.0 {
            match share {
                PairShare::Equal => self.served += self.flow_rate(share) * dt,
                PairShare::Remaining => self.left = self.left_at(now),
            }
        }
        self.since = now;
    }

    /// Under `Remaining`: the bytes left at `now`, as [`Pair::bring`] would make them.
    fn left_at(&self, now: f64) -> f64 {
        let dt = now - self.since;
        if self.rate > 0.0 && dt > 0.0 {
            (self.left - self.rate * dt).max(0.0)
        } else {
            self.left
        }
    }

    /// Bytes the flow at the head has left as of `since` (under `Remaining`: the pair's).
    fn head_left(&self, share: PairShare) -> f64 {
        match share {
            PairShare::Equal if self.members.is_empty() => 0.0,
            PairShare::Equal => (self.head_end - self.served).max(0.0),
            PairShare::Remaining => self.left,
        }
    }

    /// When the head ends at the present rate (infinite: never).
    fn due(&self, share: PairShare) -> f64 {
        if self.rate > 0.0 && !self.members.is_empty() {
            self.since + self.head_left(share) / self.flow_rate(share)
        } else {
            f64::INFINITY
        }
    }

    /// End the flows done at `since` (due by `horizon`, or left with floating-point dust) at
    /// `flow_rate`, the rate each had; calls `done` with each one's coflow slot. Returns
    /// whether any ended.
    fn settle(&mut self, share: PairShare, horizon: f64, mut done: impl FnMut(u32)) -> bool {
        let flow_rate = self.flow_rate(share);
        let mut any = false;
        while let Some(head) = self.members.peek() {
            let left = self.head_left(share);
            let size = match share {
                PairShare::Equal => head.size,
                PairShare::Remaining => self.size,
            };
            let due = flow_rate > 0.0 && self.since + left / flow_rate <= horizon;
            if !(left <= size * DONE_FRACTION || due) {
                break;
            }
            any = true;
            match share {
                PairShare::Equal => {
                    done(self.members.pop().expect("a head").coflow);
                    self.head_end = self.members.peek().map_or(f64::INFINITY, |m| m.end);
                }
                PairShare::Remaining => {
                    self.members.drain().for_each(|m| done(m.coflow));
                    (self.left, self.size) = (0.0, 0.0);
                }
            }
        }
        any
    }
}

/// The pairs, found by `index` (dense or hashed by the fabric's size), their predictions, what the policy sees
/// of them, and the loads they put on the ports.
struct Pairs {
    share: PairShare,
    index: PairIndex,
    list: Vec<Pair>,
    /// Per pair: bumped at every new prediction, so older ones are stale (apart from `list`:
    /// the sweeps and pops read only these).
    stamps: Vec<u32>,
    /// Pairs in `list` without flows (positions stay put between whole decisions).
    closed: usize,
    due: BinaryHeap<Due>,
    /// The predictions one decision makes, before they go into `due`.
    fresh: Vec<Due>,
    /// A demand per pair, at the pair's position, and the rates the policy gave them.
    demands: Vec<Demand>,
    rates: Vec<f64>,
    up: Vec<f64>,
    down: Vec<f64>,
    /// Equal share: progress and predictions by the bottlenecks' virtual clocks (`clocked`);
    /// `due` and each pair's `rate`-based progress stay unused for prediction.
    clocks: Option<Clocks>,
}

impl Pairs {
    /// A flow of `bytes` from `coflow` joins its pair at `now`. Flows left there with dust end
    /// first (through `done`): under `Remaining` they would otherwise wait for the newcomer.
    fn join(
        &mut self,
        now: f64,
        src: u32,
        dst: u32,
        bytes: f64,
        coflow: u32,
        done: impl FnMut(u32),
    ) {
        let mut i = self.index.get(src, dst);
        if i == NONE {
            i = self.list.len() as u32;
            self.index.set(src, dst, i);
            self.list.push(Pair::new(src, dst, now));
            self.stamps.push(0);
        } else if self.list[i as usize].members.is_empty() {
            self.closed -= 1;
        }
        self.detach(i as usize, now);
        let p = &mut self.list[i as usize];
        p.bring(self.share, now);
        p.settle(self.share, now, done);
        if p.members.is_empty() {
            (p.served, p.left, p.size) = (0.0, 0.0, 0.0);
        }
        p.members.push(Member {
            end: p.served + bytes,
            size: bytes,
            coflow,
        });
        p.head_end = p.members.peek().map_or(f64::INFINITY, |m| m.end);
        p.left += bytes;
        p.size += bytes;
        p.moved = true;
    }

    fn open(&self) -> bool {
        self.list.len() > self.closed
    }

    /// The earliest current prediction, dropping stale ones.
    fn next_due(&mut self) -> Option<f64> {
        if let Some(clocks) = &mut self.clocks {
            return Pairs::next_due_clocked(clocks, &self.stamps);
        }
        while let Some(d) = self.due.peek() {
            if self.stamps[d.pair as usize] == d.stamp {
                return Some(d.at);
            }
            self.due.pop();
        }
        None
    }

    /// End the flows due by `horizon` at `now`; the pairs that lost flows go into `lowered`.
    fn complete(
        &mut self,
        now: f64,
        horizon: f64,
        lowered: &mut Vec<u32>,
        mut done: impl FnMut(u32),
    ) {
        if self.clocks.is_some() {
            return self.complete_clocked(now, horizon, lowered, done);
        }
        while let Some(d) = self.due.peek() {
            if d.at > horizon {
                break;
            }
            let d = self.due.pop().expect("peeked");
            if self.stamps[d.pair as usize] != d.stamp {
                continue;
            }
            if !self.end(d.pair, now, horizon, lowered, &mut done) {
                // Rounding put it a hair later than predicted: predict again.
                let at = self.list[d.pair as usize].due(self.share);
                self.due.push(Due { at, ..d });
            }
        }
    }

    /// End the flows of pair `i` due by `horizon` at `now`. Returns whether any ended.
    fn end(
        &mut self,
        i: u32,
        now: f64,
        horizon: f64,
        lowered: &mut Vec<u32>,
        done: impl FnMut(u32),
    ) -> bool {
        let p = &mut self.list[i as usize];
        p.bring(self.share, now);
        if !p.settle(self.share, horizon, done) {
            return false;
        }
        p.moved = true;
        lowered.push(i);
        self.closed += p.members.is_empty() as usize;
        true
    }

    /// Bring every pair to `now`, end the flows left with dust, drop the closed pairs and
    /// the predictions (positions change): a whole decision follows.
    fn compact(&mut self, now: f64, mut done: impl FnMut(u32)) {
        self.detach_all(now);
        let share = self.share;
        let mut i = 0;
        while i < self.list.len() {
            let p = &mut self.list[i];
            p.bring(share, now);
            p.settle(share, now, &mut done);
            p.moved = true;
            p.rate = 0.0; // the loads start again from 0 too
            if !p.members.is_empty() {
                i += 1;
                continue;
            }
            self.index.set(p.src, p.dst, NONE);
            self.list.swap_remove(i);
            self.stamps.swap_remove(i);
            if let Some(moved) = self.list.get(i) {
                self.index.set(moved.src, moved.dst, i as u32);
            }
        }
        self.closed = 0;
        self.due.clear();
        self.demands.clear();
        self.demands.extend(self.list.iter().map(|p| Demand {
            src: p.src,
            dst: p.dst,
            weight: p.weight(share),
        }));
        self.rates.clear();
        self.rates.resize(self.list.len(), 0.0);
        if let Some(clocks) = &mut self.clocks {
            clocks.clear(self.list.len());
        }
        self.up.fill(0.0);
        self.down.fill(0.0);
    }

    /// The demands' weights as of `now` for a refill after the flows of `lowered` ended:
    /// theirs, and under `Remaining` every pair's (bytes left drain between decisions).
    fn reweigh(&mut self, now: f64, lowered: &[u32]) {
        match self.share {
            PairShare::Equal => {
                for &i in lowered {
                    self.demands[i as usize].weight = self.list[i as usize].weight(self.share);
                }
            }
            PairShare::Remaining => {
                for (d, p) in self.demands.iter_mut().zip(&self.list) {
                    d.weight = p.left_at(now);
                }
            }
        }
    }

    /// Take the rates the policy wrote at `positions` (all when `None`): each pair moves on
    /// at its old rate up to `now`, then gets its new rate and prediction. Errs with the
    /// first invalid rate.
    fn take_rates(&mut self, now: f64, positions: Option<&[u32]>) -> Result<(), f64> {
        let whole = positions.is_none();
        let all = 0..self.list.len() as u32;
        let positions: &mut dyn Iterator<Item = u32> = match positions {
            Some(ps) => &mut ps.iter().copied(),
            None => &mut all.into_iter(),
        };
        let mut fresh = std::mem::take(&mut self.fresh);
        fresh.clear();
        let mut out = Ok(());
        for i in positions {
            let (p, rate) = (&mut self.list[i as usize], self.rates[i as usize]);
            if !(rate >= 0.0 && rate.is_finite()) {
                out = Err(rate);
                break;
            }
            if rate == p.rate && !p.moved {
                continue;
            }
            p.bring(self.share, now);
            self.up[p.src as usize] += rate - p.rate;
            self.down[p.dst as usize] += rate - p.rate;
            p.rate = rate;
            p.moved = false;
            self.stamps[i as usize] += 1;
            let at = p.due(self.share);
            if at.is_finite() {
                fresh.push(Due {
                    at,
                    pair: i,
                    stamp: self.stamps[i as usize],
                });
            }
        }
        if whole {
            // Every prediction is new (`compact` dropped the old): one heapify.
            self.due = BinaryHeap::from(std::mem::take(&mut fresh));
        } else {
            // One push each: `extend` rebuilds the whole heap for a batch this size.
            for d in fresh.drain(..) {
                self.due.push(d);
            }
            // Replaced predictions wait in the heap until they come up: sweep them once the
            // heap is four times the pairs (amortized O(1) each; at twice, fair's sweeps cost
            // 4 % more time on FB, at eight times no less).
            if self.due.len() > 4 * self.list.len().max(1024) {
                let mut due = std::mem::take(&mut self.due);
                due.retain(|d| self.stamps[d.pair as usize] == d.stamp);
                self.due = due;
            }
        }
        self.fresh = fresh;
        out
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

/// Replay `trace` (coflows admitted in `order`) under a pair-rated policy. The clock hands
/// out a [`PairRater`] only to policies that decide on every event, so every event here is a
/// decision: a whole fill or a refill.
pub(crate) fn simulate(
    trace: &Trace,
    fabric: &Fabric,
    order: &[usize],
    name: String,
    mut rater: PairRater<'_>,
    mut clock: DecisionClock,
    started: Instant,
) -> Result<SimOutput, SimError> {
    let share = rater.share();
    let ports = fabric.ports();
    let mut pairs = Pairs {
        share,
        index: PairIndex::new(ports),
        list: Vec::new(),
        stamps: Vec::new(),
        closed: 0,
        due: BinaryHeap::new(),
        fresh: Vec::new(),
        demands: Vec::new(),
        rates: Vec::new(),
        up: vec![0.0; ports],
        down: vec![0.0; ports],
        clocks: (share == PairShare::Equal).then(|| Clocks::new(2 * ports)),
    };
    let mut book = Book {
        trace,
        fabric,
        metas: Vec::new(),
        outcomes: vec![None; trace.coflows.len()],
        makespan: 0.0,
    };
    let mut lowered: Vec<u32> = Vec::new();
    let mut next = 0usize;
    let mut now = 0.0f64;
    // Whether `now` is a completion event (flows due by its horizon end with it).
    let mut event = false;

    loop {
        if event {
            let horizon = same_time(now);
            pairs.complete(now, horizon, &mut lowered, |slot| book.finish(slot, now));
        }
        let mut arrived = false;
        while let Some(&ti) = order.get(next) {
            let c = &trace.coflows[ti];
            if c.arrival_s > now {
                break;
            }
            next += 1;
            arrived = true;
            let running = c.flows.iter().filter(|f| f.bytes > 0.0).count();
            let slot = book.admit(ti, running, now);
            for f in c.flows.iter().filter(|f| f.bytes > 0.0) {
                pairs.join(now, f.src, f.dst, f.bytes, slot, |s| book.finish(s, now));
            }
        }
        let next_arrival = order
            .get(next)
            .map_or(f64::INFINITY, |&ti| trace.coflows[ti].arrival_s);
        if !pairs.open() {
            pairs.compact(now, |_| unreachable!("no flows left"));
            lowered.clear();
            if next_arrival.is_infinite() {
                break;
            }
            (now, event) = (next_arrival, false);
            continue;
        }

        // A whole decision on arrivals (weights went up) and when closed pairs pile up;
        // otherwise only the pairs that lost flows changed (and bytes left drained).
        let whole = arrived || 2 * pairs.closed > pairs.list.len();
        let hint = if whole {
            pairs.compact(now, |slot| book.finish(slot, now));
            None
        } else {
            pairs.reweigh(now, &lowered);
            Some(&lowered[..])
        };
        let (demands, rates) = (&pairs.demands, &mut pairs.rates);
        let taken = if pairs.clocks.is_some() {
            match rater.answer_levels(fabric, demands, hint, rates, now) {
                Some(LevelAnswer::Levels(levels)) => {
                    pairs.relevel(now, levels);
                    Ok(())
                }
                Some(LevelAnswer::Whole { bottleneck, level }) => {
                    pairs.take_rates_clocked(now, None, bottleneck, level)
                }
                Some(LevelAnswer::Refilled {
                    changed,
                    bottleneck,
                    level,
                }) => pairs.take_rates_clocked(now, Some(changed), bottleneck, level),
                None => unreachable!("clocks are kept under an equal share only"),
            }
        } else {
            let changed = rater.answer(fabric, demands, hint, rates, now);
            pairs.take_rates(now, changed)
        };
        lowered.clear();
        clock.decided_by_pairs(now);
        if let Err(rate) = taken {
            return Err(SimError::BadRate {
                scheduler: name,
                time_s: now,
                rate,
            });
        }
        check_capacity(&name, now, fabric, &pairs.up, &pairs.down)?;

        match pairs.next_due() {
            Some(t) if t <= next_arrival => (now, event) = (t, true),
            _ if next_arrival.is_finite() => (now, event) = (next_arrival, false),
            _ => {
                return Err(SimError::Stalled {
                    scheduler: name,
                    time_s: now,
                    flows: pairs.flows(),
                })
            }
        }
    }
    Ok(SimOutput {
        scheduler: name,
        coflows: book.outcomes.into_iter().flatten().collect(),
        decisions: clock.counts().decisions,
        redistributions: 0,
        makespan_s: book.makespan,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use coflowkit_model::{Coflow, Fabric, Flow, Trace};
    use coflowkit_sched::{build, SchedOptions, SchedulerKind};

    use crate::engine::{simulate_with, SimError, SimOptions};

    fn run(
        kind: SchedulerKind,
        trace: &Trace,
        fabric: &Fabric,
        per_flow: bool,
    ) -> Result<Vec<f64>, SimError> {
        let opts = SimOptions {
            per_flow,
            ..Default::default()
        };
        let out = simulate_with(
            trace,
            fabric,
            build(kind, &SchedOptions::default()).as_mut(),
            &opts,
        )?;
        Ok(out.coflows.iter().map(|c| c.cct_s).collect())
    }

    fn flow(src: u32, dst: u32, bytes: f64) -> Flow {
        Flow { src, dst, bytes }
    }

    #[test]
    fn flows_that_join_a_running_pair_share_it_from_then_on() {
        // fair on one pair of unit ports: A (4 bytes) alone for 1 s, then B (1 byte) joins:
        // each gets 1/2, B ends at 3 (A has 2 left), A alone again ends at 5. wss splits by
        // bytes left (3 : 1), so both end together at 1 + 4 = 5.
        let trace = Trace {
            ports: 2,
            coflows: vec![
                Coflow::new(1, 0.0, vec![flow(0, 1, 4.0)]),
                Coflow::new(2, 1.0, vec![flow(0, 1, 1.0)]),
            ],
        };
        let fabric = Fabric::uniform(2, 1.0);
        assert_eq!(
            run(SchedulerKind::Fair, &trace, &fabric, false).unwrap(),
            vec![5.0, 2.0]
        );
        assert_eq!(
            run(SchedulerKind::Wss, &trace, &fabric, false).unwrap(),
            vec![5.0, 4.0]
        );
    }

    #[test]
    fn a_pair_on_a_port_without_capacity_stalls_in_both_worlds() {
        let trace = Trace {
            ports: 2,
            coflows: vec![Coflow::new(1, 0.0, vec![flow(0, 1, 1.0)])],
        };
        let fabric = Fabric {
            up_bytes_per_s: vec![0.0, 1.0],
            down_bytes_per_s: vec![1.0, 1.0],
        };
        for kind in [SchedulerKind::Fair, SchedulerKind::Wss] {
            for per_flow in [false, true] {
                let err = run(kind, &trace, &fabric, per_flow).expect_err("nothing can move");
                assert!(
                    matches!(err, SimError::Stalled { flows: 1, .. }),
                    "{kind} per_flow={per_flow}: {err}"
                );
            }
        }
    }
}
