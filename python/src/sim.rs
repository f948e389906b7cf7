//! `ck.sim`: `coflowkit sim` on a trace object, with the CLI's flags as keywords; the result is
//! the JSON document `coflowkit sim --json` writes (Python builds its DataFrames from it).

use std::path::Path;

use anyhow::Result;
use coflowkit_model::Trace;
use coflowkit_simcmd::sim::{execute, SimArgs};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::trace::PyTrace;
use crate::{args, py_err};

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
    py.allow_threads(move || run((*t).clone(), &name, a))
        .map_err(py_err)
}

/// The flags `sim` takes, as (keyword, help) pairs.
#[pyfunction]
pub fn sim_flags() -> Vec<(String, String)> {
    args::flags(&command())
}

/// `coflowkit sim` from the loaded trace on, with the JSON document as the output instead of
/// the table.
fn run(trace: Trace, name: &str, args: SimArgs) -> Result<String> {
    let done = execute(&args, Path::new(name), trace)?;
    done.write_outputs(&args)?;
    Ok(serde_json::to_string(&done.json_doc())?)
}
