//! coflowkit for Python: a thin PyO3 layer over the crates. Traces are read by `model`, replays
//! run in `flowsim` under the shared `sched` policies, shuffles in `pktsim`; this file only
//! converts arguments and results. Every run releases the GIL.
//!
//! Options reach the runs through the CLI's own argument structs (compiled here from
//! crates/cli/src, below): a Python keyword `port_rate="1gbit"` is the flag
//! `--port-rate=1gbit`, checked by the same code with the same messages, and `sim` results are
//! the very JSON document `coflowkit sim --json` writes.

use pyo3::prelude::*;

mod args;
mod shuffle;
mod sim;
mod trace;

// The CLI's argument structs and result builders, compiled here as they are there (the CLI is a
// binary crate, so they cannot be imported): one implementation of every flag, check and
// column. They sit at the crate root because they name each other as `crate::report` etc.
#[allow(dead_code)]
#[path = "../../crates/cli/src/sim.rs"]
mod cli_sim;
#[allow(dead_code)]
#[path = "../../crates/cli/src/engine_args.rs"]
mod engine_args;
#[allow(dead_code)]
#[path = "../../crates/cli/src/fabric_args.rs"]
mod fabric_args;
#[allow(dead_code)]
#[path = "../../crates/cli/src/plot.rs"]
mod plot;
#[allow(dead_code)]
#[path = "../../crates/cli/src/report.rs"]
mod report;
#[allow(dead_code)]
#[path = "../../crates/cli/src/sched_args.rs"]
mod sched_args;
#[allow(dead_code)]
#[path = "../../crates/cli/src/tenant_report.rs"]
mod tenant_report;
#[allow(dead_code)]
#[path = "../../crates/cli/src/shuffle"]
mod cli_shuffle {
    pub mod matrix_args;
    pub mod sim;
    pub mod sim_opts;
}

pyo3::create_exception!(
    coflowkit,
    CoflowkitError,
    pyo3::exceptions::PyValueError,
    "Bad input or a failed run; the message names what is wrong (file, line and field for \
     traces), as the coflowkit command's does."
);

/// An error of a run as the Python exception, with the CLI's message (`error: ` left off).
pub(crate) fn py_err(e: anyhow::Error) -> PyErr {
    CoflowkitError::new_err(format!("{e:#}"))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CoflowkitError", m.py().get_type::<CoflowkitError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<trace::PyTrace>()?;
    m.add_function(wrap_pyfunction!(trace::read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(trace::parse_trace, m)?)?;
    m.add_function(wrap_pyfunction!(trace::bundled_trace, m)?)?;
    m.add_function(wrap_pyfunction!(trace::gen_fb, m)?)?;
    m.add_function(wrap_pyfunction!(trace::gen_custom, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_flags, m)?)?;
    m.add_function(wrap_pyfunction!(shuffle::shuffle_sim, m)?)?;
    m.add_function(wrap_pyfunction!(shuffle::shuffle_flags, m)?)?;
    Ok(())
}
