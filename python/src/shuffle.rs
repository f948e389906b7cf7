//! `ck.shuffle.sim`: `coflowkit shuffle sim` with its flags as keywords; the result is the JSON
//! report `--json` writes (with the seed).

use anyhow::Result;
use coflowkit_simcmd::shuffle::sim::{finish, json_text, simulate, SimArgs};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{args, py_err};

fn command() -> clap::Command {
    args::command::<SimArgs>("coflowkit shuffle sim")
}

/// Simulate one shuffle packet by packet; `kwargs` are the flags of `coflowkit shuffle sim`
/// (`nodes=160`, `racks=4`, `skew=0.5`, `protocol="grpf"`, `drop=0.02`, ...). Returns the JSON
/// text of its report. A shuffle that does not finish, or breaks an invariant, raises.
#[pyfunction]
#[pyo3(signature = (**kwargs))]
pub fn shuffle_sim(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    let cmd = command();
    let argv = args::argv(&cmd, "shuffle sim", kwargs)?;
    let a: SimArgs = args::parse(cmd, &argv)?;
    py.allow_threads(move || run(a)).map_err(py_err)
}

/// The flags `shuffle.sim` takes, as (keyword, help) pairs.
#[pyfunction]
pub fn shuffle_flags() -> Vec<(String, String)> {
    args::flags(&command())
}

/// `coflowkit shuffle sim` without the printout; the report as compact JSON.
fn run(args: SimArgs) -> Result<String> {
    let r = simulate(&args)?;
    finish(&args, &r)?;
    json_text(&args, &r, false)
}
