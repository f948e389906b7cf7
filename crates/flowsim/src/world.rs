//! The simulation state between decisions: active coflows with their flows and rates, the
//! predicted completions, and the outcomes of the coflows that are done.

use std::collections::BinaryHeap;

use coflowkit_model::bins::Bin;
use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::{CoflowState, DecisionClock, Handed, Rates, Scheduler, Snapshot};

use crate::error::SimError;
use crate::outcome::CoflowOutcome;

/// A flow with at most this fraction of its size left is finished (floating-point dust).
pub(crate) const DONE_FRACTION: f64 = 1e-9;
/// Capacity may be exceeded by this fraction before it is called a violation.
const CAPACITY_SLACK: f64 = 1e-9;

/// Per active coflow bookkeeping the scheduler does not see.
pub(crate) struct Meta {
    pub(crate) trace_index: usize,
    pub(crate) unfinished: usize,
    pub(crate) fct_sum: f64,
    pub(crate) fct_min: f64,
    pub(crate) fct_max: f64,
}

impl Meta {
    /// A coflow just admitted with `running` of its `flows` flows to move (the others are
    /// empty and count as done at arrival).
    pub(crate) fn new(trace_index: usize, running: usize, flows: usize) -> Meta {
        Meta {
            trace_index,
            unfinished: running,
            fct_sum: 0.0,
            fct_min: if running < flows { 0.0 } else { f64::INFINITY },
            fct_max: 0.0,
        }
    }
}

/// A flow's predicted completion at the current rates; ordered by time (earliest first).
#[derive(PartialEq)]
pub(crate) struct Due {
    pub(crate) at: f64,
    pub(crate) coflow: u32,
    pub(crate) flow: u32,
}

impl Eq for Due {}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .at
            .total_cmp(&self.at)
            .then(other.coflow.cmp(&self.coflow))
            .then(other.flow.cmp(&self.flow))
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Completions this close to each other (relative) are one event: floating-point dust between
/// flows that a policy means to finish together (MADD) must not cost a decision each.
pub(crate) const SAME_TIME: f64 = 1e-9;

/// The last instant that counts as the same event as `t`.
pub(crate) fn same_time(t: f64) -> f64 {
    t + SAME_TIME * t.abs().max(1.0)
}

/// The simulation state between decisions.
pub(crate) struct World<'a> {
    pub(crate) trace: &'a Trace,
    pub(crate) fabric: &'a Fabric,
    pub(crate) active: Vec<CoflowState>,
    pub(crate) meta: Vec<Meta>,
    pub(crate) rates: Rates,
    /// When `active` was last brought up to date (the last decision).
    pub(crate) synced_at: f64,
    pub(crate) due: BinaryHeap<Due>,
    /// Decisions follow every completion: then only the earliest completions matter, and a
    /// scan of `due_list` is cheaper than keeping a heap of every running flow.
    pub(crate) scan: bool,
    pub(crate) due_list: Vec<Due>,
    /// How many predictions `due` held after its last sweep of stale ones.
    pub(crate) due_valid: usize,
    pub(crate) due_min: f64,
    pub(crate) outcomes: Vec<Option<CoflowOutcome>>,
    pub(crate) makespan: f64,
}

