//! coflowkit for Python: a thin PyO3 layer over the crates. Traces are read by `model`, replays
//! run in `flowsim` under the shared `sched` policies, shuffles in `pktsim`; this file only
//! converts arguments and results. Every run releases the GIL.
//!
//! Options reach the runs through the CLI's own argument structs and runs (`coflowkit_simcmd`,
//! which the `coflowkit` binary uses too): a Python keyword `port_rate="1gbit"` is the flag
//! `--port-rate=1gbit`, checked by the same code with the same messages, and `sim` results are
//! the very JSON document `coflowkit sim --json` writes.

use pyo3::prelude::*;

mod args;
mod runtime;
mod shuffle;
mod sim;
mod trace;

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
    m.add_class::<runtime::PyClient>()?;
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
