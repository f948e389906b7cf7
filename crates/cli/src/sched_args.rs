//! Scheduler selection and every scheduler option, as flags.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use coflowkit_sched::alloc::Backfill;
use coflowkit_sched::policy::varys::Starvation;
use coflowkit_sched::{SchedOptions, SchedulerKind};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BackfillArg {
    Greedy,
    Proportional,
    None,
}

#[derive(Args, Debug, Clone)]
pub struct SchedArgs {
    /// Schedulers to run, comma-separated, or `all`. Names: fair, pfp, fifo, scf, ncf, tcf,
    /// sebf, wss, varys, aalo, saath, sincronia
    #[arg(long, short = 's', default_value = "all", value_name = "LIST")]
    pub scheduler: String,
    /// fair: at most N concurrent flows per reducer and coflow (Hadoop fetches with 5)
    #[arg(long, value_name = "N")]
    pub fair_max_per_reducer: Option<usize>,
    /// Work conservation of the coflow orderings and Varys: greedy (CoflowSim), proportional
    /// (thesis Pseudocode 1), none
    #[arg(long, value_enum, default_value = "greedy")]
    pub backfill: BackfillArg,
    /// varys: length T of a starvation interval, seconds
    #[arg(long, default_value_t = 2.0, value_name = "S")]
    pub varys_t: f64,
    /// varys: length δ of the starvation-avoidance interval, seconds
    #[arg(long, default_value_t = 0.2, value_name = "S")]
    pub varys_delta: f64,
    /// varys: turn starvation avoidance off (pure SEBF + MADD)
    #[arg(long)]
    pub no_starvation: bool,
}

impl SchedArgs {
    pub fn kinds(&self) -> Result<Vec<SchedulerKind>> {
        if self.scheduler.trim() == "all" {
            return Ok(SchedulerKind::ALL.to_vec());
        }
        let mut kinds = Vec::new();
        for name in self.scheduler.split(',').filter(|s| !s.trim().is_empty()) {
            let k: SchedulerKind = name.parse()?;
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        if kinds.is_empty() {
            bail!("--scheduler: no scheduler named");
        }
        Ok(kinds)
    }

    pub fn options(&self) -> Result<SchedOptions> {
        if !(self.varys_t > 0.0 && self.varys_delta > 0.0) {
            bail!("--varys-t and --varys-delta must be positive seconds");
        }
        let mut o = SchedOptions {
            fair_max_per_reducer: self.fair_max_per_reducer,
            backfill: match self.backfill {
                BackfillArg::Greedy => Backfill::Greedy,
                BackfillArg::Proportional => Backfill::Proportional,
                BackfillArg::None => Backfill::None,
            },
            ..Default::default()
        };
        o.varys.backfill = o.backfill;
        o.varys.starvation = (!self.no_starvation).then_some(Starvation {
            t_s: self.varys_t,
            delta_s: self.varys_delta,
        });
        if self.fair_max_per_reducer == Some(0) {
            bail!("--fair-max-per-reducer must be at least 1");
        }
        Ok(o)
    }
}
