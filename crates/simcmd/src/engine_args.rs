//! Simulator knobs shared by `sim` and `bench`.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use crate::flag_range::zero_or_sim_step_s;
use coflowkit_flowsim::{Dependencies, SimOptions};

/// What a coflow's parents (`parents` in a coflow-benchmark line) mean in a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DepsArg {
    /// Barriers: a child is released when its last parent has ended and its compute time
    /// (`compute` in the trace) has passed; CCTs count from the release
    StartsAfter,
    /// Pipelined stages: a child arrives at its trace arrival and runs beside its parents
    /// (compute times are ignored); only the scheduler orders them (Aalo: behind its parents)
    FinishesBefore,
}

#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Policies that recompute on flow completions (fair, pfp, wss, and the orderings with
    /// `--on-flow-completion recompute`) decide at most once per S seconds on account of flow
    /// completions; 0 = exact. Trades accuracy for speed on large traces
    #[arg(long, default_value_t = 0.0, value_name = "S", value_parser = zero_or_sim_step_s())]
    pub flow_quantum: f64,
    /// Policies that redistribute freed bandwidth (the default for varys and the orderings)
    /// also take a full decision at a flow completion once S seconds passed since the last
    /// one, re-planning every coflow's rates; unset = full decisions on coflow events only
    #[arg(long, value_name = "S", value_parser = zero_or_sim_step_s())]
    pub refresh: Option<f64>,
    /// Keep simulator state per flow for fair and wss too (they run per port pair by default,
    /// with the same results up to float rounding): the slower reference path
    #[arg(long)]
    pub per_flow: bool,
    /// What a coflow's parents mean, for traces with DAGs (docs/traces.md)
    #[arg(long, value_enum, default_value_t = DepsArg::StartsAfter, value_name = "HOW")]
    pub dependencies: DepsArg,
    /// Schedulers see no DAGs (each coflow its own entity) while the replay still holds
    /// children for their parents and compute: Aalo without its DAG rule, an ablation
    #[arg(long)]
    pub hide_dags: bool,
}

impl EngineArgs {
    pub fn options(&self) -> Result<SimOptions> {
        if !(self.flow_quantum >= 0.0 && self.flow_quantum.is_finite()) {
            bail!("--flow-quantum must be a non-negative number of seconds");
        }
        if let Some(s) = self.refresh {
            if !(s >= 0.0 && s.is_finite()) {
                bail!("--refresh must be a non-negative number of seconds");
            }
        }
        Ok(SimOptions {
            flow_quantum_s: self.flow_quantum,
            refresh_s: self.refresh,
            dependencies: match self.dependencies {
                DepsArg::StartsAfter => Dependencies::StartsAfter,
                DepsArg::FinishesBefore => Dependencies::FinishesBefore,
            },
            per_flow: self.per_flow,
            hide_dags: self.hide_dags,
        })
    }
}
