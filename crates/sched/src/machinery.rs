//! What a policy offers the decision clock besides its decisions: the machinery of handing
//! freed bandwidth on between them. Private to this crate (a sealed supertrait of
//! [`Scheduler`](crate::Scheduler)): worlds reach it only through [`crate::clock`].

use crate::alloc::{Freed, TopUp};
use crate::pair_policy::PairPolicy;
use crate::{Rates, Snapshot};

/// Every policy implements it (all methods have defaults: no hand-on machinery).
pub trait Machinery {
    /// The port index of the last decision, for [`crate::FlowCompletion::Redistribute`];
    /// `None` for policies that do not redistribute.
    fn topup(&mut self) -> Option<&mut TopUp> {
        None
    }

    /// The last decision's coflows in the policy's priority order (see
    /// [`crate::clock::priority_order`]): by default the order freed bandwidth is handed on in.
    /// A policy whose hand-on order differs from its priority order (`fifo` with the blocked
    /// coflows' share) says its own.
    fn priority_order(&mut self) -> &[u32] {
        self.topup().map_or(&[], |t| t.order())
    }

    /// The policy as a [`PairPolicy`], when its rates depend only on a flow's port pair (as
    /// configured): then a world may keep state per pair. `None` otherwise.
    fn pair_policy(&mut self) -> Option<&mut dyn PairPolicy> {
        None
    }

    /// Flows ended since the last decision and their bandwidth is back in `freed.spare`: hand
    /// it out as [`TopUp::apply`] does (rates added to `rates`, taken from `freed.spare`,
    /// listed in `freed.changed`) and return true, or return false to ask for a full decision.
    /// `snap` holds the state of the last decision, the finished flows' `remaining_bytes` at 0.
    fn redistribute(&mut self, snap: &Snapshot, rates: &mut Rates, freed: &mut Freed) -> bool {
        match self.topup() {
            Some(t) => {
                t.apply(snap.coflows, rates, freed);
                true
            }
            None => false,
        }
    }

    /// Nothing runs: every flow that had a rate ended (those of the last event among them, now
    /// in `freed`), `freed.spare` is the whole fabric (if [`Machinery::idle_reads_spare`] said
    /// so at the last decision; else as the hand-ons left it), and the unfinished flows' bytes in
    /// `snap` are current at `snap.now_s`. Hand the bandwidth on exactly as a full decision at
    /// `snap.now_s` would rate the flows (the same rates, bit for bit, and no other effect on
    /// later decisions: no wake-up, no state a decision would set otherwise) and return true;
    /// or return false to ask for that decision. The default asks.
    ///
    /// Why: a policy that serves an incast one flow at a time empties the fabric at every
    /// flow end, and a full decision there costs O(active flows + ports) (docs/reliability.md,
    /// A4), where this costs what a hand-on does.
    fn idle(&mut self, _snap: &Snapshot, _rates: &mut Rates, _freed: &mut Freed) -> bool {
        false
    }

    /// Whether [`Machinery::idle`] may hand on after the last decision and read
    /// `freed.spare` then: the clock keeps the ports whose spare moved since that decision,
    /// to give them their capacities back (a cost on every hand-on, so only when asked).
    fn idle_reads_spare(&self) -> bool {
        false
    }
}
