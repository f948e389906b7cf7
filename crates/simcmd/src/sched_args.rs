//! Scheduler selection and every scheduler option, as flags.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use coflowkit_model::units::MB;
use coflowkit_sched::alloc::Backfill;
use coflowkit_sched::policy::dclas::{InterQueue, Queues};
use coflowkit_sched::policy::varys::Starvation;
use coflowkit_sched::tenant::{NcVector, Stage1};
use coflowkit_sched::{FlowCompletion, SchedOptions, SchedulerKind};

use crate::flag_range::{f64_in, sim_step_s, zero_or_sim_step_s};

/// Aalo's and Saath's first queue, MB: from one byte to 2^33 MB (the largest size a trace holds
/// exactly). Below a byte every coflow starts past Q1 and the queues' crossings come at once.
const Q1_MB: (f64, f64) = (1e-6, 8_589_934_592.0);

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FlowCompletionArg {
    Redistribute,
    Recompute,
    Ignore,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BackfillArg {
    Greedy,
    Proportional,
    None,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HugModeArg {
    Noncooperative,
    Cooperative,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HugStage1Arg {
    Auto,
    MultiRound,
    ClosedForm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HugVectorsArg {
    Flows,
    Ones,
    Rates,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TenantsArg {
    Coflow,
}

#[derive(Args, Debug, Clone)]
pub struct SchedArgs {
    /// Schedulers to run, comma-separated, or `all`. Names: fair, pfp, fifo, scf, ncf, tcf,
    /// sebf, wss, varys, aalo, saath, sincronia; and, not in `all`, the multi-tenant hug, drf,
    /// psp (every coflow a tenant, its vector from MADD; docs/hug.md), and fifo-strict
    /// (non-preemptive FIFO; `fifo` lets later coflows pass a blocked one and gives the blocked
    /// ones a share of the leftovers, as the reference simulator behind the thesis' numbers does)
    #[arg(long, short = 's', default_value = "all", value_name = "LIST")]
    pub scheduler: String,
    /// fair: at most N concurrent flows per reducer and coflow (Hadoop fetches with 5)
    #[arg(long, value_name = "N")]
    pub fair_max_per_reducer: Option<usize>,
    /// Work conservation of the coflow orderings and Varys: greedy (CoflowSim), proportional
    /// (thesis Pseudocode 1, then greedy for what downlink caps leave), none
    #[arg(long, value_enum, default_value = "greedy")]
    pub backfill: BackfillArg,
    /// varys: length T of a starvation interval, seconds
    #[arg(long, default_value_t = 2.0, value_name = "S", value_parser = sim_step_s())]
    pub varys_t: f64,
    /// varys: length δ of the starvation-avoidance interval, seconds
    #[arg(long, default_value_t = 0.2, value_name = "S", value_parser = sim_step_s())]
    pub varys_delta: f64,
    /// varys: turn starvation avoidance off (pure SEBF + MADD)
    #[arg(long)]
    pub no_starvation: bool,
    /// varys, the orderings, sincronia, aalo, saath and pfp: what a single flow's end
    /// triggers. `redistribute` hands its bandwidth to waiting flows on the same ports in
    /// priority order (fast, work conserving; pfp re-runs its greedy exactly); `recompute` takes
    /// a full decision (exact, slow); `ignore` lets it idle until the next coflow event, as the
    /// thesis' Varys does
    #[arg(long, value_enum, default_value_t = FlowCompletionArg::Redistribute, value_name = "HOW")]
    pub on_flow_completion: FlowCompletionArg,
    /// Same as `--on-flow-completion ignore`
    #[arg(long, conflicts_with = "on_flow_completion")]
    pub coflow_events_only: bool,
    /// hug: noncooperative (strategy-proof, spare capped) or cooperative (work-conserving)
    #[arg(
        long,
        value_enum,
        default_value = "noncooperative",
        value_name = "MODE"
    )]
    pub hug_mode: HugModeArg,
    /// hug: how stage 1 finds the guarantees. `auto` (the thesis): Eq 7.2's closed form when
    /// every tenant is elastic; `multi-round`: multi-round DRF (progressive filling), which
    /// lets a coflow off the most loaded links rise until one of its own links fills;
    /// `closed-form`: Eq 7.2 always
    #[arg(long, value_enum, default_value = "auto", value_name = "HOW")]
    pub hug_stage1: HugStage1Arg,
    /// hug, drf, psp: the correlation vector of a coflow whose sizes are unknown and that
    /// reports none (the coordinator's non-clairvoyant coflows). `flows`: one unit per
    /// unfinished flow on each of its ends; `ones`: all-ones on the links it uses (each side
    /// scaled to balance); `rates`: its flows' rates measured over the last 0.1 s or more
    /// (`flows` until measured)
    #[arg(long, value_enum, default_value = "flows", value_name = "HOW")]
    pub hug_vectors: HugVectorsArg,
    /// hug, drf, psp: what a tenant is; `coflow` (every coflow, the only choice so far)
    #[arg(long, value_enum, default_value = "coflow", value_name = "WHO")]
    pub tenants: TenantsArg,
    /// aalo, saath: number of priority queues K
    #[arg(long, default_value_t = 10, value_name = "K")]
    pub queues: usize,
    /// aalo, saath: queue spacing E (each threshold E times the previous)
    #[arg(long, default_value_t = 10.0, value_name = "E")]
    pub queue_spacing: f64,
    /// aalo, saath: upper threshold of the first queue, MB (2^20 bytes)
    #[arg(long, default_value_t = 10.0, value_name = "MB", value_parser = f64_in(Q1_MB.0, Q1_MB.1))]
    pub q1_mb: f64,
    /// aalo: sharing across queues: weighted (the thesis) or strict (CoflowSim)
    #[arg(long, value_enum, default_value = "weighted")]
    pub aalo_inter_queue: InterQueueArg,
    /// aalo: coordination interval Δ, seconds (0 = instantaneous)
    #[arg(long, default_value_t = 0.010, value_name = "S", value_parser = zero_or_sim_step_s())]
    pub aalo_delta: f64,
    /// saath: coordination interval Δ, seconds (0 = event-driven)
    #[arg(long, default_value_t = 0.0, value_name = "S", value_parser = zero_or_sim_step_s())]
    pub saath_delta: f64,
    /// saath: bounded wait before a passed-over coflow goes first, seconds (0 = off)
    #[arg(long, default_value_t = 5.0, value_name = "S", value_parser = zero_or_sim_step_s())]
    pub saath_starvation: f64,
    /// fifo, scf, ncf, tcf, sebf: whether the coflows MADD could not serve (a port they need
    /// is full) share the leftovers before work conservation, as the reference simulator's
    /// skipped coflows do [default: on for fifo, off for the others]
    #[arg(long, value_enum, value_name = "ON|OFF")]
    pub blocked_share: Option<OnOff>,
    /// aalo-uncoord: coflows arriving at the same instant are ordered by each sender on its
    /// own (a per-port shuffle) instead of in one order all senders share (Theorem C.1.1)
    #[arg(long)]
    pub uncoord_local_ties: bool,
    /// pfp: order flows by bytes left only, ignoring deadlines (the reference simulator's
    /// PDQ in its deadline mode) instead of earliest deadline first
    #[arg(long)]
    pub pfp_ignore_deadlines: bool,
    /// saath: turn off all-or-none (ablation)
    #[arg(long)]
    pub saath_no_all_or_none: bool,
    /// saath: FIFO instead of least-contention-first inside a queue (ablation)
    #[arg(long)]
    pub saath_no_lcof: bool,
    /// saath: queue by total bytes (Aalo) instead of per-flow progress (ablation)
    #[arg(long)]
    pub saath_no_per_flow_threshold: bool,
    /// saath: no work conservation (ablation)
    #[arg(long)]
    pub saath_no_work_conservation: bool,
    /// fifo-lm: a coflow is heavy once it has sent more than this percentile of the trace's
    /// coflow sizes (Baraat's threshold; the thesis found the 80th best), 0 to 100. Read by
    /// this one parser in every command that takes it (`sim`, `bench`, `replay`, `coordinator`).
    #[arg(long, default_value_t = 80.0, value_name = "P",
          value_parser = f64_in(0.0, 100.0))]
    pub fifo_lm_heavy_percentile: f64,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum InterQueueArg {
    Weighted,
    Strict,
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

    /// [`SchedArgs::options`] with what depends on the trace: fifo-lm's heavy threshold.
    pub fn options_for(&self, trace: &coflowkit_model::Trace) -> Result<SchedOptions> {
        let mut o = self.options()?;
        let p = self.fifo_lm_heavy_percentile;
        if !(0.0..=100.0).contains(&p) {
            bail!("--fifo-lm-heavy-percentile must be within 0..=100, got {p}");
        }
        let mut sizes: Vec<f64> = trace.coflows.iter().map(|c| c.bytes()).collect();
        sizes.sort_by(f64::total_cmp);
        if !sizes.is_empty() {
            o.fifo_lm_heavy_bytes = Some(coflowkit_model::stats::percentile(&sizes, p));
        }
        Ok(o)
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
        let how = if self.coflow_events_only {
            FlowCompletion::Ignore
        } else {
            match self.on_flow_completion {
                FlowCompletionArg::Redistribute => FlowCompletion::Redistribute,
                FlowCompletionArg::Recompute => FlowCompletion::Recompute,
                FlowCompletionArg::Ignore => FlowCompletion::Ignore,
            }
        };
        let mut o = o.with_flow_completion(how);
        o.hug_cooperative = matches!(self.hug_mode, HugModeArg::Cooperative);
        o.hug_stage1 = match self.hug_stage1 {
            HugStage1Arg::Auto => Stage1::Auto,
            HugStage1Arg::MultiRound => Stage1::MultiRound,
            HugStage1Arg::ClosedForm => Stage1::ClosedForm,
        };
        o.hug_vectors = match self.hug_vectors {
            HugVectorsArg::Flows => NcVector::Flows,
            HugVectorsArg::Ones => NcVector::Ones,
            HugVectorsArg::Rates => NcVector::Rates,
        };
        let TenantsArg::Coflow = self.tenants;
        if self.queues == 0
            || self.queue_spacing.is_nan()
            || self.queue_spacing <= 1.0
            || self.q1_mb.is_nan()
            || self.q1_mb <= 0.0
        {
            bail!("--queues must be >= 1, --queue-spacing > 1 and --q1-mb > 0");
        }
        for (flag, v) in [
            ("--aalo-delta", self.aalo_delta),
            ("--saath-delta", self.saath_delta),
            ("--saath-starvation", self.saath_starvation),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                bail!("{flag} must be a non-negative number of seconds");
            }
        }
        let queues = Queues {
            k: self.queues,
            e: self.queue_spacing,
            q1_hi_bytes: self.q1_mb * MB,
        };
        o.aalo.queues = queues;
        o.aalo.inter_queue = match self.aalo_inter_queue {
            InterQueueArg::Weighted => InterQueue::Weighted,
            InterQueueArg::Strict => InterQueue::Strict,
        };
        o.aalo.sync_interval_s = self.aalo_delta;
        o.saath.queues = queues;
        o.saath.sync_interval_s = self.saath_delta;
        o.saath.starvation = (self.saath_starvation > 0.0).then_some(self.saath_starvation);
        o.saath.all_or_none = !self.saath_no_all_or_none;
        o.saath.lcof = !self.saath_no_lcof;
        o.saath.per_flow_threshold = !self.saath_no_per_flow_threshold;
        o.saath.work_conservation = !self.saath_no_work_conservation;
        o.blocked_share = self.blocked_share.map(|v| v == OnOff::On);
        o.uncoord_local_ties = self.uncoord_local_ties;
        o.pfp_ignore_deadlines = self.pfp_ignore_deadlines;
        Ok(o)
    }
}
