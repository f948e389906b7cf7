//! `ck.shuffle.sim`: `coflowkit shuffle sim` with its flags as keywords; the result is the JSON
//! report `--json` writes (with the seed).

use anyhow::{bail, Result};
use coflowkit_pktsim::try_run;
use coflowkit_shuffle::matrix::{check_nodes, generate_with, read_packet_matrix, GenSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::cli_shuffle::sim::SimArgs;
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

/// `cli_shuffle::sim::run` without the printout.
fn run(args: SimArgs) -> Result<String> {
    // The CLI's private `matrix()`: read `--matrix` or generate from the flags.
    let m = match &args.matrix {
        Some(p) => read_packet_matrix(p)?,
        None => {
            check_nodes(args.nodes).map_err(|e| anyhow::anyhow!("--nodes: {e}"))?;
            let spec = GenSpec {
                nodes: args.nodes,
                skew: args.skew,
                avg_packets: args.gen.avg_packets,
                generator: args.gen.generator(),
                seed: args.seed,
            };
            generate_with(&spec, &args.gen.options()?)?.packets
        }
    };
    let cfg = args.sim.to_config(&args.protocol, args.seed)?;
    let r = try_run(&m, &cfg)?;
    let mut doc = serde_json::to_value(&r)?;
    doc["seed"] = args.seed.into();
    let text = serde_json::to_string(&doc)?;
    if let Some(path) = &args.json {
        std::fs::write(path, &text)?;
    }
    if !r.complete {
        bail!(
            "{}: the shuffle did not finish ({} of {} data packets delivered); raise --max-steps if it was only slow",
            r.protocol,
            r.delivered_packets,
            r.data_packets
        );
    }
    if r.violations > 0 {
        bail!(
            "{}: {} protocol invariant violations",
            r.protocol,
            r.violations
        );
    }
    Ok(text)
}
