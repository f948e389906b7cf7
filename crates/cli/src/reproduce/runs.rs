//! The simulations a reproduction needs, each one `coflowkit sim` command line, parsed by the
//! same argument parser `sim` uses, so the command printed beside a number is the one that made
//! it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use coflowkit_flowsim::{coflowsim, simulate_with, SimOutput};
use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::probe::Probe;
use coflowkit_sched::tenant::metrics::TenantMetrics;
use coflowkit_sched::{build, SchedulerKind};

use coflowkit_simcmd::jobs::RunJobs;
use coflowkit_simcmd::report::Run;
use coflowkit_simcmd::sim::{reference_algo, shape_workload, sim_options, Model, SimArgs};

/// One simulation: a name the rows refer to, the scheduler, and the other `sim` flags.
#[derive(Debug, Clone)]
pub struct Spec {
    pub key: String,
    pub scheduler: String,
    pub flags: Vec<String>,
}

impl Spec {
    pub fn new(key: &str, scheduler: &str, flags: &[&str]) -> Spec {
        Spec {
            key: key.to_string(),
            scheduler: scheduler.to_string(),
            flags: flags.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// `sim`'s flags parsed on their own (no binary name), exactly as `coflowkit sim` parses them.
#[derive(Parser)]
#[command(no_binary_name = true)]
struct SimLine {
    #[command(flatten)]
    sim: SimArgs,
}

/// The `coflowkit sim` command that reproduces `specs` (one per distinct set of flags, the
/// schedulers joined); `workload` are the flags every run shares (trace, slice).
pub fn commands(specs: &[&Spec], workload: &[String]) -> Vec<String> {
    let mut groups: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for s in specs {
        match groups.iter_mut().find(|(f, _)| *f == s.flags) {
            Some((_, names)) => {
                if !names.contains(&s.scheduler) {
                    names.push(s.scheduler.clone())
                }
            }
            None => groups.push((s.flags.clone(), vec![s.scheduler.clone()])),
        }
    }
    groups
        .into_iter()
        .map(|(flags, names)| {
            let mut words = vec!["coflowkit".to_string(), "sim".to_string()];
            words.extend(workload.iter().cloned());
            words.extend(flags);
            words.push("-s".into());
            words.push(names.join(","));
            words.join(" ")
        })
        .collect()
}

/// Runs by key.
pub type Results = BTreeMap<String, Run>;

/// The multi-tenant measures of the runs that took them (`--tenant-metrics`, hug, drf, psp),
/// by key.
pub type Tenants = BTreeMap<String, TenantMetrics>;

/// The jobs of the runs whose workload has DAGs (`--tpcds`), by key.
pub type Jobs = BTreeMap<String, RunJobs>;

/// Run every spec on `trace` (loaded once by the caller from `workload`), `jobs` at a time.
pub fn run_all(
    specs: &[Spec],
    workload: &[String],
    trace: &Trace,
    fabric: &Fabric,
    jobs: usize,
    progress: bool,
) -> Result<(Results, Tenants, Jobs)> {
    let next = Mutex::new(0usize);
    let done: Mutex<Vec<Option<Result<Measured>>>> =
        Mutex::new((0..specs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, specs.len().max(1)) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(spec) = specs.get(i) else { break };
                let r = run_one(spec, workload, trace, fabric)
                    .with_context(|| format!("run `{}`", spec.key));
                if progress {
                    if let Ok((out, _, _)) = &r {
                        errln!("  {} done in {:.1} s", spec.key, out.wall_s);
                    }
                }
                done.lock().unwrap()[i] = Some(r);
            });
        }
    });
    let mut results = Results::new();
    let mut tenants = Tenants::new();
    let mut dags = Jobs::new();
    for (spec, r) in specs.iter().zip(done.into_inner().unwrap()) {
        let (out, metrics, jobs) = r.ok_or_else(|| anyhow!("run `{}` did not run", spec.key))??;
        results.insert(spec.key.clone(), Run::new(out));
        if let Some(m) = metrics {
            tenants.insert(spec.key.clone(), m);
        }
        if let Some(j) = jobs {
            dags.insert(spec.key.clone(), j);
        }
    }
    Ok((results, tenants, dags))
}

/// A run's output and, when measured, its multi-tenant measures, and its jobs when its
/// workload has DAGs.
type Measured = (SimOutput, Option<TenantMetrics>, Option<RunJobs>);

/// One run, from its command line; the trace is the one `workload` names, already loaded.
/// Measured as a multi-tenant run exactly when `coflowkit sim` would measure it.
fn run_one(spec: &Spec, workload: &[String], trace: &Trace, fabric: &Fabric) -> Result<Measured> {
    let mut argv: Vec<String> = workload.to_vec();
    argv.extend(spec.flags.iter().cloned());
    argv.extend([
        "-s".into(),
        spec.scheduler.clone(),
        "--baseline".into(),
        spec.scheduler.clone(),
    ]);
    let line =
        SimLine::try_parse_from(&argv).map_err(|e| anyhow!("flags `{}`: {e}", argv.join(" ")))?;
    let args = line.sim;
    let kinds = args.sched.kinds()?;
    let [kind] = kinds[..] else {
        bail!("a run names one scheduler, got `{}`", spec.scheduler)
    };
    // A run's own `--coflows` (a slice of the shared trace) or a reshaped workload (deadlines,
    // --concurrent, --max-waves) need a copy.
    let own;
    let slice = args.workload.coflows.filter(|&n| n < trace.coflows.len());
    let reshaped = args.deadlines.is_some()
        || args.concurrent.is_some()
        || args.max_waves.is_some()
        || args.tpcds.is_some();
    let trace = if slice.is_some() || reshaped {
        let mut t = trace.clone();
        if let Some(n) = slice {
            t.coflows
                .sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
            t.coflows.truncate(n);
        }
        shape_workload(&args, &mut t, fabric)?;
        own = t;
        &own
    } else {
        trace
    };
    let probe = args.tenant_metrics || SchedulerKind::TENANT.contains(&kind);
    let (mut out, metrics) = match args.model {
        Model::Exact if probe => {
            let mut p = Probe::new(build(kind, &args.sched.options_for(trace)?));
            let out = simulate_with(trace, fabric, &mut p, &sim_options(&args)?)?;
            (out, Some(p.finish()))
        }
        Model::Exact => {
            let mut sched = build(kind, &args.sched.options_for(trace)?);
            let out = simulate_with(trace, fabric, sched.as_mut(), &sim_options(&args)?)?;
            (out, None)
        }
        Model::Coflowsim => {
            if args.tenant_metrics {
                bail!("--tenant-metrics: only with --model exact");
            }
            let out =
                coflowsim::simulate_ablated(trace, fabric, reference_algo(kind)?, args.ablation())?;
            (out, None)
        }
    };
    out.scheduler = spec.key.clone();
    let dags = args.max_waves.is_none() && trace.coflows.iter().any(|c| !c.parents.is_empty());
    let jobs = dags.then(|| RunJobs::of(trace, &out)).transpose()?;
    Ok((out, metrics, jobs))
}

/// The trace and fabric the shared `workload` flags name (loaded once for every run).
pub fn load(workload: &[String]) -> Result<(std::path::PathBuf, Trace, Fabric)> {
    let line = SimLine::try_parse_from(workload)
        .map_err(|e| anyhow!("flags `{}`: {e}", workload.join(" ")))?;
    line.sim.workload.load()
}
