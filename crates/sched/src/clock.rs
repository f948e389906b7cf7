//! The decision clock: when a world calls its policy, and how. Both worlds drive it, the
//! simulator from its event loop and the coordinator from daemon reports, so they decide the
//! same way: events go in (an arrival, a coflow's or a flow's end, a wake-up, a progress
//! report) and the clock says whether to decide in full, hand freed bandwidth on, or wait.
//!
//! Sans-IO: it never reads a clock; every call takes `now`. Call order, per world:
//! 1. [`DecisionClock::decide`] for a full decision, then [`DecisionClock::loads`] with the
//!    load the rates put on each port (the spare a later hand-on gives out);
//! 2. per flow that ends with a rate, [`DecisionClock::flow_ended`];
//! 3. per event, [`DecisionClock::on`]; on [`Step::HandOn`], [`DecisionClock::hand_on`]
//!    (which may still ask for a full decision), on [`Step::Decide`], back to 1. On
//!    [`Event::Idle`] a world that can bring the waiting flows' bytes to the present may first
//!    offer [`DecisionClock::idle`]: the policy hands on if a decision would give the same
//!    rates (an incast served one flow at a time then costs no decision per flow).
//!
//! The machinery of handing bandwidth on (a policy's top-up index, its own redistribution,
//! the pair refill of `fair` and `wss`) is private to this crate: a world sees only steps.

use coflowkit_model::Fabric;

use crate::alloc::{Demand, Drift, Freed, LevelAnswer};
use crate::pair_policy::{PairPolicy, PairShare};
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

/// What happened, as far as deciding goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A coflow arrived (or new flows of one, or a port came or went): every policy decides.
    Arrival,
    /// A coflow's last flow ended.
    CoflowEnd,
    /// A single flow ended, its coflow still running.
    FlowEnd,
    /// The wake-up the policy (or the world's tick, or the flow quantum) asked for.
    WakeUp,
    /// Flows ended and none has a rate left: nothing would happen before the next arrival.
    Idle,
    /// Bytes sent were reported; the rates still hold.
    Progress,
}

/// What an event calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A full decision ([`DecisionClock::decide`]).
    Decide,
    /// Hand the bandwidth of flows that ended on ([`DecisionClock::hand_on`]).
    HandOn,
    /// Nothing until the next event or [`DecisionClock::wake_at_s`].
    Wait,
}

/// The knobs of the clock; the defaults decide exactly when the policy asks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ClockOptions {
    /// For policies that recompute on flow ends: decide at most once per this many seconds on
    /// account of flow ends (bandwidth a finished flow frees idles until then). 0 = exact.
    pub flow_quantum_s: f64,
    /// For policies that hand bandwidth on: also decide in full at a flow end once this many
    /// seconds passed since the last decision. `None` = only on coflow events.
    pub refresh_s: Option<f64>,
}

/// Decisions and hand-ons so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockCounts {
    /// Full decisions (calls of the policy's `allocate`).
    pub decisions: u64,
    /// Hand-ons of freed bandwidth between decisions that changed or kept rates without a
    /// full decision.
    pub hand_ons: u64,
}

/// The result of [`DecisionClock::hand_on`].
#[derive(Debug, PartialEq)]
pub enum Handed<'a> {
    /// No flow with a rate ended since the last decision or hand-on: rates stand.
    Nothing,
    /// Rates changed: (coflow index, flow index, bytes per second added; negative if taken),
    /// indexed like the snapshot. `rates` already holds the new ones.
    Changed(&'a [(u32, u32, f64)]),
    /// The policy cannot hand on: decide in full.
    Decide,
}

/// When to decide (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct DecisionClock {
    opts: ClockOptions,
    how: FlowCompletion,
    decided_at: f64,
    wake_at_s: Option<f64>,
    freed: Freed,
    /// Per side: the ports whose spare may differ from their capacity (a load at the last
    /// decision, or a flow whose rate a hand-on changed since), each listed once (`marked`).
    dirty: [Vec<u32>; 2],
    marked: [Vec<bool>; 2],
    /// Whether the policy's idle hand-on after the last decision reads the spare: then the
    /// ports above are kept.
    track: bool,
    counts: ClockCounts,
}

