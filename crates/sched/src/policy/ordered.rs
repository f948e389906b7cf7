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
}

impl Ordered {
    pub fn new(order: Order, backfill: Backfill, on_flow_completion: FlowCompletion) -> Self {
        Ordered {
            order,
            backfill,
            on_flow_completion,
            share_blocked: order.shares_blocked_by_default(),
            core: OrderedCore::default(),
        }
    }
}

impl Machinery for Ordered {
    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.core.topup)
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
        if self.share_blocked && !non_preemptive {
            share_among_blocked(&blocked, snap.coflows, &mut self.core.budget, rates);
        }
        self.core
            .backfill_in_order(self.backfill, &order, snap, rates);
        if self.on_flow_completion == FlowCompletion::Redistribute {
            self.core.topup.index(snap.fabric.ports(), order);
        }
        Decision::none()
    }
}
