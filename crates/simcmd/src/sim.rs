//! `coflowkit sim`: replay a trace under several schedulers and compare them (the flags and the
//! run; the binary prints the table).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use coflowkit_flowsim::coflowsim::{self, Algo};
use coflowkit_flowsim::{simulate_with, Dependencies, SimOptions, SimOutput};
use coflowkit_model::deadlines;
use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::probe::Probe;
use coflowkit_sched::tenant::metrics::TenantMetrics;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

use crate::engine_args::{DepsArg, EngineArgs};
use crate::fabric_args::WorkloadArgs;
use crate::jobs::RunJobs;
use crate::plot;
use crate::report::{self, Run};
use crate::sched_args::SchedArgs;
use crate::stages;
use crate::tenant_report;

/// Which simulator model replays the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Model {
    /// Exact event-driven fluid model (no time step, arrivals at their time)
    Exact,
    /// The public reference CoflowSim's assumptions (coflow/coflowsim b61f209): 8 ms steps,
    /// 10.24 s admission epochs, CCT from the epoch start, whole-MB flows, its FAIR, PFP, FIFO,
    /// SCF, NCF, LCF (`tcf`), SEBF and DARK (`aalo`); see docs/coflowsim.md
    Coflowsim,
}

/// Where a TPC-DS-like query's later coflows send from (`--tpcds-child-senders`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChildSendersArg {
    /// As many senders as the drawn base coflow has, on the parents' reducer ports first
    DrawnOnLanded,
    /// The drawn base coflow's own senders, relabelled as a scan's
    Drawn,
    /// All the parents' reducer ports, each reducer's bytes split over them
    Landed,
}

impl From<ChildSendersArg> for coflowkit_model::gen::ChildSenders {
    fn from(a: ChildSendersArg) -> Self {
        use coflowkit_model::gen::ChildSenders as C;
        match a {
            ChildSendersArg::DrawnOnLanded => C::DrawnOnLanded,
            ChildSendersArg::Drawn => C::Drawn,
            ChildSendersArg::Landed => C::Landed,
        }
    }
}

/// When the later waves of a multi-wave stage start (`--wave-timing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaveTiming {
    /// Each wave a coflow that starts when the wave before it has ended
    Barrier,
    /// Sender slots: the j-th sender of a wave starts when the j-th of the wave before has
    /// ended; one coflow per sender and wave, one DAG (Aalo's entity) per stage
    Overlap,
}

