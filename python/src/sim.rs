//! `ck.sim`: `coflowkit sim` on a trace object, with the CLI's flags as keywords; the result is
//! the JSON document `coflowkit sim --json` writes (Python builds its DataFrames from it).

use anyhow::{bail, Context, Result};
use coflowkit_model::deadlines;
use coflowkit_model::Trace;
use coflowkit_sched::SchedulerKind;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::cli_sim::{self, Model, SimArgs};
use crate::report::{self, Run};
use crate::trace::PyTrace;
use crate::{args, fabric_args, py_err};

fn command() -> clap::Command {
    args::command::<SimArgs>("coflowkit sim")
}

/// Replay `trace` as `coflowkit sim` does; `kwargs` are its flags (`scheduler="varys,aalo"`,
/// `port_rate="10gbit"`, `queues=5`, ...). Returns the JSON text of `--json`. The flags
/// `--json`, `--csv` and `--plot` write their files too; `--trace` is refused (pass a Trace).
#[pyfunction]
#[pyo3(signature = (trace, **kwargs))]
pub fn sim(
    py: Python<'_>,
    trace: &PyTrace,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let cmd = command();
    let argv = args::argv(&cmd, "sim", kwargs)?;
    let a: SimArgs = args::parse(cmd, &argv)?;
    if a.workload.trace.is_some() {
        return Err(crate::CoflowkitError::new_err(
            "trace: pass a Trace (ck.read_trace(path)) as the first argument",
        ));
    }
    let t = trace.inner.clone();
    let name = trace.name.clone();
    py.allow_threads(move || run(&t, &name, a)).map_err(py_err)
}

/// The flags `sim` takes, as (keyword, help) pairs.
#[pyfunction]
pub fn sim_flags() -> Vec<(String, String)> {
    args::flags(&command())
}

/// `cli_sim::run` from the loaded trace on, with the JSON document as the output instead of
/// the table.
fn run(base: &Trace, name: &str, args: SimArgs) -> Result<String> {
    let path = std::path::Path::new(name);
    let mut trace = base.clone();
    if let Some(n) = args.workload.coflows {
        trace
            .coflows
            .sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        trace.coflows.truncate(n);
    }
    fabric_args::check_pair_tables(path, trace.ports as u64)?;
    let fabric = args.workload.fabric(trace.ports as usize)?;
    if let Some(x) = args.deadlines {
        if !(x >= 0.0 && x.is_finite()) {
            bail!("--deadlines must be a non-negative number, got {x}");
        }
        deadlines::synthesize(&mut trace, &fabric, x, args.seed);
    }
    let mut kinds = args.sched.kinds()?;
    let baseline: SchedulerKind = args.baseline.parse().context("--baseline")?;
    if !kinds.contains(&baseline) {
        kinds.push(baseline);
    }
    let opts = args.sched.options()?;
    if args.model == Model::Coflowsim {
        if args.deadlines.is_some() {
            bail!("--deadlines: CoflowSim's main runs without deadlines (considerDeadline is hard-wired off); use --model exact");
        }
        if args.sched.scheduler.trim() == "all" {
            kinds = cli_sim::COFLOWSIM_KINDS.to_vec();
        }
        for &k in &kinds {
            cli_sim::reference_algo(k)?;
        }
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let sim = args.engine.options()?;
    let outputs = match args.model {
        Model::Exact => cli_sim::run_all(&trace, &fabric, &kinds, &opts, &sim, jobs)?,
        Model::Coflowsim => cli_sim::run_coflowsim(&trace, &fabric, &kinds)?,
    };
    let runs: Vec<Run> = outputs.into_iter().map(Run::new).collect();
    let doc = report::json_doc(name, &fabric, &opts, &runs, baseline.name());
    if let Some(p) = &args.json {
        report::write_value(p, &doc)?;
    }
    if let Some(p) = &args.csv {
        report::write_csv(p, &runs)?;
    }
    if let Some(dir) = &args.plot {
        crate::plot::cct_cdf(dir, &runs)?;
    }
    Ok(serde_json::to_string(&doc)?)
}
