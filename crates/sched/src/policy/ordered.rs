//! Coflow-ordering policies: put active coflows in some order, give each in turn MADD rates on
//! what the earlier ones left (iterative MADD), then backfill leftovers in the same order.
//! FIFO (as the thesis' simulations ran it: arrival order, a blocked coflow waits and later ones
//! go ahead), strict FIFO (non-preemptive, the thesis' Fig 6.1), SCF, NCF, TCF, and SEBF (the
//! heart of Varys).

use serde::{Deserialize, Serialize};

use crate::alloc::{backfill, madd_for, share_among_blocked, Backfill, Budget, LoadTable, TopUp};
use crate::machinery::Machinery;
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Arrival order; a coflow that a full port blocks waits and later coflows get their MADD
    /// first, as in the reference simulator the thesis' FIFO numbers came from (docs/fb-results.md).
    Fifo,
    /// Arrival order, non-preemptive: a blocked coflow takes what its free ports have left before
    /// any later coflow (the FIFO of the thesis' Fig 6.1, oracle O7).
    #[serde(rename = "fifo-strict")]
    FifoStrict,
    /// Shortest coflow first: smallest largest remaining flow.
    Scf,
    /// Narrowest coflow first: fewest flows (its width at arrival: a static attribute, so a
    /// wide coflow does not overtake once most of its flows are done).
    Ncf,
    /// Smallest total remaining bytes first.
    Tcf,
    /// Smallest effective bottleneck first: smallest Γ on an empty fabric.
    Sebf,
}

impl Order {
    /// Whether the coflows MADD could not serve share the leftovers before work conservation
    /// unless told otherwise: only for `fifo`, the reference simulator's FIFO, whose skipped
    /// coflows do so (docs/fb-results.md: without it FIFO's average CCT on FB doubles). The
    /// others follow their papers' greedy work conservation.
    pub fn shares_blocked_by_default(self) -> bool {
        self == Order::Fifo
    }

    pub fn name(self) -> &'static str {
        match self {
            Order::Fifo => "fifo",
            Order::FifoStrict => "fifo-strict",
            Order::Scf => "scf",
            Order::Ncf => "ncf",
            Order::Tcf => "tcf",
            Order::Sebf => "sebf",
        }
    }
}

/// Sort keys and MADD scratch, reused between decisions.
#[derive(Debug, Default)]
pub struct OrderedCore {
    pub budget: Budget,
    /// Per-coflow port loads of the current snapshot (see [`OrderedCore::prepare`]).
    pub table: LoadTable,
    keys: Vec<(f64, usize)>,
    /// The last decision's flows by port in backfill order, for redistribution.
    pub topup: TopUp,
}

impl OrderedCore {
    /// Start a decision: full budget, and every coflow's port loads aggregated once.
    pub fn prepare(&mut self, snap: &Snapshot) {
        self.budget.reset(snap.fabric);
        self.table.build(
            snap.fabric.ports(),
            snap.coflows.iter().map(|c| &c.flows[..]),
        );
    }

