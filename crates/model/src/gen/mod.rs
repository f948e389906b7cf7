//! Synthetic workloads, always from an explicit seed (`ChaCha8Rng::seed_from_u64`): the same
//! spec and seed give the same trace on every platform.
//!
//! - [`custom`]: CoflowSim's CUSTOM-style generator, coflows drawn from width/length classes;
//! - [`fb`]: the FB trace resampled to any number of coflows and any load;
//! - [`tpcds`]: TPC-DS-like DAG workloads (queries as DAGs of stages, sizes from a base trace);
//! - [`hug`]: the two-coflow and three-coflow workloads of HUG's cluster experiments.
//!
//! Both produce equal-split mapper x reducer coflows, so their output is writable in both trace
//! formats.

mod arrivals;
pub mod concurrent;
pub mod custom;
pub mod fb;
pub mod hug;
pub mod tpcds;
pub mod waves;
mod width;

pub use custom::{default_classes, ClassSpec, CustomSpec};
pub use fb::FbScaleSpec;
pub use tpcds::{ChildSenders, TpcdsSpec};

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum GenError {
    #[error(
        "invalid class `{text}`: {why} (expected NAME:FRACTION:MINW-MAXW:MINMB-MAXMB, \
         e.g. SN:0.52:1-50:0.1-5)"
    )]
    BadClassText { text: String, why: String },
    #[error("class {name}: {why}")]
    BadClass { name: String, why: String },
    #[error("class fractions sum to {sum}, not 1 (tolerance 1e-6)")]
    Fractions { sum: f64 },
    #[error("{field}: {why}")]
    BadSpec { field: &'static str, why: String },
}

#[cfg(test)]
mod tests;
