//! The pair world's progress and predictions under an equal share, by virtual clocks per
//! bottleneck resource ([`super::port_clocks`]): what [`Pairs`] does per pair under `wss`, done
//! per resource where max-min allows.

use super::port_clocks::{Clock, Clocks, VirtualDue, NO_CLOCK};
use super::Pairs;
use crate::world::DONE_FRACTION;
use coflowkit_sched::alloc::NO_BOTTLENECK;

/// A clock's heap is swept of stale predictions once it holds this many times its pairs.
const SWEEP_FACTOR: usize = 4;

impl Pairs {
    /// Take pair `i` off its clock at `now` (its bytes served kept in `served`): its flows are
    /// about to change outside a decision (an arrival; a whole decision follows).
    pub(super) fn detach(&mut self, i: usize, now: f64) {
        let Some(clocks) = &mut self.clocks else {
            return;
        };
        let Some(&c) = clocks.on.get(i) else {
            return; // a pair new since the last whole decision
        };
        if c == NO_CLOCK {
            return;
        }
        let clock = &mut clocks.list[c as usize];
        let p = &mut self.list[i];
        p.served = clock.v_at(now) - clocks.offset[i];
        p.since = now;
        clock.members -= 1;
        clocks.on[i] = NO_CLOCK;
        self.stamps[i] += 1;
    }

    /// Every pair off its clock: a whole decision follows.
    pub(super) fn detach_all(&mut self, now: f64) {
        if self.clocks.is_some() {
            for i in 0..self.list.len() {
                self.detach(i, now);
            }
        }
    }

    /// The earliest current prediction over the clocks, dropping stale ones.
    pub(super) fn next_due_clocked(clocks: &mut Clocks, stamps: &[u32]) -> Option<f64> {
        let mut best = f64::INFINITY;
        for clock in &mut clocks.list {
            while let Some(d) = clock.due.peek() {
                if stamps[d.pair as usize] == d.stamp {
                    best = best.min(clock.time_of(d.at));
                    break;
                }
                clock.due.pop();
            }
        }
        best.is_finite().then_some(best)
    }

    /// End the flows due by `horizon` at `now`, clock by clock; the pairs that lost flows go
    /// into `lowered`.
    pub(super) fn complete_clocked(
        &mut self,
        now: f64,
        horizon: f64,
        lowered: &mut Vec<u32>,
        mut done: impl FnMut(u32),
    ) {
        let mut clocks = self.clocks.take().expect("clocked");
        for c in 0..clocks.list.len() {
            loop {
                let clock = &mut clocks.list[c];
                let Some(d) = clock.due.peek() else { break };
                if self.stamps[d.pair as usize] != d.stamp {
                    clock.due.pop();
                    continue;
                }
                if clock.time_of(d.at) > horizon {
                    break;
                }
                let d = clock.due.pop().expect("peeked");
                self.end_clocked(&mut clocks, d.pair, now, horizon, lowered, &mut done);
            }
        }
        self.clocks = Some(clocks);
    }

    /// End the flows of pair `i` due by `horizon` (at least its head, whose prediction came
    /// due) and predict its next.
    fn end_clocked(
        &mut self,
        clocks: &mut Clocks,
        i: u32,
        now: f64,
        horizon: f64,
        lowered: &mut Vec<u32>,
        mut done: impl FnMut(u32),
    ) {
        let (p, offset) = (&mut self.list[i as usize], clocks.offset[i as usize]);
        let clock = &mut clocks.list[clocks.on[i as usize] as usize];
        p.served = clock.v_at(now) - offset;
        p.since = now;
        let mut first = true;
        while let Some(head) = p.members.peek() {
            let left = (p.head_end - p.served).max(0.0);
            let due = clock.time_of(p.head_end + offset) <= horizon;
            if !(first || due || left <= head.size * DONE_FRACTION) {
                break;
            }
            first = false;
            done(p.members.pop().expect("a head").coflow);
            p.head_end = p.members.peek().map_or(f64::INFINITY, |m| m.end);
        }
        lowered.push(i);
        if p.members.is_empty() {
            self.closed += 1;
        } else {
            self.stamps[i as usize] += 1;
            let at = p.head_end + offset;
            push(clock, at, i, self.stamps[i as usize], &self.stamps);
        }
    }