    /// Indices of `snap.coflows` restricted to `keep`, in `order` (ties in arrival order).
    /// Call [`OrderedCore::prepare`] first.
    pub fn sorted(
        &mut self,
        order: Order,
        snap: &Snapshot,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<usize> {
        self.keys.clear();
        let full = snap.fabric;
        for (i, c) in snap.coflows.iter().enumerate() {
            if !keep(i) {
                continue;
            }
            let key = match order {
                Order::Fifo | Order::FifoStrict => 0.0,
                Order::Scf => c.remaining_length_bytes(),
                Order::Ncf => c.total_flows as f64,
                Order::Tcf => c.remaining_bytes(),
                Order::Sebf => {
                    self.table
                        .gamma_on(i, &full.up_bytes_per_s, &full.down_bytes_per_s, 0.0)
                }
            };
            self.keys.push((key, i));
        }
        self.keys
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.keys.iter().map(|&(_, i)| i).collect()
    }

    /// Iterative MADD over `order` on the current budget. A coflow that a full port blocks
    /// (Γ infinite) waits, as in the thesis; with `partial_when_blocked` it instead takes what
    /// its other ports have left before later coflows get anything (non-preemptive FIFO: a
    /// coflow in service keeps its ports). Returns the blocked coflows, in order.
    pub fn madd_in_order(
        &mut self,
        order: &[usize],
        snap: &Snapshot,
        rates: &mut Rates,
        partial_when_blocked: bool,
    ) -> Vec<usize> {
        let mut blocked = Vec::new();
        for &i in order {
            let g = self.table.gamma(i, &self.budget);
            madd_for(
                &snap.coflows[i].flows,
                g,
                &mut self.budget,
                &mut rates.per_coflow[i],
            );
            if g.is_infinite() {
                blocked.push(i);
                if partial_when_blocked {
                    backfill(
                        Backfill::Greedy,
                        &snap.coflows[i].flows,
                        &mut self.budget,
                        &mut rates.per_coflow[i],
                    );
                }
            }
        }
        blocked
    }

    /// Work conservation over `order` on what is left.
    pub fn backfill_in_order(
        &mut self,
        kind: Backfill,
        order: &[usize],
        snap: &Snapshot,
        rates: &mut Rates,
    ) {
        for &i in order {
            backfill(
                kind,
                &snap.coflows[i].flows,
                &mut self.budget,
                &mut rates.per_coflow[i],
            );
        }
        if kind == Backfill::Proportional {
            // Shares capped by a downlink leave crumbs on uplinks: hand them out greedily so
            // the pass stays work conserving.
            self.backfill_in_order(Backfill::Greedy, order, snap, rates);
        }
    }
}

/// A plain ordering policy (no starvation timers, no deadlines).
#[derive(Debug)]
pub struct Ordered {
    pub order: Order,
    pub backfill: Backfill,
    pub on_flow_completion: FlowCompletion,
    /// The coflows MADD could not serve share the leftovers before work conservation
    /// ([`share_among_blocked`]); see [`Order::shares_blocked_by_default`].
    pub share_blocked: bool,
    core: OrderedCore,
    /// The last indexed decision's priority order, when freed bandwidth is handed on in
    /// another (see [`Ordered::allocate`]); empty otherwise.
    reported: Vec<u32>,
}

impl Ordered {
    pub fn new(order: Order, backfill: Backfill, on_flow_completion: FlowCompletion) -> Self {
        Ordered {
            order,
            backfill,
            on_flow_completion,
            share_blocked: order.shares_blocked_by_default(),
            core: OrderedCore::default(),
            reported: Vec::new(),
        }
    }
}

impl Machinery for Ordered {
    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.core.topup)
    }

    fn priority_order(&mut self) -> &[u32] {
        if self.reported.is_empty() {
            self.core.topup.order()
        } else {
            &self.reported
        }
    }
}

impl Scheduler for Ordered {
    fn name(&self) -> &str {
        self.order.name()
    }