impl World<'_> {
    /// Bring every running flow's bytes up to `now` and drop finished flows.
    pub(crate) fn sync(&mut self, now: f64) {
        let dt = now - self.synced_at;
        for ((c, r), m) in self
            .active
            .iter_mut()
            .zip(&self.rates.per_coflow)
            .zip(self.meta.iter_mut())
        {
            let mut moved = 0.0;
            let mut max_sent = c.max_flow_sent_bytes;
            let arrival = c.arrival_s;
            for (f, &rate) in c.flows.iter_mut().zip(r) {
                if rate <= 0.0 || f.remaining_bytes <= 0.0 {
                    continue;
                }
                let size = f.sent_bytes + f.remaining_bytes;
                let step = (rate * dt).min(f.remaining_bytes);
                f.sent_bytes += step;
                f.remaining_bytes -= step;
                moved += step;
                if f.remaining_bytes <= size * DONE_FRACTION {
                    // Rounding left a crumb its heap entry would have cleared.
                    moved += f.remaining_bytes;
                    f.sent_bytes = size;
                    f.remaining_bytes = 0.0;
                    finish_flow(m, now - arrival);
                }
                if f.sent_bytes > max_sent {
                    max_sent = f.sent_bytes;
                }
            }
            c.max_flow_sent_bytes = max_sent;
            c.sent_bytes += moved;
            if c.flows.len() != m.unfinished {
                c.flows.retain(|f| f.remaining_bytes > 0.0);
            }
        }
        self.synced_at = now;
    }

    /// A flow reached its predicted completion `due` at `now` (between decisions). A
    /// prediction made before a redistribution changed the flow's rate is stale and ignored.
    pub(crate) fn complete(&mut self, now: f64, due: &Due, clock: &mut DecisionClock) {
        if !self.is_current(due) {
            return;
        }
        let (ci, fi) = (due.coflow as usize, due.flow as usize);
        let c = &mut self.active[ci];
        let rate = &mut self.rates.per_coflow[ci][fi];
        let f = &mut c.flows[fi];
        // All that was left at the last sync is sent now; `sync` skips it from here on.
        let size = f.sent_bytes + f.remaining_bytes;
        c.sent_bytes += f.remaining_bytes;
        f.sent_bytes = size;
        f.remaining_bytes = 0.0;
        clock.flow_ended(f.src, f.dst, *rate);
        *rate = 0.0;
        c.max_flow_sent_bytes = c.max_flow_sent_bytes.max(size);
        finish_flow(&mut self.meta[ci], now - c.arrival_s);
    }

    /// Move coflows whose flows are all done to the outcomes. Returns whether any finished.
    pub(crate) fn retire(&mut self, now: f64) -> bool {
        if self.meta.iter().all(|m| m.unfinished > 0) {
            return false;
        }
        let mut keep = 0;
        for i in 0..self.active.len() {
            if self.meta[i].unfinished == 0 {
                self.record(i, now);
            } else {
                self.active.swap(keep, i);
                self.meta.swap(keep, i);
                self.rates.per_coflow.swap(keep, i);
                keep += 1;
            }
        }
        self.active.truncate(keep);
        self.meta.truncate(keep);
        self.rates.per_coflow.truncate(keep);
        true
    }

    pub(crate) fn record(&mut self, i: usize, now: f64) {
        let m = &self.meta[i];
        self.outcomes[m.trace_index] = Some(outcome(self.trace, self.fabric, m, now));
        self.makespan = self.makespan.max(now);
    }

    /// Predicted completions at the rates just decided, checking on the way the invariant every
    /// policy promises: no negative or NaN rate, no port above its capacity.
    pub(crate) fn schedule_completions(
        &mut self,
        now: f64,
        name: &str,
        up: &mut [f64],
        down: &mut [f64],
    ) -> Result<(), SimError> {
        let mut due = std::mem::take(&mut self.due).into_vec();
        due.clear();
        up.fill(0.0);
        down.fill(0.0);
        // In scan mode the first completion ends the phase (a full decision follows), so only
        // the completions within `SAME_TIME` of the earliest are kept: candidates near the
        // running minimum, pruned to the final one below.
        let mut min = f64::INFINITY;
        for (ci, (c, r)) in self.active.iter().zip(&self.rates.per_coflow).enumerate() {
            for (fi, (f, &rate)) in c.flows.iter().zip(r).enumerate() {
                if !(rate >= 0.0 && rate.is_finite()) {
                    return Err(SimError::BadRate {
                        scheduler: name.to_string(),
                        time_s: now,
                        rate,
                    });
                }
                if rate > 0.0 {
                    up[f.src as usize] += rate;
                    down[f.dst as usize] += rate;
                    let at = self.synced_at + f.remaining_bytes / rate;
                    if self.scan {
                        if at > same_time(min) {
                            continue;
                        }
                        min = min.min(at);
                    }
                    due.push(Due {
                        at,
                        coflow: ci as u32,
                        flow: fi as u32,
                    });
                }
            }
        }
        if self.scan {
            due.retain(|d| d.at <= same_time(min));
            self.due_min = min;
            self.due_list = due;
        } else {
            self.due_valid = due.len();
            self.due = BinaryHeap::from(due);
        }
        check_capacity(name, now, self.fabric, up, down)
    }

    /// Let the clock hand out what flows freed since the last decision, at `now`. Returns
    /// false when the policy asks for a full decision instead.
    pub(crate) fn hand_on(
        &mut self,
        now: f64,
        sched: &mut dyn Scheduler,
        clock: &mut DecisionClock,
    ) -> bool {
        let snap = Snapshot {
            now_s: now,
            fabric: self.fabric,
            coflows: &self.active,
        };
        let changed = match clock.hand_on(sched, &snap, &mut self.rates) {
            Handed::Nothing => return true, // only stale predictions came due
            Handed::Decide => return false,
            Handed::Changed(changed) => changed,
        };
        self.apply_changes(now, changed, sched.name());
        true
    }

    /// After the flows that ended at `now` left nothing running ([`Event::Idle`]): let the
    /// policy rate the waiting flows without a full decision if it can do so exactly (see
    /// [`DecisionClock::idle`]). Returns false when it asks for a full decision instead.
    ///
    /// Nothing has a rate, so bringing the bytes up to `now` moves nothing: only `synced_at`
    /// moves (without dropping finished flows, whose places the policy's index still names),
    /// and the new rates' predictions are `now + bytes / rate`, as after a decision.
    ///
    /// [`Event::Idle`]: coflowkit_sched::Event::Idle
    pub(crate) fn idle_hand_on(
        &mut self,
        now: f64,
        sched: &mut dyn Scheduler,
        clock: &mut DecisionClock,
    ) -> bool {
        debug_assert!(self.nothing_running());
        let synced_at = self.synced_at;
        self.synced_at = now;
        let snap = Snapshot {
            now_s: now,
            fabric: self.fabric,
            coflows: &self.active,
        };
        match clock.idle(sched, &snap, &mut self.rates) {
            Handed::Changed(changed) => {
                self.apply_changes(now, changed, sched.name());
                true
            }
            Handed::Nothing | Handed::Decide => {
                self.synced_at = synced_at;
                false
            }
        }
    }

    /// A hand-on's rate changes at `now`: rewrite bytes and predict completions.
    fn apply_changes(&mut self, now: f64, changed: &[(u32, u32, f64)], name: &str) {
        // Flows move at one rate per flow from `synced_at` on (see `sync`): rewrite a flow
        // whose rate changed at `now` as if it had moved at the new rate since `synced_at`. Its
        // bytes are real again at the next sync; only then does the policy read them.
        // New predictions go in as they are made; a flow changed twice leaves a stale one,
        // which `complete` and the sweep drop like those of earlier rates.
        let since = now - self.synced_at;
        for &(ci, fi, add) in changed {
            let c = &mut self.active[ci as usize];
            let f = &mut c.flows[fi as usize];
            let shift = add * since;
            f.remaining_bytes += shift;
            f.sent_bytes -= shift;
            c.sent_bytes -= shift;
            let rate = self.rates.per_coflow[ci as usize][fi as usize];
            if rate > 0.0 {
                self.due.push(Due {
                    at: self.synced_at + f.remaining_bytes / rate,
                    coflow: ci,
                    flow: fi,
                });
            }
        }
        self.compact_due();
        #[cfg(debug_assertions)]
        self.assert_within_capacity(now, name);
        #[cfg(not(debug_assertions))]
        let _ = name;
    }

    /// Drop the predictions redistributions made stale once they are half the heap: a sweep
    /// costs each a check, where popping it later costs a walk down the heap (and a heap
    /// twice the size). Amortized O(1) per prediction.
    fn compact_due(&mut self) {
        if self.due.len() <= 2 * self.due_valid.max(1024) {
            return;
        }
        let mut due = std::mem::take(&mut self.due);
        due.retain(|d| self.is_current(d));
        self.due = due;
        self.due_valid = self.due.len();
    }

    /// Debug builds (and so the tests) re-add every rate after a redistribution.
    #[cfg(debug_assertions)]
    fn assert_within_capacity(&self, now: f64, name: &str) {
        let ports = self.fabric.ports();
        let (mut up, mut down) = (vec![0.0; ports], vec![0.0; ports]);
        for (c, r) in self.active.iter().zip(&self.rates.per_coflow) {
            for (f, &rate) in c.flows.iter().zip(r) {
                up[f.src as usize] += rate;
                down[f.dst as usize] += rate;
            }
        }
        if let Err(e) = check_capacity(name, now, self.fabric, &up, &down) {
            panic!("redistribution broke capacity: {e}");
        }
    }

    /// The earliest predicted completion, if any flow is running. Stale predictions at the
    /// front are dropped first: an event's time (and the flows it groups) must not depend on
    /// predictions a redistribution replaced.
    pub(crate) fn next_due(&mut self) -> Option<f64> {
        if self.scan {
            return (!self.due_list.is_empty()).then_some(self.due_min);
        }
        while let Some(d) = self.due.peek() {
            if self.is_current(d) {
                return Some(d.at);
            }
            self.due.pop();
        }
        None
    }

    /// Whether `d` is the flow's prediction at its present rate (and it is still running).
    fn is_current(&self, d: &Due) -> bool {
        let f = &self.active[d.coflow as usize].flows[d.flow as usize];
        let rate = self.rates.per_coflow[d.coflow as usize][d.flow as usize];
        f.remaining_bytes > 0.0 && rate > 0.0 && d.at == self.synced_at + f.remaining_bytes / rate
    }

    /// Complete every flow predicted by `horizon`, at time `t`. Returns whether a coflow ended.
    pub(crate) fn complete_due(&mut self, t: f64, horizon: f64, clock: &mut DecisionClock) -> bool {
        let mut coflow_done = false;
        if self.scan {
            let mut list = std::mem::take(&mut self.due_list);
            list.retain(|d| {
                if d.at > horizon {
                    return true;
                }
                self.complete(t, d, clock);
                coflow_done |= self.meta[d.coflow as usize].unfinished == 0;
                false
            });
            self.due_min = list.iter().map(|d| d.at).fold(f64::INFINITY, f64::min);
            self.due_list = list;
        } else {
            while let Some(d) = self.due.peek() {
                if d.at > horizon {
                    break;
                }
                let d = self.due.pop().expect("peeked");
                self.complete(t, &d, clock);
                coflow_done |= self.meta[d.coflow as usize].unfinished == 0;
            }
        }
        coflow_done
    }

    pub(crate) fn nothing_running(&self) -> bool {
        if self.scan {
            self.due_list.is_empty()
        } else {
            self.due.is_empty()
        }
    }
}

