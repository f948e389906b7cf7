//! MilliQuery (spec millisort.md §3, §8.4): the flash-burst paper's three SQL queries as
//! distributed plans over the group library, on CSV tablets from seeded generators.
//!
//! - `gen`: the synthetic tables, one tablet per rank per table.
//! - `tablet`: loading one rank's tablets, with errors naming file, line and field.
//! - `plan`: each plan's per-rank steps as pure functions (scan, combine, partition, dedupe,
//!   join, pre-aggregate, top-K, the gather merges).
//! - `drive`: the plans over a `Group` (the collectives between the steps), timed per phase,
//!   and rank 0's report.
//! - `rows`: the result rows and the total order of each top-K (ties by key ascending).
//! - `oracle` (feature `oracle`): SQLite running the queries' SQL on the same tablets.

mod codec;
pub mod drive;
mod error;
pub mod gen;
pub mod hash;
#[cfg(feature = "oracle")]
pub mod oracle;
pub mod plan;
pub mod rows;
pub mod tablet;

pub use drive::{run_query, Data, HotKeys, Options, Query, QueryReport};
pub use error::QueryError;
pub use rows::Answer;
