//! The simulated world for inter-coflow scheduling: an exact event-driven fluid model of a
//! non-blocking fabric. Rates are piecewise constant between events; the next event is the
//! earliest of an arrival, a flow completion, or a wake-up the scheduler asked for. There is no
//! time step. The schedulers are the shared ones of `coflowkit-sched`.
//!
//! [`coflowsim`] is the other model: the reference simulator CoflowSim's rules (8 ms steps,
//! 10.24 s admission epochs, its own eight algorithms), for checking results against it.

pub mod coflowsim;
mod dag;
pub mod engine;
mod error;
pub mod jobs;
pub mod outcome;
mod pair_world;
pub mod pull;
pub mod summary;
mod world;

pub use engine::{simulate, simulate_with, Dependencies, SimOptions};
pub use error::SimError;
pub use jobs::{JobOutcome, JobSummary};
pub use outcome::{CoflowOutcome, SimOutput};
pub use summary::Summary;