/// The outcome of the coflow `m` keeps, finished at `now`.
pub(crate) fn outcome(trace: &Trace, fabric: &Fabric, m: &Meta, now: f64) -> CoflowOutcome {
    let c = &trace.coflows[m.trace_index];
    let cct = now - c.arrival_s;
    let deadline_s = c.deadline_s.map(|d| c.arrival_s + d);
    let n = c.flows.len().max(1) as f64;
    CoflowOutcome {
        id: c.id,
        arrival_s: c.arrival_s,
        finish_s: now,
        cct_s: cct,
        isolated_cct_s: c.isolated_cct_s(fabric),
        bytes: c.bytes(),
        flows: c.flows.len(),
        length_bytes: c.length_bytes(),
        bin: Bin::of(c),
        deadline_s,
        met_deadline: deadline_s.map(|d| now <= d + 1e-9 * d.abs().max(1.0)),
        avg_fct_s: m.fct_sum / n,
        fct_spread: if cct > 0.0 && m.fct_min.is_finite() {
            (m.fct_max - m.fct_min) / cct
        } else {
            0.0
        },
    }
}

pub(crate) fn finish_flow(m: &mut Meta, fct: f64) {
    m.unfinished -= 1;
    m.fct_sum += fct;
    m.fct_min = m.fct_min.min(fct);
    m.fct_max = m.fct_max.max(fct);
}

