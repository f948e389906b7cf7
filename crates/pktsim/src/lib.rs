//! Discrete-time packet-level simulator (thesis ch. 4): one timestep is one full packet at the
//! host rate; an idealized fat tree of racks around one logical core switch; switches with
//! per-input RX queues and priority output queues; infinite buffers with occupancy measured.
//!
//! SKELETON: `SimConfig`, `SimReport` and `run` are the contract with the CLI (`shuffle sim`,
//! `shuffle sweep`); fields may be added, these names stay.

use coflowkit_shuffle::matrix::PacketMatrix;
use serde::{Deserialize, Serialize};

/// One simulation's settings. `protocol` is a name such as `grpf`, `hadoop-5`, `madd`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub racks: usize,
    pub protocol: String,
    pub seed: u64,
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    pub protocol: String,
    pub nodes: usize,
    pub completion_s: f64,
    pub throughput_gbps: f64,
    pub bound_gbps: f64,
    pub optimality: f64,
    pub peak_buffer_bytes: u64,
    /// Aggregate uplink and downlink utilization over time, for the utilization chart.
    pub utilization: Vec<UtilSample>,
}

/// Fraction of host uplinks and downlinks carrying data at `time_s` (each in [0, 1]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UtilSample {
    pub time_s: f64,
    pub up: f64,
    pub down: f64,
}

/// Simulates `matrix` under `cfg`.
pub fn run(_matrix: &PacketMatrix, _cfg: &SimConfig) -> SimReport {
    todo!("packet simulator")
}
