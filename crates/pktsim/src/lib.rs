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
    seen: impl FnMut(Progress),
) -> Result<SimReport, SimError> {
    try_run_afforded(matrix, cfg, every, seen, |_| Ok(()))
}

/// As [`try_run_observed`], first asking `afford` whether the bytes the preemption oracles
/// will replay ([`Oracles::replay_bytes`], known once the run's lower bound is) fit; a refusal
/// comes back, before any timestep, as a setting error naming `preempt-interval-rtt`.
pub fn try_run_afforded(
    matrix: &PacketMatrix,
    cfg: &SimConfig,
    every: u64,
    mut seen: impl FnMut(Progress),
    afford: impl FnOnce(u64) -> Result<(), String>,
) -> Result<SimReport, SimError> {
    let mut sim = Sim::new(matrix, cfg)?;
    if cfg.preempt.on() {
        let hint = sim.bounds.lower().value().ceil() as u64;
        let bytes = Oracles::replay_bytes(matrix.n, &cfg.preempt, hint);
        afford(bytes).map_err(|why| SimError::Config {
            field: "preempt-interval-rtt",
            why: format!(
                "the preemption oracles would replay {} nodes over {} timesteps (--preempt {}, \
                 mean interval {} timesteps): {why}; use a shorter --preempt-interval-rtt, a \
                 larger --preempt or fewer nodes",
                matrix.n,
                Oracles::first_horizon(&cfg.preempt, hint),
                cfg.preempt.fraction,
                cfg.preempt.mean_steps
            ),
        })?;
    }
    let every = every.max(1);
    while !sim.finished() && !sim.stuck() {
        sim.step();
        if sim.now() % every == 0 {
            seen(sim.progress());
        }
    }
    Ok(SimReport::of(&sim, matrix))
}