/// No port may carry more than its capacity.
pub(crate) fn check_capacity(
    name: &str,
    now: f64,
    fabric: &Fabric,
    up: &[f64],
    down: &[f64],
) -> Result<(), SimError> {
    for (dir, loads, caps) in [
        ("uplink", up, &fabric.up_bytes_per_s),
        ("downlink", down, &fabric.down_bytes_per_s),
    ] {
        for (port, (&load, &cap)) in loads.iter().zip(caps).enumerate() {
            if load > cap * (1.0 + CAPACITY_SLACK) {
                return Err(SimError::OverCapacity {
                    scheduler: name.to_string(),
                    time_s: now,
                    dir,
                    port,
                    load,
                    cap,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::{Coflow, Flow};
    use coflowkit_sched::FlowState;

    #[test]
    fn a_replaced_prediction_neither_times_an_event_nor_groups_flows_into_it() {
        // Flow 0 was to end at 1.0 but a redistribution slowed it (now due at 2.0). Flow 1 ends
        // at 1.0 + 5e-10: within SAME_TIME of the stale 1.0, so anchoring the event on the
        // stale prediction would finish flow 1 early, at 1.0.
        let fabric = Fabric::uniform(3, 1.0);
        let trace = Trace {
            ports: 3,
            coflows: vec![Coflow::new(
                1,
                0.0,
                vec![
                    Flow {
                        src: 0,
                        dst: 1,
                        bytes: 2.0,
                    },
                    Flow {
                        src: 2,
                        dst: 1,
                        bytes: 1.0,
                    },
                ],
            )],
        };
        let flow = |src, dst, remaining_bytes| FlowState {
            src,
            dst,
            sent_bytes: 0.0,
            remaining_bytes,
        };
        let mut w = World {
            trace: &trace,
            fabric: &fabric,
            active: vec![CoflowState {
                id: 1,
                arrival_s: 0.0,
                deadline_s: None,
                weight: 1.0,
                total_flows: 2,
                sent_bytes: 0.0,
                max_flow_sent_bytes: 0.0,
                flows: vec![flow(0, 1, 2.0), flow(2, 1, 1.0 + 5e-10)],
                dag: None,
            }],
            meta: vec![Meta {
                trace_index: 0,
                unfinished: 2,
                fct_sum: 0.0,
                fct_min: f64::INFINITY,
                fct_max: 0.0,
            }],
            rates: Rates {
                per_coflow: vec![vec![1.0, 1.0]],
            },
            synced_at: 0.0,
            due: BinaryHeap::new(),
            scan: false,
            due_list: Vec::new(),
            due_valid: 0,
            due_min: f64::INFINITY,
            outcomes: vec![None],
            makespan: 0.0,
        };
        let mut clock = DecisionClock::default();
        clock.loads(&fabric, &[0.0; 3], &[0.0; 3]);
        let due = |at, flow| Due {
            at,
            coflow: 0,
            flow,
        };
        w.due.push(due(1.0, 0)); // stale: flow 0 now needs 2 s
        w.due.push(due(2.0, 0));
        w.due.push(due(1.0 + 5e-10, 1));
        let t = w.next_due().expect("flows run");
        assert_eq!(t, 1.0 + 5e-10, "the event is flow 1's completion");
        w.complete_due(t, same_time(t), &mut clock);
        assert_eq!(w.meta[0].unfinished, 1);
        assert_eq!(
            w.meta[0].fct_sum,
            1.0 + 5e-10,
            "flow 1 ends at its own time"
        );
        assert_eq!(w.next_due(), Some(2.0));
    }
}
