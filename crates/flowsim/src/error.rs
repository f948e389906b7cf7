//! What can go wrong in a simulation: bad input, or a policy that breaks its promises.

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum SimError {
    #[error("coflow {coflow}: flow uses port {port}, but the fabric has {ports} ports")]
    PortOutOfRange {
        coflow: u64,
        port: u32,
        ports: usize,
    },
    #[error("coflow {coflow}: flow of {bytes} bytes: sizes must be finite and non-negative")]
    BadSize { coflow: u64, bytes: f64 },
    #[error("scheduler `{scheduler}` at t={time_s}s: {dir} of port {port} carries {load} B/s, above its capacity {cap} B/s")]
    OverCapacity {
        scheduler: String,
        time_s: f64,
        dir: &'static str,
        port: usize,
        load: f64,
        cap: f64,
    },
    #[error("scheduler `{scheduler}` at t={time_s}s gave a flow the invalid rate {rate}")]
    BadRate {
        scheduler: String,
        time_s: f64,
        rate: f64,
    },
    #[error("dependencies: {0}")]
    Dag(#[from] coflowkit_sched::DagError),
    #[error("scheduler `{scheduler}` stalled at t={time_s}s: {flows} flows left, none has a rate, and nothing is due to happen")]
    Stalled {
        scheduler: String,
        time_s: f64,
        flows: usize,
    },
}
