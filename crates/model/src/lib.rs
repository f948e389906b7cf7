//! The bottom layer of coflowkit: what a coflow is, what the fabric is, and how traces and
//! synthetic workloads are read, written and generated. No policy and no clock live here.

pub mod bins;
pub mod coflow;
pub mod deadlines;
pub mod echo;
pub mod fabric;
pub mod fabric_file;
pub mod gen;
pub mod input;
pub mod out_path;
pub mod small_file;
pub mod stats;
pub mod trace;
pub mod units;

pub use coflow::{Coflow, CoflowId, Flow, Trace};
pub use fabric::Fabric;