impl DecisionClock {
    /// A clock for `sched` (its reaction to a flow's end) with `opts`.
    pub fn new(sched: &dyn Scheduler, opts: ClockOptions) -> Self {
        DecisionClock {
            opts,
            how: sched.on_flow_completion(),
            ..Default::default()
        }
    }

    /// What a single flow's end calls for under the policy last decided with.
    pub fn flow_completion(&self) -> FlowCompletion {
        self.how
    }

    pub fn counts(&self) -> ClockCounts {
        self.counts
    }

    /// When the next decision is due without any other event (the policy's wake-up, or the
    /// end of a flow quantum), if ever.
    pub fn wake_at_s(&self) -> Option<f64> {
        self.wake_at_s
    }

    /// When the last full decision was taken.
    pub fn decided_at_s(&self) -> f64 {
        self.decided_at
    }

    /// What `event` at `now` calls for.
    pub fn on(&mut self, now: f64, event: Event) -> Step {
        match event {
            Event::Arrival | Event::CoflowEnd | Event::WakeUp | Event::Idle => Step::Decide,
            Event::Progress => Step::Wait,
            Event::FlowEnd => match self.how {
                FlowCompletion::Recompute => {
                    let due = self.decided_at + self.opts.flow_quantum_s;
                    if now >= due {
                        return Step::Decide;
                    }
                    self.wake_at_s = Some(self.wake_at_s.map_or(due, |w| w.min(due)));
                    Step::Wait
                }
                FlowCompletion::Redistribute => {
                    let refresh = (self.opts.refresh_s).is_some_and(|s| now >= self.decided_at + s);
                    if refresh {
                        Step::Decide
                    } else {
                        Step::HandOn
                    }
                }
                FlowCompletion::Ignore => Step::Wait,
            },
        }
    }

    /// A full decision at `snap.now_s`: rates for every flow of `snap` into `rates` (shaped
    /// and zeroed here). Remembers the policy's wake-up. The policy is not called on an
    /// empty snapshot (nothing to rate, nothing to wake up for).
    pub fn decide(&mut self, sched: &mut dyn Scheduler, snap: &Snapshot, rates: &mut Rates) {
        rates.reset(snap.coflows);
        let d = if snap.coflows.is_empty() {
            Decision::none()
        } else {
            sched.allocate(snap, rates)
        };
        self.how = sched.on_flow_completion();
        self.counts.decisions += 1;
        self.decided_at = snap.now_s;
        self.wake_at_s = d.wake_at_s.filter(|&t| t > snap.now_s);
        self.track = sched.idle_reads_spare();
    }

    /// What the rates of the last decision load each port with (bytes per second): the
    /// spare capacity is what a hand-on can give out.
    pub fn loads(&mut self, fabric: &Fabric, up: &[f64], down: &[f64]) {
        let spare = &mut self.freed.spare;
        spare.reset(fabric);
        for (side, (spare, loads)) in [(&mut spare.up, up), (&mut spare.down, down)]
            .into_iter()
            .enumerate()
        {
            for (s, l) in spare.iter_mut().zip(loads) {
                *s = (*s - l).max(0.0);
            }
            let (dirty, marked) = (&mut self.dirty[side], &mut self.marked[side]);
            dirty.clear();
            marked.clear();
            if self.track {
                marked.resize(spare.len(), false);
                for (p, &l) in loads.iter().enumerate() {
                    if l != 0.0 {
                        marked[p] = true;
                        dirty.push(p as u32);
                    }
                }
            }
        }
        self.freed.clear_ports();
    }

    /// The ports of the flows a hand-on re-rated: their spare moved.
    fn mark_changed(&mut self, snap: &Snapshot) {
        if !self.track {
            return;
        }
        for &(ci, fi, _) in &self.freed.changed {
            let f = &snap.coflows[ci as usize].flows[fi as usize];
            for (side, p) in [(0, f.src), (1, f.dst)] {
                if let Some(m) = self.marked[side].get_mut(p as usize) {
                    if !*m {
                        *m = true;
                        self.dirty[side].push(p);
                    }
                }
            }
        }
    }

