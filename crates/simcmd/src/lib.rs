//! The simulator commands' front half: `coflowkit sim` and `coflowkit shuffle sim` as a library.
//! Their flags (clap structs), the runs from parsed flags to results, and the result documents
//! (JSON, CSV, SVG). The `coflowkit` binary prints the results as tables; the Python package
//! (`python/`) parses keywords into the same structs and returns the same documents, so both
//! have one implementation of every flag, default, check, message and column.
//!
//! Errors are `anyhow` here as in the binary: this crate is the command line's code, its
//! messages name flags (`--deadlines must be ...`), and both callers only show them.

pub mod engine_args;
pub mod fabric_args;
pub mod flag_range;
pub mod jobs;
pub mod outputs;
pub mod plot;
pub mod report;
pub mod sched_args;
pub mod shuffle;
pub mod sim;
pub mod sim_memory;
pub mod stages;
pub mod tenant_report;
