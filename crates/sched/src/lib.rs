//! Inter-coflow schedulers: pure, deterministic functions from what a coordinator knows (the
//! fabric, the active coflows, bytes sent, sizes for clairvoyant policies, the current time) to
//! per-flow rates. The flow-level simulator and the real coordinator call this same code; a
//! scheduler never owns the clock, it is told the time and may ask to be called again.

pub mod alloc;
pub mod blind;
pub mod clock;
pub mod dag;
mod machinery;
mod pair_policy;
pub mod policy;
pub mod probe;
pub mod registry;
pub mod select;
pub mod state;
pub mod tenant;

pub use clock::{ClockCounts, ClockOptions, DecisionClock, Event, Handed, PairRater, Step};
pub use dag::{DagError, DagIds, DagPos};
pub use pair_policy::PairShare;
pub use registry::build_with_board;
pub use registry::{build, SchedOptions, SchedulerKind, UnknownScheduler};
pub use state::{CoflowState, Decision, FlowCompletion, FlowState, Rates, Snapshot};

/// One inter-coflow scheduling policy: what it is called, whether it reads flow sizes, its
/// rates for a snapshot, and what a single flow's end calls for. When a world calls it is the
/// [`clock::DecisionClock`]'s business; the machinery of handing freed bandwidth on between
/// decisions is private to this crate (policies live here, see DESIGN.md).
pub trait Scheduler: Send + machinery::Machinery {
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
}
