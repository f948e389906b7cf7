//! BASHuffler fetch-source selection (spec A3): when a reduce task's fetcher frees up, which
//! node holding one of its pending map outputs should it pull from next? Every policy is a
//! deterministic function of the cluster state (capacities, the pattern of scheduled flows,
//! load counts and a seeded RNG), so the flow-level simulator and a real YARN integration call
//! the same code.
//!
//! - [`random`]: Hadoop's choice, uniform over the pending nodes (RSS);
//! - [`gss`]: the pending node that maximizes the pattern's max-min utilization;
//! - [`pgss`]: GSS restricted to the pending nodes with the largest load count (Algorithm 1);
//! - [`optimal`]: several fetchers at once, every multiset of sources tried (small cases);
//! - [`cache`]: the caller-side pre-scheduling cache of the YARN integration (§3.5).

pub mod bandwidth;
pub mod cache;
pub mod cluster;
pub mod gss;
pub mod optimal;
pub mod pgss;
pub mod random;
mod scan;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use bandwidth::Bandwidth;
pub use cache::FetchCache;
pub use cluster::ClusterState;
pub use optimal::multisets;

/// A source-selection policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Policy {
    /// Random Source Selection: Hadoop's `ShuffleSchedulerImpl.getHost()`.
    Random,
    /// Greedy Source Selection.
    Gss,
    /// Partially Greedy Source Selection (the paper's Algorithm 1).
    Pgss,
    /// The online optimum over every multiset of sources for the free fetchers.
    Opt,
}

impl Policy {
    pub const ALL: [Policy; 4] = [Policy::Random, Policy::Gss, Policy::Pgss, Policy::Opt];

    pub fn name(self) -> &'static str {
        match self {
            Policy::Random => "random",
            Policy::Gss => "gss",
            Policy::Pgss => "pgss",
            Policy::Opt => "opt",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("unknown selection policy `{0}` (use random, gss, pgss or opt)")]
pub struct UnknownPolicy(pub String);

impl FromStr for Policy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "random" | "rss" => Ok(Policy::Random),
            "gss" => Ok(Policy::Gss),
            "pgss" => Ok(Policy::Pgss),
            "opt" | "optimal" => Ok(Policy::Opt),
            _ => Err(UnknownPolicy(s.to_string())),
        }
    }
}

/// A pending source of one reduce task: a node and how many of the task's map outputs it still
/// holds (each output is one fetch, one flow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub node: u32,
    pub outputs: u32,
}

impl Source {
    /// One output on each of `nodes` (the paper's examples and its §4.3 simulation).
    pub fn each(nodes: &[u32]) -> Vec<Source> {
        nodes
            .iter()
            .map(|&node| Source { node, outputs: 1 })
            .collect()
    }
}

/// What makes a pending node one of PGSS's "heaviest-loaded".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Heaviest {
    /// The largest load count (Algorithm 1 as written).
    #[default]
    Count,
    /// The largest load count per unit of uplink capacity: the longest predicted drain time.
    /// Not in the paper; an exploration for heterogeneous clusters (docs/bashuffler-results.md).
    Time,
}

impl FromStr for Heaviest {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "count" => Ok(Heaviest::Count),
            "time" => Ok(Heaviest::Time),
            _ => Err(format!("unknown heaviest rule `{s}` (use count or time)")),
        }
    }
}

/// Knobs where the paper leaves room (docs/bashuffler.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SelectOptions {
    /// Utilizations within this fraction of the largest link capacity are a tie (then the
    /// shuffled scan order decides).
    pub tie_tolerance: f64,
    /// `opt` refuses a request with more multisets than this.
    pub max_combinations: u64,
    /// PGSS's notion of heaviest.
    pub heaviest: Heaviest,
}

impl Default for SelectOptions {
    fn default() -> Self {
        SelectOptions {
            tie_tolerance: 1e-9,
            max_combinations: 1_000_000,
            heaviest: Heaviest::Count,
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum SelectError {
    #[error("node {node} is not in the cluster ({nodes} nodes)")]
    UnknownNode { node: u32, nodes: usize },
    #[error("node {0} has deregistered")]
    Absent(u32),
    #[error("node {0} is listed twice among the pending sources")]
    DuplicateSource(u32),
    #[error("pending source {0} has no outputs left")]
    EmptySource(u32),
    #[error("no scheduled flow {src} -> {dst} to release")]
    NoSuchFlow { src: u32, dst: u32 },
    #[error("opt would try {combinations} source multisets, above the limit {limit}")]
    TooManyCombinations { combinations: u128, limit: u64 },
    #[error("capacity {0} bytes/s must be positive and finite")]
    BadCapacity(f64),
}