    /// Take the rates and bottlenecks the policy gave the pairs at `positions` (all when
    /// `None`, and then the ports' loads): a pair moves to its bottleneck's clock, which runs at its new level from `now`
    /// on. A pair that stays on its clock is not touched, whatever its clock's level does.
    /// Errs with the first invalid rate.
    pub(super) fn take_rates_clocked(
        &mut self,
        now: f64,
        positions: Option<&[u32]>,
        bottleneck: &[u32],
        level: &[f64],
    ) -> Result<(), f64> {
        let mut clocks = self.clocks.take().expect("clocked");
        let all: Vec<u32>;
        let whole = positions.is_none();
        let positions = match positions {
            Some(ps) => ps,
            None => {
                // Every pair is rated afresh: the loads are summed again (the policy checks
                // capacity in the answers between, which move levels, not rates).
                self.up.fill(0.0);
                self.down.fill(0.0);
                all = (0..self.list.len() as u32).collect();
                &all
            }
        };
        clocks.begin();
        for &i in positions {
            let c = clocks.on[i as usize];
            if c != NO_CLOCK {
                clocks.tally(c);
            }
        }
        clocks.tallied();
        let mut out = Ok(());
        for &i in positions {
            let i = i as usize;
            let rate = self.rates[i];
            if !(rate >= 0.0 && rate.is_finite()) {
                out = Err(rate);
                break;
            }
            if whole {
                let d = self.demands[i];
                self.up[d.src as usize] += rate;
                self.down[d.dst as usize] += rate;
            }
            let at = bottleneck[i];
            let mut target = if at == NO_BOTTLENECK {
                NO_CLOCK
            } else {
                clocks.target(at, level[i], now)
            };
            let from = clocks.on[i];
            if target == from {
                continue;
            }
            let p = &mut self.list[i];
            if p.members.is_empty() {
                target = NO_CLOCK; // closed (it has no weight, so no bottleneck either)
            }
            // Bytes served as of `now`: the old clock's time at `now` is the same before and
            // after it took a new level.
            if from != NO_CLOCK {
                let old = &mut clocks.list[from as usize];
                p.served = old.v_at(now) - clocks.offset[i];
                p.since = now;
                old.members -= 1;
            }
            clocks.on[i] = target;
            self.stamps[i] += 1;
            if target == NO_CLOCK {
                continue;
            }
            let clock = &mut clocks.list[target as usize];
            clock.members += 1;
            clocks.offset[i] = clock.v_at(now) - p.served;
            let due = p.head_end + clocks.offset[i];
            push(clock, due, i as u32, self.stamps[i], &self.stamps);
        }
        clocks.end();
        self.clocks = Some(clocks);
        out
    }
}

/// Predict pair `pair`'s head to end at virtual time `at` on `clock`; sweep the clock's stale
/// predictions once they pile up (amortized O(1) each).
fn push(clock: &mut Clock, at: f64, pair: u32, stamp: u32, stamps: &[u32]) {
    clock.due.push(VirtualDue { at, pair, stamp });
    if clock.due.len() > SWEEP_FACTOR * (clock.members as usize).max(16) {
        clock.due.retain(|d| stamps[d.pair as usize] == d.stamp);
    }
}

impl Pairs {
    /// The policy's answer by levels alone: each resource's clock runs at its new level from
    /// `now` on; no pair is touched (the pairs' rates and the ports' loads stay as the last
    /// whole answer left them; the policy checked capacity).
    pub(super) fn relevel(&mut self, now: f64, levels: &[(u32, f64)]) {
        let clocks = self.clocks.as_mut().expect("clocked");
        for &(r, level) in levels {
            clocks.relevel(r, level, now);
        }
    }
}
