//! Discrete-time packet-level simulator (thesis ch. 4): one timestep is one full packet at the
//! host rate; an idealized fat tree of racks around one logical core switch; switches with
//! per-port FIFO and priority queues; infinite buffers with occupancy measured. It drives the
//! sans-IO protocol nodes of `coflowkit_shuffle::proto` unchanged.
//!
//! `SimConfig`, `SimReport` and `run` are the contract with the CLI (`shuffle sim`,
//! `shuffle sweep`).

mod bounds;
mod config;
mod engine;
mod loss;
mod metrics;
mod network;
mod oracle;
mod preempt;
mod report;
mod topology;
mod variation;

pub use bounds::{Bounds, Steps};
pub use config::{LocalBytes, Placement, Priorities, SimConfig, SimError};
pub use engine::{Progress, Sim};
pub use loss::{Loss, LossCounts};
pub use oracle::Oracles;
pub use preempt::{NodeSchedule, Preemption, Replay};
pub use report::{LossReport, SimReport, UtilSample};
pub use topology::Topology;
pub use variation::{PortVariation, Variation};

use coflowkit_shuffle::matrix::PacketMatrix;

/// Simulates `matrix` under `cfg`. Panics if `cfg` does not suit the matrix; call
/// `cfg.validate(matrix.n)` (or use `try_run`) on user input first.
pub fn run(matrix: &PacketMatrix, cfg: &SimConfig) -> SimReport {
    try_run(matrix, cfg).unwrap_or_else(|e| panic!("{e}"))
}

/// Simulates `matrix` under `cfg`, or says which setting is wrong.
pub fn try_run(matrix: &PacketMatrix, cfg: &SimConfig) -> Result<SimReport, SimError> {
    let mut sim = Sim::new(matrix, cfg)?;
    sim.run_to_end();
    Ok(SimReport::of(&sim, matrix))
}

/// As [`try_run`], calling `seen` every `every` timesteps with how far the run has come (for
/// progress output of long runs; the simulator itself reads no clock).
pub fn try_run_observed(
    matrix: &PacketMatrix,
    cfg: &SimConfig,
    every: u64,
    mut seen: impl FnMut(Progress),
) -> Result<SimReport, SimError> {
    let mut sim = Sim::new(matrix, cfg)?;
    let every = every.max(1);
    while !sim.finished() && !sim.stuck() {
        sim.step();
        if sim.now() % every == 0 {
            seen(sim.progress());
        }
    }
    Ok(SimReport::of(&sim, matrix))
}
