//! Inter-coflow schedulers: pure, deterministic functions from what a coordinator knows (the
//! fabric, the active coflows, bytes sent, sizes for clairvoyant policies, the current time) to
//! per-flow rates. The flow-level simulator and the real coordinator call this same code; a
//! scheduler never owns the clock, it is told the time and may ask to be called again.

pub mod alloc;
pub mod dag;
pub mod pair_policy;
pub mod policy;
pub mod registry;
pub mod select;
pub mod state;
pub mod tenant;

use alloc::{Freed, TopUp};

pub use dag::{DagError, DagIds, DagPos};
pub use pair_policy::{PairPolicy, PairShare};
pub use registry::{build, SchedOptions, SchedulerKind, UnknownScheduler};
pub use state::{CoflowState, Decision, FlowCompletion, FlowState, Rates, Snapshot};

/// One inter-coflow scheduling policy.
pub trait Scheduler: Send {
    /// The name users select it by.
    fn name(&self) -> &str;

    /// True when the policy reads flow sizes (`remaining_bytes`); such a policy needs a world
    /// that knows them at registration.
    fn clairvoyant(&self) -> bool;

    /// Rates for every unfinished flow in `snap`, written into `rates` (already shaped like the
    /// snapshot and zeroed). Rates never exceed any port's capacity. Called on every arrival,
    /// every completion and at the wake-up it asked for.
    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision;

    /// What the end of a single flow calls for. Per-flow policies (TCP-like sharing, SRTF)
    /// recompute on every flow completion (the default); the thesis' Varys reschedules only on
    /// coflow arrival and completion (§5.5), leaving a flow's bandwidth idle until then.
    fn on_flow_completion(&self) -> FlowCompletion {
        FlowCompletion::Recompute
    }

    /// The port index of the last decision, for [`FlowCompletion::Redistribute`]; `None`
    /// (the default) for policies that do not redistribute.
    fn topup(&mut self) -> Option<&mut TopUp> {
        None
    }

    /// The policy as a [`PairPolicy`], when its rates depend only on a flow's port pair (as
    /// configured): then a world may keep state per pair. `None` (the default) otherwise.
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
}
