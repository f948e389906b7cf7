//! Policies whose rates depend only on a flow's port pair and weight (`fair`, `wss`): all the
//! flows of an (uplink, downlink) pair have the same bottleneck, so a pair's rate is one
//! number and its flows split it by a fixed rule. A world that keeps state per pair (the
//! simulator's pair world) asks for pair rates directly; `Scheduler::allocate` stays the
//! per-flow answer for everyone else (and the reference the pair world is tested against).

use coflowkit_model::Fabric;

use crate::alloc::Demand;

/// How a pair's rate is split among its flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairShare {
    /// Equally: a pair's weight is its number of flows (per-flow max-min).
    Equal,
    /// In proportion to the bytes each flow has left: a pair's weight is its bytes left, and
    /// its flows finish together.
    Remaining,
}

pub trait PairPolicy {
    fn share(&self) -> PairShare;

    /// Rates of `pairs` on the whole fabric at `now_s`, with the weights
    /// [`PairPolicy::share`] defines, written into `rates[i]` for `pairs[i]`: the same rates
    /// `allocate` gives the pair's flows in sum. With `lowered`, only the weights at those
    /// positions went down since the last call (0: the pair is gone), apart from bytes left
    /// draining at the rates given, and `rates` holds the last answer, so the policy may redo
    /// only what can change. Returns the positions it rewrote (`None`: all).
    fn allocate_pairs(
        &mut self,
        fabric: &Fabric,
        pairs: &[Demand],
        lowered: Option<&[u32]>,
        rates: &mut [f64],
        now_s: f64,
    ) -> Option<&[u32]>;
}