#[derive(Args, Debug)]
pub struct SimArgs {
    /// Simulator model
    #[arg(long, value_enum, default_value_t = Model::Exact)]
    pub model: Model,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub sched: SchedArgs,
    /// Scheduler the speed-ups are measured against (run too if not selected)
    #[arg(long, default_value = "fair", value_name = "NAME")]
    pub baseline: String,
    /// Give every coflow a deadline Γ_empty × (1 + U(0, X)), at least 200 ms (Varys §5.7)
    #[arg(long, value_name = "X")]
    pub deadlines: Option<f64>,
    /// Seed for everything random (deadline synthesis, --concurrent, --max-waves, --tpcds)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Replace the trace by N of its coflows drawn at random (--seed), all arriving at once
    /// in a random order: the offline concurrency runs of Varys §5.7
    #[arg(long, value_name = "N")]
    pub concurrent: Option<usize>,
    /// Split every coflow into waves of its senders, 1 to W of them as Table 6.4 of the thesis
    /// draws them (W = 1, 2 or 4), each wave starting when the one before it has ended; stage
    /// completion times are reported beside the CCTs of the waves (Aalo §6.8)
    #[arg(long, value_name = "W")]
    pub max_waves: Option<u32>,
    /// With --max-waves, when a later wave's senders start: `barrier` (each wave a coflow that
    /// starts when the whole wave before it has ended) or `overlap` (the thesis' setting for
    /// Aalo: no barrier; a sender slot runs one wave's sender at a time, so the j-th sender of
    /// wave k+1 starts when the j-th of wave k has sent all it has; every sender's part of a
    /// wave is a coflow of its own, and Aalo sees a stage as one entity; docs/choices.md)
    #[arg(long, value_enum, default_value_t = WaveTiming::Barrier, value_name = "HOW", requires = "max_waves")]
    pub wave_timing: WaveTiming,
    /// Replace the trace by a TPC-DS-like DAG workload of N queries whose coflows are drawn
    /// from it (--seed; the defaults of `coflowkit trace gen tpcds`, which writes the same
    /// workload): jobs' JCT and communication time are reported beside the CCTs
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub tpcds: Option<usize>,
    /// With --tpcds, where a later coflow's senders are: `drawn-on-landed` (as many as its drawn
    /// coflow has, on its parents' reducer ports first), `drawn` (the drawn coflow's own,
    /// relabelled) or `landed` (all its parents' reducer ports, sessions 29-33); docs/choices.md
    #[arg(long, value_enum, default_value_t = ChildSendersArg::DrawnOnLanded, value_name = "HOW", requires = "tpcds")]
    pub tpcds_child_senders: ChildSendersArg,
    /// --model coflowsim, ablation: FIFO, SCF, NCF, LCF and SEBF do their work conservation in
    /// their own order instead of the reference's order of earliest synthetic deadline
    #[arg(long)]
    pub ref_backfill_in_order: bool,
    /// --model coflowsim, ablation: no leftover share for the coflows MADD skipped
    #[arg(long)]
    pub ref_no_skipped_share: bool,
    /// --model coflowsim, ablation: DARK (`aalo`) with K queues instead of its 10 (first limit
    /// 10 MB, spacing 10, as its own)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u16).range(1..))]
    pub ref_dark_queues: Option<u16>,
    /// Write results as JSON (summary and per-coflow results of every scheduler)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write per-coflow results as CSV
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Draw the CCT CDF of every scheduler as an SVG chart into this directory
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Measure every selected scheduler as a multi-tenant one (per-coflow progress, isolation
    /// guarantee over time, utilization; docs/hug.md). Always on for hug, drf and psp. A
    /// measured pair-rated policy (fair, wss) runs in the per-flow world
    #[arg(long)]
    pub tenant_metrics: bool,
    /// Simulations run at once [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub jobs: Option<usize>,
}

/// A finished `sim`: the trace as replayed (after `--coflows` and `--deadlines`), its fabric,
/// the options and every scheduler's run, in the order of `--scheduler` with the baseline last
/// when it was not selected.
pub struct SimRun {
    pub trace_name: String,
    pub trace: Trace,
    pub fabric: Fabric,
    pub opts: SchedOptions,
    pub baseline: SchedulerKind,
    pub runs: Vec<Run>,
    /// Each run's multi-tenant measures, where measured (`--tenant-metrics`, hug, drf, psp).
    pub metrics: Vec<Option<TenantMetrics>>,
    /// Each run's stage completion times (`--max-waves`).
    pub stages: Vec<Option<stages::StageSummary>>,
    /// Each run's jobs, when the trace has DAGs (not `--max-waves`, whose stages are above).
    pub jobs: Vec<Option<RunJobs>>,
}

/// `coflowkit sim` on a loaded trace: everything after reading `--trace` and before printing.
/// `path` names the trace in messages and in the JSON document.
pub fn execute(args: &SimArgs, path: &Path, trace: Trace) -> Result<SimRun> {
    check_outputs(args)?;
    let (mut trace, fabric) = args.workload.prepare(path, trace)?;
    shape_workload(args, &mut trace, &fabric)?;
    let mut kinds = args.sched.kinds()?;
    let baseline: SchedulerKind = args.baseline.parse().context("--baseline")?;
    if !kinds.contains(&baseline) {
        kinds.push(baseline);
    }
    let opts = args.sched.options_for(&trace)?;
    if args.model != Model::Coflowsim && args.ablation() != coflowsim::Ablation::default() {
        bail!("--ref-backfill-in-order, --ref-no-skipped-share and --ref-dark-queues change the reference's rules: use them with --model coflowsim");
    }
    if args.model == Model::Coflowsim {
        if trace.coflows.iter().any(|c| !c.parents.is_empty()) {
            bail!("{}: the trace has parents (DAGs), and the reference simulator has no dependencies between coflows; use --model exact", path.display());
        }
        if args.deadlines.is_some() {
            bail!("--deadlines: CoflowSim's main runs without deadlines (considerDeadline is hard-wired off); use --model exact");
        }
        if args.sched.scheduler.trim() == "all" {
            kinds = COFLOWSIM_KINDS.to_vec();
        }
        for &k in &kinds {
            reference_algo(k)?;
        }
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let sim = sim_options(args)?;
    let flows: u64 = trace.coflows.iter().map(|c| c.flows.len() as u64).sum();
    // The reference model runs its schedulers one after the other.
    let at_once = if args.model == Model::Coflowsim {
        1
    } else {
        jobs
    };
    crate::sim_memory::check(flows, &kinds, at_once)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let probe = |k: SchedulerKind| args.tenant_metrics || SchedulerKind::TENANT.contains(&k);
    let (outputs, metrics): (Vec<_>, Vec<_>) = match args.model {
        Model::Exact => run_all_probed(&trace, &fabric, &kinds, &opts, &sim, jobs, probe)?
            .into_iter()
            .unzip(),
        Model::Coflowsim => {
            if args.tenant_metrics {
                bail!("--tenant-metrics: only with --model exact");
            }
            let outs = run_coflowsim(&trace, &fabric, &kinds, args.ablation())?;
            let none = vec![None; outs.len()];
            (outs, none)
        }
    };
    let runs: Vec<Run> = outputs.into_iter().map(Run::new).collect();
    let stages = runs
        .iter()
        .map(|r| args.max_waves.map(|_| stages::summary(&r.output)))
        .collect();
    let dags = args.max_waves.is_none() && trace.coflows.iter().any(|c| !c.parents.is_empty());
    let jobs = runs
        .iter()
        .map(|r| dags.then(|| RunJobs::of(&trace, &r.output)).transpose())
        .collect::<Result<Vec<_>>>()?;
    Ok(SimRun {
        trace_name: path.display().to_string(),
        trace,
        fabric,
        opts,
        baseline,
        runs,
        metrics,
        stages,
        jobs,
    })
}

impl SimArgs {
    /// The reference's rules changed by the `--ref-*` flags.
    pub fn ablation(&self) -> coflowsim::Ablation {
        coflowsim::Ablation {
            backfill_in_order: self.ref_backfill_in_order,
            no_skipped_share: self.ref_no_skipped_share,
            dark_queues: self.ref_dark_queues.map(usize::from),
        }
    }
}

/// What `--tpcds`, `--concurrent`, `--deadlines` and `--max-waves` make of the trace, in that
/// order (on the trace `--coflows` left).
pub fn shape_workload(args: &SimArgs, trace: &mut Trace, fabric: &Fabric) -> Result<()> {
    if let Some(queries) = args.tpcds {
        if args.model == Model::Coflowsim {
            bail!("--tpcds: the reference simulator has no dependencies between coflows; use --model exact");
        }
        if args.concurrent.is_some() || args.max_waves.is_some() {
            bail!("--tpcds makes a DAG workload of its own: it does not combine with --concurrent or --max-waves");
        }
        let spec = coflowkit_model::gen::TpcdsSpec {
            queries,
            seed: args.seed,
            child_senders: args.tpcds_child_senders.into(),
            ..Default::default()
        };
        // Refused before any plan is drawn: a query has at most 2 x max_scans coflows, each
        // of about the base trace's mean number of flows.
        let per_coflow = trace.flows() as f64 / trace.coflows.len().max(1) as f64;
        let flows = queries as f64 * 2.0 * spec.max_scans as f64 * per_coflow;
        if flows > args.workload.max_flows as f64 {
            bail!(
                "--tpcds {queries}: up to about {flows:.3e} flows ({} coflows a query at most, \
                 {per_coflow:.0} flows each on average), over --max-flows {}: ask for fewer \
                 queries or raise --max-flows",
                2 * spec.max_scans,
                args.workload.max_flows
            );
        }
        *trace = spec.generate(trace).context("--tpcds")?;
    }
    if let Some(n) = args.concurrent {
        *trace = coflowkit_model::gen::concurrent::concurrent(trace, n, args.seed)
            .context("--concurrent")?;
    }
    if let Some(x) = args.deadlines {
        if !(x >= 0.0 && x.is_finite()) {
            bail!("--deadlines must be a non-negative number, got {x}");
        }
        deadlines::synthesize(trace, fabric, x, args.seed);
    }
    if let Some(w) = args.max_waves {
        if args.model == Model::Coflowsim {
            bail!("--max-waves: the reference simulator has no dependencies between coflows; use --model exact");
        }
        use coflowkit_model::gen::waves;
        *trace = match args.wave_timing {
            WaveTiming::Barrier => waves::split(trace, w, args.seed),
            WaveTiming::Overlap => waves::split_slots(trace, w, args.seed),
        }
        .context("--max-waves")?;
    }
    Ok(())
}

/// The simulator options the flags ask for (`--max-waves` needs starts-after, the default:
/// each wave is held until the one before it has ended).
pub fn sim_options(args: &SimArgs) -> Result<SimOptions> {
    let mut o = args.engine.options()?;
    if args.max_waves.is_some() {
        if args.engine.dependencies != DepsArg::StartsAfter {
            bail!("--max-waves: the waves' timing is --wave-timing; it needs --dependencies starts-after (the default)");
        }
        o.dependencies = match args.wave_timing {
            WaveTiming::Barrier => Dependencies::StartsAfter,
            WaveTiming::Overlap => Dependencies::StageSlots,
        };
    }
    Ok(o)
}

impl SimRun {
    /// The document `--json` writes.
    pub fn json_doc(&self) -> serde_json::Value {
        let mut doc = report::json_doc(
            &self.trace_name,
            &self.fabric,
            &self.opts,
            &self.runs,
            self.baseline.name(),
        );
        if self.metrics.iter().any(Option::is_some) {
            tenant_report::add_to_json(&mut doc, &self.metrics);
        }
        if self.stages.iter().any(Option::is_some) {
            let by_run: serde_json::Map<String, serde_json::Value> = (self.runs.iter())
                .zip(&self.stages)
                .filter_map(|(r, s)| {
                    Some((
                        r.name().to_string(),
                        serde_json::to_value(s.as_ref()?).ok()?,
                    ))
                })
                .collect();
            doc["stages"] = serde_json::Value::Object(by_run);
        }
        if self.jobs.iter().any(Option::is_some) {
            let by_run: serde_json::Map<String, serde_json::Value> = (self.runs.iter())
                .zip(&self.jobs)
                .filter_map(|(r, j)| {
                    Some((
                        r.name().to_string(),
                        serde_json::to_value(j.as_ref()?).ok()?,
                    ))
                })
                .collect();
            doc["jobs"] = serde_json::Value::Object(by_run);
        }
        doc
    }

    /// The job table, when the trace has DAGs.
    pub fn job_table(&self) -> Option<String> {
        let names: Vec<&str> = self.runs.iter().map(|r| r.name()).collect();
        crate::jobs::table(&names, &self.jobs)
    }

    /// The stage completion table, for `--max-waves`.
    pub fn stage_table(&self) -> Option<String> {
        let names: Vec<&str> = self.runs.iter().map(|r| r.name()).collect();
        stages::table(&names, &self.stages)
    }

    /// The multi-tenant tables, when any run was measured.
    pub fn tenant_tables(&self) -> Option<String> {
        (self.metrics.iter().any(Option::is_some))
            .then(|| tenant_report::tables(&self.runs, &self.metrics, &self.fabric))
    }

    /// Write what `--json`, `--csv` and `--plot` ask for; returns the chart drawn, if any.
    pub fn write_outputs(&self, args: &SimArgs) -> Result<Option<PathBuf>> {
        if let Some(p) = &args.json {
            report::write_value(p, &self.json_doc())?;
        }
        if let Some(p) = &args.csv {
            report::write_csv(p, &self.runs)?;
        }
        args.plot
            .as_deref()
            .map(|dir| plot::cct_cdf(dir, &self.runs))
            .transpose()
    }
}

/// Outputs that cannot be written are refused before the simulation, not after it (the
/// shared check, [`crate::outputs`]): the report's writers make missing directories.
fn check_outputs(args: &SimArgs) -> Result<()> {
    use crate::outputs::{check, Out};
    check(&[
        Out::file_in_new_dirs("--json", args.json.as_deref()),
        Out::file_in_new_dirs("--csv", args.csv.as_deref()),
        Out::dir("--plot", args.plot.as_deref()),
    ])
}

/// Refuse a trace with parents (DAGs) in a command that cannot honour them (pass 34, C6:
/// `fetch sim` and `replay` started every coflow at its arrival and said nothing). `doing`
/// says what the command would do instead: `fetch sim starts ...`.
pub fn refuse_dags(path: &Path, trace: &Trace, doing: &str) -> Result<()> {
    let Some(c) = trace.coflows.iter().find(|c| !c.parents.is_empty()) else {
        return Ok(());
    };
    let parents: Vec<String> = c.parents.iter().take(4).map(|p| p.to_string()).collect();
    let more = if c.parents.len() > 4 { ", ..." } else { "" };
    bail!(
        "{}: the trace has parents (DAGs): coflow {} waits for coflow {}{more}; {doing}, so          the result would not be this trace's; `coflowkit sim` honours parents and compute",
        path.display(),
        c.id,
        parents.join(", ")
    )
}

/// The schedulers the reference has, by our names (`tcf` is its LCF, `aalo` its DARK).
pub const COFLOWSIM_KINDS: [SchedulerKind; 8] = [
    SchedulerKind::Fair,
    SchedulerKind::Pfp,
    SchedulerKind::Fifo,
    SchedulerKind::Scf,
    SchedulerKind::Ncf,
    SchedulerKind::Tcf,
    SchedulerKind::Sebf,
    SchedulerKind::Aalo,
];

/// The reference's algorithm for one of our scheduler names.
pub fn reference_algo(kind: SchedulerKind) -> Result<Algo> {
    Ok(match kind {
        SchedulerKind::Fair => Algo::Fair,
        SchedulerKind::Pfp => Algo::Pfp,
        SchedulerKind::Fifo => Algo::Fifo,
        SchedulerKind::Scf => Algo::Scf,
        SchedulerKind::Ncf => Algo::Ncf,
        SchedulerKind::Tcf => Algo::Lcf,
        SchedulerKind::Sebf => Algo::Sebf,
        SchedulerKind::Aalo => Algo::Dark,
        other => bail!(
            "--model coflowsim: CoflowSim has no `{other}`; it has fair, pfp, fifo, scf, ncf, tcf (its LCF), sebf and aalo (its DARK)"
        ),
    })
}

/// Replay under the reference's rules, one scheduler after the other (each takes about a
/// second on the FB trace). Runs are named by our scheduler names.
pub fn run_coflowsim(
    trace: &Trace,
    fabric: &Fabric,
    kinds: &[SchedulerKind],
    ablation: coflowsim::Ablation,
) -> Result<Vec<SimOutput>> {
    kinds
        .iter()
        .map(|&k| {
            let mut out = coflowsim::simulate_ablated(trace, fabric, reference_algo(k)?, ablation)
                .with_context(|| format!("simulating {k} under --model coflowsim"))?;
            out.scheduler = k.name().to_string();
            Ok(out)
        })
        .collect()
}

/// Run every scheduler on its own thread pool slot; results come back in `kinds` order.
pub fn run_all(
    trace: &Trace,
    fabric: &Fabric,
    kinds: &[SchedulerKind],
    opts: &SchedOptions,
    sim: &SimOptions,
    jobs: usize,
) -> Result<Vec<SimOutput>> {
    let runs = run_all_probed(trace, fabric, kinds, opts, sim, jobs, |_| false)?;
    Ok(runs.into_iter().map(|(o, _)| o).collect())
}

/// [`run_all`], measuring the schedulers `probe` picks as multi-tenant ones.
pub fn run_all_probed(
    trace: &Trace,
    fabric: &Fabric,
    kinds: &[SchedulerKind],
    opts: &SchedOptions,
    sim: &SimOptions,
    jobs: usize,
    probe: impl Fn(SchedulerKind) -> bool + Sync,
) -> Result<Vec<(SimOutput, Option<TenantMetrics>)>> {
    // Long replays show progress on a terminal and stay quiet when piped.
    let progress = std::io::stderr().is_terminal();
    if progress {
        let _ = writeln!(
            std::io::stderr(),
            "simulating {} schedulers, {} at a time",
            kinds.len(),
            jobs.clamp(1, kinds.len().max(1))
        );
    }
    let next = Mutex::new(0usize);
    type Measured = (SimOutput, Option<TenantMetrics>);
    let results: Mutex<Vec<Option<Result<Measured>>>> =
        Mutex::new((0..kinds.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, kinds.len().max(1)) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(&kind) = kinds.get(i) else { break };
                let r = if probe(kind) {
                    let mut p = Probe::new(build(kind, opts));
                    simulate_with(trace, fabric, &mut p, sim).map(|o| (o, Some(p.finish())))
                } else {
                    let mut sched = build(kind, opts);
                    simulate_with(trace, fabric, sched.as_mut(), sim).map(|o| (o, None))
                }
                .with_context(|| format!("simulating {kind}"));
                if progress {
                    if let Ok((out, _)) = &r {
                        let _ = writeln!(
                            std::io::stderr(),
                            "  {kind} done in {:.1} s ({} decisions, {} redistributions)",
                            out.wall_s,
                            out.decisions,
                            out.redistributions
                        );
                    }
                }
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every scheduler ran"))
        .collect()
}
