//! Policies whose rates depend only on a flow's port pair and weight (`fair`, `wss`): all the
//! flows of an (uplink, downlink) pair have the same bottleneck, so a pair's rate is one
//! number and its flows split it by a fixed rule. A world that keeps state per pair (the
//! simulator's pair world) asks for pair rates directly; `Scheduler::allocate` stays the
//! per-flow answer for everyone else (and the reference the pair world is tested against).

use crate::alloc::{Drift, Refill};

/// How a pair's rate is split among its flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairShare {
    /// Equally: a pair's weight is its number of flows (per-flow max-min).
    Equal,
    /// In proportion to the bytes each flow has left: a pair's weight is its bytes left, and
    /// its flows finish together.
    Remaining,
}

impl PairShare {
    /// How the weights of pairs that keep their rates move between decisions: flow counts
    /// stay, bytes left drain.
    pub fn drift(self) -> Drift {
        match self {
            PairShare::Equal => Drift::Still,
            PairShare::Remaining => Drift::Draining,
        }
    }
}

/// A policy that rates pairs by weighted max-min, with the weights [`PairPolicy::share`]
/// defines: the same rates `allocate` gives the pairs' flows in sum.
pub trait PairPolicy {
    fn share(&self) -> PairShare;

    /// Its water-filling, kept between decisions so that one after completions alone redoes
    /// only what can change ([`Refill::answer`]).
    fn refill(&mut self) -> &mut Refill;
}
