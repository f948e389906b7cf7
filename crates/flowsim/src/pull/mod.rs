//! Pull-based shuffles (BASHuffler, spec A): reduce tasks fetch map outputs with a few fetcher
//! threads each, and a source-selection policy decides where every new fetch comes from.
//!
//! - [`engine`]: the exact event-driven fluid simulation of jobs' shuffles;
//! - [`rounds`]: the paper's §4.3 utilization simulation (decisions only, no bytes);
//! - [`workload`]: synthetic jobs and the coflow-trace mapping.

pub mod engine;
pub mod outcome;
pub mod rounds;
pub mod workload;

pub use engine::{
    simulate_pull, simulate_pull_observed, PullError, PullOptions, PullProgress, OBSERVE_EVERY,
};
pub use outcome::{JobOutcome, PullOutput, TaskOutcome};
pub use rounds::{simulate_rounds, RoundsOutput, RoundsSpec};
pub use workload::{from_trace, Fetch, Job, LocalFetch, ReduceTask, SyntheticSpec};