    /// A flow from `src` to `dst` that held `rate` ended: its bandwidth is spare again.
    pub fn flow_ended(&mut self, src: u32, dst: u32, rate: f64) {
        self.freed.spare.up[src as usize] += rate;
        self.freed.spare.down[dst as usize] += rate;
        self.freed.up.push(src);
        self.freed.down.push(dst);
    }

    /// Hand the bandwidth of the flows that ended since the last decision (or hand-on) on to
    /// the flows of `snap`, the state of the last decision with finished flows' bytes left at
    /// 0, in the policy's last priority order; `rates` holds the current rates.
    pub fn hand_on<'c>(
        &'c mut self,
        sched: &mut dyn Scheduler,
        snap: &Snapshot,
        rates: &mut Rates,
    ) -> Handed<'c> {
        if self.freed.up.is_empty() {
            return Handed::Nothing;
        }
        self.freed.changed.clear();
        if !sched.redistribute(snap, rates, &mut self.freed) {
            return Handed::Decide;
        }
        self.mark_changed(snap);
        self.counts.hand_ons += 1;
        self.freed.up.clear();
        self.freed.down.clear();
        Handed::Changed(&self.freed.changed)
    }

    /// [`Event::Idle`] for a world that brought the unfinished flows' bytes to `snap.now_s`
    /// (they have no rate, so nothing moved): the policy may rate them from its last
    /// decision's state exactly as a full decision would ([`Handed::Changed`], a hand-on), or
    /// ask for that decision ([`Handed::Decide`]; then call [`DecisionClock::on`]). Only for
    /// policies that hand on (`Redistribute`) without a refresh (a decision would move the
    /// refresh's start). `snap` is the last decision's state, finished flows at 0 bytes.
    pub fn idle<'c>(
        &'c mut self,
        sched: &mut dyn Scheduler,
        snap: &Snapshot,
        rates: &mut Rates,
    ) -> Handed<'c> {
        if self.how != FlowCompletion::Redistribute
            || self.opts.refresh_s.is_some()
            || self.freed.up.is_empty()
        {
            return Handed::Decide;
        }
        // Nothing runs: the spare is every port's capacity, as `loads` after a decision
        // that rated nothing yet would leave it (capacity minus 0.0, bit for bit). Only the
        // ports loaded since the last decision can be off (by rounding): those are put back,
        // for a policy that reads the spare (the others' hand-ons do not).
        let fabric = snap.fabric;
        let spare = &mut self.freed.spare;
        for (side, (spare, caps)) in [
            (&mut spare.up, &fabric.up_bytes_per_s),
            (&mut spare.down, &fabric.down_bytes_per_s),
        ]
        .into_iter()
        .enumerate()
        {
            for &p in &self.dirty[side] {
                spare[p as usize] = caps[p as usize];
                self.marked[side][p as usize] = false;
            }
            self.dirty[side].clear();
        }
        self.freed.changed.clear();
        if !sched.idle(snap, rates, &mut self.freed) {
            return Handed::Decide;
        }
        self.mark_changed(snap);
        self.counts.hand_ons += 1;
        self.freed.up.clear();
        self.freed.down.clear();
        Handed::Changed(&self.freed.changed)
    }

    /// For a policy that rates flows by port pair (`fair`, `wss`), when its flows' ends
    /// only recompute: its pair rater, so a world may keep state per pair and decide by
    /// refills ([`PairRater::answer`]). `None` otherwise.
    pub fn pair_rater<'s>(&self, sched: &'s mut dyn Scheduler) -> Option<PairRater<'s>> {
        if self.how != FlowCompletion::Recompute || self.opts.flow_quantum_s != 0.0 {
            return None;
        }
        sched.pair_policy().map(|policy| PairRater { policy })
    }

    /// A pair world's decision (it keeps its own rates): counted like any other.
    pub fn decided_by_pairs(&mut self, now: f64) {
        self.counts.decisions += 1;
        self.decided_at = now;
    }
}