    fn clairvoyant(&self) -> bool {
        true // MADD inside each coflow reads sizes, whatever the order
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.on_flow_completion
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        self.core.prepare(snap);
        let order = self.core.sorted(self.order, snap, |_| true);
        let non_preemptive = self.order == Order::FifoStrict;
        let blocked = self.core.madd_in_order(&order, snap, rates, non_preemptive);
        let share = self.share_blocked && !non_preemptive && !blocked.is_empty();
        if share {
            share_among_blocked(&blocked, snap.coflows, &mut self.core.budget, rates);
        }
        self.core
            .backfill_in_order(self.backfill, &order, snap, rates);
        self.reported.clear();
        if self.on_flow_completion == FlowCompletion::Redistribute {
            // With the share, no flow yields to a higher-priority one: a served coflow's MADD
            // rates are whole (more for one of its flows ends that flow sooner, not the
            // coflow), so taking a blocked coflow's share for it undoes the share between
            // coflow events (FB: fifo 180.3 s, with full decisions 89.4 s; docs/fb-results.md).
            self.core.topup.set_yielding(!self.share_blocked);
            if share {
                // Freed bandwidth goes where this decision put its leftovers first: to the
                // blocked coflows (their share), then to the others in order (backfill). The
                // order reported stays the policy's.
                self.reported.extend(order.iter().map(|&i| i as u32));
                let mut is_blocked = vec![false; snap.coflows.len()];
                for &i in &blocked {
                    is_blocked[i] = true;
                }
                let rest = order.into_iter().filter(|&i| !is_blocked[i]);
                let hand_on: Vec<usize> = blocked.into_iter().chain(rest).collect();
                self.core.topup.index(snap.fabric.ports(), hand_on);
            } else {
                self.core.topup.index(snap.fabric.ports(), order);
            }
        }
        Decision::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{priority_order, ClockOptions, DecisionClock};
    use crate::{build, CoflowState, SchedOptions, SchedulerKind};
    use coflowkit_model::Fabric;

    fn snap<'a>(fabric: &'a Fabric, coflows: &'a [CoflowState]) -> Snapshot<'a> {
        Snapshot {
            now_s: 0.0,
            fabric,
            coflows,
        }
    }

    /// Ports of 1 B/s. A = {0->0: 4, 1->1: 1, 1->2: 1}, B = {0->3: 1, 2->2: 10}. A's MADD
    /// (Γ = 4) gives 1, 1/4, 1/4 and leaves 1/2 on uplink 1, 3/4 on downlinks 1 and 2. B needs
    /// the full uplink 0, so it is blocked: its share gives 2->2 the 3/4 left on downlink 2;
    /// backfill gives A's 1->1 the 1/2 left on uplink 1 (3/4 in all).
    fn two_coflows() -> Vec<CoflowState> {
        let mut coflows = vec![
            CoflowState::of_flows(&[(0, 0, 4.0), (1, 1, 1.0), (1, 2, 1.0)]),
            CoflowState::of_flows(&[(0, 3, 1.0), (2, 2, 10.0)]),
        ];
        coflows[1].id = 2;
        coflows
    }

    #[test]
    fn fifo_hands_a_freed_port_on_without_taking_the_blocked_share_back() {
        let fabric = Fabric::uniform(4, 1.0);
        let mut coflows = two_coflows();
        let mut sched = build(SchedulerKind::Fifo, &SchedOptions::default());
        let mut c = DecisionClock::new(sched.as_ref(), ClockOptions::default());
        let mut rates = Rates::default();
        c.decide(sched.as_mut(), &snap(&fabric, &coflows), &mut rates);
        assert_eq!(
            rates.per_coflow,
            vec![vec![1.0, 0.75, 0.25], vec![0.0, 0.75]]
        );
        // The hand-on goes to B first, but the order reported is FIFO's.
        assert_eq!(priority_order(sched.as_mut()), &[0, 1]);
        // A's 1->1 ends (at 4/3 s): uplink 1 has 3/4 spare. A's 1->2 could take it only from
        // B's share on downlink 2; a full decision then would give the same rates as before
        // (A's Γ is still its uplink 0, B is still blocked), so the hand-on must too.
        c.loads(&fabric, &[1.0, 1.0, 0.75, 0.0], &[1.0, 0.75, 1.0, 0.0]);
        coflows[0].flows[1].remaining_bytes = 0.0;
        rates.per_coflow[0][1] = 0.0;
        c.flow_ended(1, 1, 0.75);
        c.hand_on(sched.as_mut(), &snap(&fabric, &coflows), &mut rates);
        assert_eq!(
            rates.per_coflow,
            vec![vec![1.0, 0.0, 0.25], vec![0.0, 0.75]]
        );
        // The full decision, on the coflows as a world gives them (finished flows gone).
        coflows[0] = CoflowState::of_flows(&[(0, 0, 4.0), (1, 2, 1.0)]);
        let mut full = Rates::default();
        full.reset(&coflows);
        let mut again = build(SchedulerKind::Fifo, &SchedOptions::default());
        again.allocate(&snap(&fabric, &coflows), &mut full);
        assert_eq!(full.per_coflow, vec![vec![1.0, 0.25], vec![0.0, 0.75]]);
    }

    #[test]
    fn under_fifo_a_blocked_coflow_handed_a_port_takes_no_served_coflows_rate() {
        // A = {0->0: 4, 1->2: 1}: Γ = 4, rates 1 and 1/4. C = {3->3: 1/2}: rate 1. B = {0->1: 1,
        // 3->2: 5} is blocked (uplink 0) and its share finds no room (uplink 3 is C's); backfill
        // gives A's 1->2 the rest of downlink 2 (1 in all). C ends: B's 3->2, first in the
        // hand-on, finds uplink 3 free and downlink 2 held by A. Taking it would stall A's
        // 1->2 (its MADD rate included) until B's 5 bytes are through and end A at 6, not 4.
        let fabric = Fabric::uniform(4, 1.0);
        let mut coflows = vec![
            CoflowState::of_flows(&[(0, 0, 4.0), (1, 2, 1.0)]),
            CoflowState::of_flows(&[(3, 3, 0.5)]),
            CoflowState::of_flows(&[(0, 1, 1.0), (3, 2, 5.0)]),
        ];
        coflows[1].id = 2;
        coflows[2].id = 3;
        let mut sched = build(SchedulerKind::Fifo, &SchedOptions::default());
        let mut c = DecisionClock::new(sched.as_ref(), ClockOptions::default());
        let mut rates = Rates::default();
        c.decide(sched.as_mut(), &snap(&fabric, &coflows), &mut rates);
        let before = vec![vec![1.0, 1.0], vec![1.0], vec![0.0, 0.0]];
        assert_eq!(rates.per_coflow, before);
        c.loads(&fabric, &[1.0, 1.0, 0.0, 1.0], &[1.0, 0.0, 1.0, 1.0]);
        coflows[1].flows[0].remaining_bytes = 0.0;
        rates.per_coflow[1][0] = 0.0;
        c.flow_ended(3, 3, 1.0);
        c.hand_on(sched.as_mut(), &snap(&fabric, &coflows), &mut rates);
        assert_eq!(
            rates.per_coflow,
            vec![vec![1.0, 1.0], vec![0.0], vec![0.0, 0.0]]
        );
    }

    #[test]
    fn orderings_without_the_share_still_take_the_port_back_by_priority() {
        // The same coflows under SCF (smallest largest flow first: A's 4 before B's 10), no
        // share: B's 2->2 gets downlink 2's 3/4 by backfill, and A's 1->2, handed uplink 1,
        // takes it back (priority kept).
        let fabric = Fabric::uniform(4, 1.0);
        let mut coflows = two_coflows();
        let mut sched = build(SchedulerKind::Scf, &SchedOptions::default());
        let mut c = DecisionClock::new(sched.as_ref(), ClockOptions::default());
        let mut rates = Rates::default();
        c.decide(sched.as_mut(), &snap(&fabric, &coflows), &mut rates);
        assert_eq!(
            rates.per_coflow,
            vec![vec![1.0, 0.75, 0.25], vec![0.0, 0.75]]
        );
        c.loads(&fabric, &[1.0, 1.0, 0.75, 0.0], &[1.0, 0.75, 1.0, 0.0]);
        coflows[0].flows[1].remaining_bytes = 0.0;
        rates.per_coflow[0][1] = 0.0;
        c.flow_ended(1, 1, 0.75);
        c.hand_on(sched.as_mut(), &snap(&fabric, &coflows), &mut rates);
        assert_eq!(rates.per_coflow, vec![vec![1.0, 0.0, 1.0], vec![0.0, 0.0]]);
    }
}