/// The last decision's coflows in the policy's priority order, highest first, as indices into
/// that decision's snapshot: the order in which bandwidth freed between decisions is handed on
/// (for a world to show). Empty for policies that share rather than order (fair, pfp, wss,
/// the multi-tenant ones) and for decisions that kept no order (redistribution off; Varys'
/// starvation intervals, where all but the starved wait).
pub fn priority_order(sched: &mut dyn Scheduler) -> &[u32] {
    sched.priority_order()
}

/// A pair-rated policy's decisions for a world that keeps state per port pair.
pub struct PairRater<'s> {
    policy: &'s mut dyn PairPolicy,
}

impl PairRater<'_> {
    /// How a pair's rate is split among its flows.
    pub fn share(&self) -> PairShare {
        self.policy.share()
    }

    /// Rates for `demands` (one per pair) into `rates`: a whole weighted max-min fill when
    /// `lowered` is `None`, else the refill after only the demands at those positions went
    /// down (their flows ended) and `rates` still holds the last answer. Returns, for a
    /// refill, the positions whose rate may have changed.
    pub fn answer(
        &mut self,
        fabric: &Fabric,
        demands: &[Demand],
        lowered: Option<&[u32]>,
        rates: &mut [f64],
        now: f64,
    ) -> Option<&[u32]> {
        let drift: Drift = self.policy.share().drift();
        (self.policy.refill()).answer(fabric, demands, lowered, rates, now, drift)
    }

    /// For `fair` (an equal share): [`Refill::answer_levels`](crate::alloc::Refill): after
    /// completions alone, only the levels per bottleneck resource that moved when every pair
    /// keeps its bottleneck; a whole fill otherwise. `None` for other shares.
    pub fn answer_levels(
        &mut self,
        fabric: &Fabric,
        demands: &[Demand],
        lowered: Option<&[u32]>,
        rates: &mut [f64],
        now: f64,
    ) -> Option<LevelAnswer<'_>> {
        if self.policy.share() != PairShare::Equal {
            return None;
        }
        Some((self.policy.refill()).answer_levels(fabric, demands, lowered, rates, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{build, SchedOptions, SchedulerKind};

    fn clock(kind: SchedulerKind, how: FlowCompletion, opts: ClockOptions) -> DecisionClock {
        let s = build(kind, &SchedOptions::default().with_flow_completion(how));
        DecisionClock::new(s.as_ref(), opts)
    }

    #[test]
    fn coflow_events_always_decide_and_progress_never_does() {
        for how in [
            FlowCompletion::Redistribute,
            FlowCompletion::Recompute,
            FlowCompletion::Ignore,
        ] {
            let mut c = clock(SchedulerKind::Sebf, how, ClockOptions::default());
            for e in [Event::Arrival, Event::CoflowEnd, Event::WakeUp, Event::Idle] {
                assert_eq!(c.on(1.0, e), Step::Decide, "{how:?} {e:?}");
            }
            assert_eq!(c.on(1.0, Event::Progress), Step::Wait);
        }
    }

    #[test]
    fn a_flow_end_follows_the_policy_and_the_quantum() {
        let mut c = clock(
            SchedulerKind::Sebf,
            FlowCompletion::Redistribute,
            ClockOptions::default(),
        );
        assert_eq!(c.on(1.0, Event::FlowEnd), Step::HandOn);
        let mut c = clock(
            SchedulerKind::Sebf,
            FlowCompletion::Ignore,
            ClockOptions::default(),
        );
        assert_eq!(c.on(1.0, Event::FlowEnd), Step::Wait);
        assert_eq!(c.wake_at_s(), None);
        // Recompute with a quantum of 0.5 s after a decision at 0: a flow end at 0.2 waits
        // and asks to be woken at 0.5; one at 0.5 decides.
        let mut c = clock(
            SchedulerKind::Fair,
            FlowCompletion::Recompute,
            ClockOptions {
                flow_quantum_s: 0.5,
                refresh_s: None,
            },
        );
        assert_eq!(c.on(0.2, Event::FlowEnd), Step::Wait);
        assert_eq!(c.wake_at_s(), Some(0.5));
        assert_eq!(c.on(0.5, Event::FlowEnd), Step::Decide);
    }

    #[test]
    fn a_refresh_turns_a_late_hand_on_into_a_decision() {
        let mut c = clock(
            SchedulerKind::Varys,
            FlowCompletion::Redistribute,
            ClockOptions {
                flow_quantum_s: 0.0,
                refresh_s: Some(2.0),
            },
        );
        assert_eq!(c.on(1.0, Event::FlowEnd), Step::HandOn);
        assert_eq!(c.on(2.0, Event::FlowEnd), Step::Decide);
    }

    #[test]
    fn a_freed_port_goes_to_the_waiting_flow_and_nothing_freed_keeps_rates() {
        use crate::{CoflowState, Snapshot};
        use coflowkit_model::Fabric;
        // SEBF: A = {0->1: 1} and B = {0->2: 5} share uplink 0; A (smaller) goes first and
        // holds it. A ends: B gets uplink 0 without a full decision.
        let fabric = Fabric::uniform(3, 1.0);
        let mut sched = build(SchedulerKind::Sebf, &SchedOptions::default());
        let mut c = DecisionClock::new(sched.as_ref(), ClockOptions::default());
        let mut coflows = vec![
            CoflowState::of_flows(&[(0, 1, 1.0)]),
            CoflowState::of_flows(&[(0, 2, 5.0)]),
        ];
        coflows[1].id = 2;
        let mut rates = Rates::default();
        fn snap<'a>(fabric: &'a Fabric, coflows: &'a [CoflowState]) -> Snapshot<'a> {
            Snapshot {
                now_s: 0.0,
                fabric,
                coflows,
            }
        }
        c.decide(sched.as_mut(), &snap(&fabric, &coflows), &mut rates);
        assert_eq!(rates.per_coflow, vec![vec![1.0], vec![0.0]]);
        c.loads(&fabric, &[1.0, 0.0, 0.0], &[0.0, 1.0, 0.0]);
        assert_eq!(
            c.hand_on(sched.as_mut(), &snap(&fabric, &coflows), &mut rates),
            Handed::Nothing
        );
        coflows[0].flows[0].remaining_bytes = 0.0;
        rates.per_coflow[0][0] = 0.0;
        c.flow_ended(0, 1, 1.0);
        assert_eq!(c.on(1.0, Event::FlowEnd), Step::HandOn);
        assert_eq!(
            c.hand_on(sched.as_mut(), &snap(&fabric, &coflows), &mut rates),
            Handed::Changed(&[(1, 0, 1.0)])
        );
        assert_eq!(rates.per_coflow, vec![vec![0.0], vec![1.0]]);
        assert_eq!(
            c.counts(),
            ClockCounts {
                decisions: 1,
                hand_ons: 1
            }
        );
    }

    #[test]
    fn the_priority_order_is_the_last_decisions_and_sharing_has_none() {
        use crate::{CoflowState, Snapshot};
        use coflowkit_model::Fabric;
        // The bigger coflow arrives first; SEBF and TCF put the smaller one (index 1) first,
        // FIFO keeps arrival order, fair sharing has no order.
        let fabric = Fabric::uniform(3, 1.0);
        let mut coflows = vec![
            CoflowState::of_flows(&[(0, 2, 5.0)]),
            CoflowState::of_flows(&[(1, 2, 1.0)]),
        ];
        coflows[1].id = 2;
        let snap = Snapshot {
            now_s: 0.0,
            fabric: &fabric,
            coflows: &coflows,
        };
        for (kind, want) in [
            (SchedulerKind::Sebf, &[1u32, 0][..]),
            (SchedulerKind::Tcf, &[1, 0]),
            (SchedulerKind::Fifo, &[0, 1]),
            (SchedulerKind::Varys, &[1, 0]),
            (SchedulerKind::Fair, &[]),
        ] {
            let mut sched = build(kind, &SchedOptions::default());
            assert!(priority_order(sched.as_mut()).is_empty(), "{kind}: before");
            let mut c = DecisionClock::new(sched.as_ref(), ClockOptions::default());
            c.decide(sched.as_mut(), &snap, &mut Rates::default());
            assert_eq!(priority_order(sched.as_mut()), want, "{kind}");
        }
    }
}
