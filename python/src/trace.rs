//! Traces: read (either format, detected), the bundled FB trace, the generators, and the
//! columns behind `Trace.flows()` / `Trace.coflows()` as raw little-endian arrays (numpy
//! wraps them without a copy per element).

use std::path::PathBuf;
use std::sync::Arc;

use coflowkit_model::gen::{default_classes, ClassSpec, CustomSpec, FbScaleSpec};
use coflowkit_model::trace::{self, Format, ReadOptions, DEFAULT_MAX_FLOWS};
use coflowkit_model::Trace;
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::{py_err, CoflowkitError};

/// The bundled Facebook trace (coflow-benchmark FB2010-1Hr-150-0), compiled in.
const FB_TEXT: &str = include_str!("../../data/traces/FB2010-1Hr-150-0.txt");
/// Its name in results: the path `coflowkit sim` reports when run from the checkout.
pub const FB_NAME: &str = "data/traces/FB2010-1Hr-150-0.txt";

/// A coflow trace: `ports` and coflows of flows. Immutable; shared without copies.
#[pyclass(frozen, name = "Trace", module = "coflowkit._native")]
pub struct PyTrace {
    pub inner: Arc<Trace>,
    /// What results call it (the path it was read from, or how it was made).
    #[pyo3(get)]
    pub name: String,
}

impl PyTrace {
    fn new(inner: Trace, name: String) -> Self {
        PyTrace {
            inner: Arc::new(inner),
            name,
        }
    }
}

fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    items: impl Iterator<Item = T>,
    to: impl Fn(T) -> [u8; N],
) -> Bound<'py, PyBytes> {
    let v: Vec<u8> = items.flat_map(to).collect();
    PyBytes::new(py, &v)
}

#[pymethods]
impl PyTrace {
    /// Ports of the fabric the trace was recorded on.
    #[getter]
    fn ports(&self) -> u32 {
        self.inner.ports
    }

    /// Number of flows over all coflows.
    #[getter]
    fn num_flows(&self) -> usize {
        self.inner.flows()
    }

    /// Total bytes over all flows.
    #[getter]
    fn total_bytes(&self) -> f64 {
        self.inner.bytes()
    }

    fn __len__(&self) -> usize {
        self.inner.coflows.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<Trace {}: {} coflows, {} flows, {} ports>",
            self.name,
            self.inner.coflows.len(),
            self.inner.flows(),
            self.inner.ports
        )
    }

    /// One row per flow: coflow, src, dst, bytes, arrival_s (the coflow's arrival), as a
    /// pandas DataFrame.
    fn flows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("coflowkit._frames")?
            .call_method1("flows_frame", (self.flow_columns(py),))
    }

    /// One row per coflow: id, arrival_s, flows, bytes, length_bytes, deadline_s (relative,
    /// NaN when none), weight, as a pandas DataFrame.
    fn coflows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("coflowkit._frames")?
            .call_method1("coflows_frame", (self.coflow_columns(py),))
    }

    /// The first `n` coflows by arrival (as `--coflows N` takes them).
    fn head(&self, n: usize) -> PyTrace {
        let mut t = (*self.inner).clone();
        t.coflows
            .sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        t.coflows.truncate(n);
        PyTrace::new(t, format!("{} (first {n})", self.name))
    }

    /// The trace as text: `format` is "benchmark" (coflow-benchmark) or "sincronia".
    #[pyo3(signature = (format = "benchmark"))]
    fn to_text(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        let f = parse_format(format)?;
        let t = self.inner.clone();
        py.allow_threads(move || trace::write_to_string(&t, f))
            .map_err(|e| py_err(e.into()))
    }

    /// Write the trace to `path` (str, bytes or os.PathLike; `format` as in `to_text`).
    #[pyo3(signature = (path, format = "benchmark"))]
    fn write(&self, py: Python<'_>, path: &Bound<'_, PyAny>, format: &str) -> PyResult<()> {
        let path = path_arg(path, "Trace.write", "path")?;
        let text = self.to_text(py, format)?;
        std::fs::write(&path, text)
            .map_err(|e| CoflowkitError::new_err(format!("writing {}: {e}", path.display())))
    }

    /// Pickled as its text (for process pools and Ray tasks).
    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<(PyObject, (String, String))> {
        let py = slf.py();
        let me = slf.get();
        let text = me.to_text(py, "benchmark")?;
        let f = py
            .import("coflowkit._native")?
            .getattr("parse_trace")?
            .unbind();
        Ok((f, (text, me.name.clone())))
    }
}

impl PyTrace {
    /// Flow columns: coflow id (u64), src (u32), dst (u32), bytes (f64), arrival_s (f64).
    fn flow_columns<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let t = &self.inner;
        let flows = || {
            t.coflows
                .iter()
                .flat_map(|c| c.flows.iter().map(move |f| (c, f)))
        };
        vec![
            le_bytes(py, flows().map(|(c, _)| c.id), u64::to_le_bytes),
            le_bytes(py, flows().map(|(_, f)| f.src), u32::to_le_bytes),
            le_bytes(py, flows().map(|(_, f)| f.dst), u32::to_le_bytes),
            le_bytes(py, flows().map(|(_, f)| f.bytes), f64::to_le_bytes),
            le_bytes(py, flows().map(|(c, _)| c.arrival_s), f64::to_le_bytes),
        ]
    }

    /// Coflow columns: id (u64), arrival_s, flows (u64), bytes, length_bytes, deadline_s
    /// (relative, NaN when none), weight.
    fn coflow_columns<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let cs = &self.inner.coflows;
        vec![
            le_bytes(py, cs.iter().map(|c| c.id), u64::to_le_bytes),
            le_bytes(py, cs.iter().map(|c| c.arrival_s), f64::to_le_bytes),
            le_bytes(py, cs.iter().map(|c| c.width() as u64), u64::to_le_bytes),
            le_bytes(py, cs.iter().map(|c| c.bytes()), f64::to_le_bytes),
            le_bytes(py, cs.iter().map(|c| c.length_bytes()), f64::to_le_bytes),
            le_bytes(
                py,
                cs.iter().map(|c| c.deadline_s.unwrap_or(f64::NAN)),
                f64::to_le_bytes,
            ),
            le_bytes(py, cs.iter().map(|c| c.weight), f64::to_le_bytes),
        ]
    }
}

fn parse_format(name: &str) -> PyResult<Format> {
    match name {
        "benchmark" | "coflow-benchmark" => Ok(Format::Benchmark),
        "sincronia" => Ok(Format::Sincronia),
        other => Err(CoflowkitError::new_err(format!(
            "format `{other}`: expected benchmark or sincronia"
        ))),
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// A file path argument as `open` takes one: str, bytes or os.PathLike. Anything else is a
/// TypeError naming the function and the argument.
pub(crate) fn path_arg(v: &Bound<'_, PyAny>, func: &str, name: &str) -> PyResult<PathBuf> {
    let wrong = || {
        PyTypeError::new_err(format!(
            "{func}: `{name}` must be a path (str, bytes or os.PathLike), not {}",
            type_name(v)
        ))
    };
    let p = v
        .py()
        .import("os")?
        .call_method1("fspath", (v,))
        .map_err(|_| wrong())?;
    if let Ok(b) = p.downcast::<PyBytes>() {
        use std::os::unix::ffi::OsStrExt;
        return Ok(PathBuf::from(std::ffi::OsStr::from_bytes(b.as_bytes())));
    }
    p.extract::<PathBuf>().map_err(|_| wrong())
}

/// An integer argument of type `T`. Out of `T`'s range is an OverflowError, not an integer a
/// TypeError; both name the function, the argument and the range (PyO3's own OverflowError
/// named neither).
pub(crate) fn int_arg<'py, T>(v: &Bound<'py, PyAny>, func: &str, name: &str) -> PyResult<T>
where
    T: FromPyObject<'py> + num_bounds::Bounds,
{
    v.extract::<T>().map_err(|e| {
        let range = format!("{} to {}", T::MIN_TEXT, T::MAX_TEXT);
        if e.is_instance_of::<PyOverflowError>(v.py()) {
            let shown = v.str().map_or_else(|_| "?".into(), |s| s.to_string());
            PyOverflowError::new_err(format!(
                "{func}: `{name}` = {} is out of range: it must be an integer from {range}",
                coflowkit_model::echo::echo(&shown)
            ))
        } else {
            PyTypeError::new_err(format!(
                "{func}: `{name}` must be an integer from {range}, not {}",
                type_name(v)
            ))
        }
    })
}

pub(crate) mod num_bounds {
    /// The range of an integer type, for messages.
    pub trait Bounds {
        const MIN_TEXT: &'static str;
        const MAX_TEXT: &'static str;
    }
    impl Bounds for u32 {
        const MIN_TEXT: &'static str = "0";
        const MAX_TEXT: &'static str = "4294967295";
    }
    impl Bounds for u64 {
        const MIN_TEXT: &'static str = "0";
        const MAX_TEXT: &'static str = "18446744073709551615";
    }
    impl Bounds for usize {
        const MIN_TEXT: &'static str = "0";
        const MAX_TEXT: &'static str = "18446744073709551615";
    }
}

fn opt_int_arg<'py, T>(v: Option<&Bound<'py, PyAny>>, func: &str, name: &str) -> PyResult<Option<T>>
where
    T: FromPyObject<'py> + num_bounds::Bounds,
{
    match v {
        Some(v) if !v.is_none() => int_arg(v, func, name).map(Some),
        _ => Ok(None),
    }
}

/// Read a trace file (coflow-benchmark or Sincronia format, detected); `path` is a str,
/// bytes or os.PathLike, as `open` takes (trace text goes to `parse_trace`). Bad input raises
/// CoflowkitError naming the file, line and field; so does a trace of more than `max_flows`
/// flows (as `coflowkit sim --max-flows`), before they are made.
#[pyfunction]
#[pyo3(signature = (path, max_flows = None))]
pub fn read_trace(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    max_flows: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTrace> {
    let path = path_arg(path, "read_trace", "path")?;
    let max_flows = opt_int_arg(max_flows, "read_trace", "max_flows")?.unwrap_or(DEFAULT_MAX_FLOWS);
    let name = path.display().to_string();
    let t = py
        .allow_threads(|| trace::read_path_with(&path, &ReadOptions::with_max_flows(max_flows)))
        .map_err(|e| py_err(e.into()))?;
    Ok(PyTrace::new(t, name))
}

/// Parse trace text; `name` stands for the file in messages and results.
#[pyfunction]
#[pyo3(signature = (text, name = "<string>".to_string(), max_flows = DEFAULT_MAX_FLOWS))]
pub fn parse_trace(
    py: Python<'_>,
    text: String,
    name: String,
    max_flows: u64,
) -> PyResult<PyTrace> {
    let t = py
        .allow_threads(|| {
            // Messages quote the name bounded (a 10 MB name was echoed whole).
            let shown = coflowkit_model::echo::echo(&name);
            trace::parse_str_with(&text, &shown, &ReadOptions::with_max_flows(max_flows))
        })
        .map_err(|e| py_err(e.into()))?;
    Ok(PyTrace::new(t, name))
}

/// A trace shipped inside the package: "fb" (Facebook, 526 coflows on 150 ports).
#[pyfunction]
#[pyo3(signature = (name = "fb"))]
pub fn bundled_trace(py: Python<'_>, name: &str) -> PyResult<PyTrace> {
    match name.to_ascii_lowercase().as_str() {
        "fb" | "fb2010" | "facebook" => parse_trace(
            py,
            FB_TEXT.to_string(),
            FB_NAME.to_string(),
            DEFAULT_MAX_FLOWS,
        ),
        other => Err(CoflowkitError::new_err(format!(
            "no bundled trace `{other}`: there is `fb` (FB2010-1Hr-150-0)"
        ))),
    }
}

/// Bytes a generated flow takes in memory, about, and the most a generated trace may take
/// (the limits of `coflowkit trace gen`).
const FLOW_BYTES: f64 = 64.0;
const MAX_GEN_BYTES: f64 = 8e9;

fn check_gen_size(coflows: usize, flows_per_coflow: f64) -> PyResult<()> {
    let need = coflows as f64 * flows_per_coflow.max(1.0) * FLOW_BYTES;
    if need > MAX_GEN_BYTES {
        return Err(CoflowkitError::new_err(format!(
            "--coflows {coflows}: the trace would need about {:.0} GB in memory ({coflows} coflows \
             x {flows_per_coflow:.0} flows x {FLOW_BYTES} bytes), over the limit of {:.0} GB",
            need / 1e9,
            MAX_GEN_BYTES / 1e9
        )));
    }
    Ok(())
}

/// The FB trace resampled (`coflowkit trace gen fb`): `coflows` coflows at `load` times the
/// base's arrival rate, on `ports` ports (default: the base's).
#[pyfunction]
#[pyo3(signature = (coflows = None, load = 1.0, ports = None, seed = None, base = None))]
pub fn gen_fb(
    py: Python<'_>,
    coflows: Option<&Bound<'_, PyAny>>,
    load: f64,
    ports: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    base: Option<&PyTrace>,
) -> PyResult<PyTrace> {
    let coflows: usize = opt_int_arg(coflows, "gen_fb", "coflows")?.unwrap_or(5260);
    let ports: Option<u32> = opt_int_arg(ports, "gen_fb", "ports")?;
    let seed: u64 = opt_int_arg(seed, "gen_fb", "seed")?.unwrap_or(1);
    let base = match base {
        Some(b) => b.inner.clone(),
        None => bundled_trace(py, "fb")?.inner,
    };
    check_gen_size(
        coflows,
        base.flows() as f64 / base.coflows.len().max(1) as f64,
    )?;
    let spec = FbScaleSpec {
        coflows,
        load,
        ports,
        seed,
    };
    let t = py
        .allow_threads(|| spec.generate(&base))
        .map_err(|e| py_err(e.into()))?;
    Ok(PyTrace::new(
        t,
        format!("gen fb --coflows {coflows} --load {load} --seed {seed}"),
    ))
}

/// Coflows of given classes (`coflowkit trace gen custom`): `classes` as
/// "NAME:FRACTION:MINW-MAXW:MINMB-MAXMB" strings (default: the thesis' four bins).
#[pyfunction]
#[pyo3(signature = (coflows = None, ports = None, classes = None, mean_interarrival_ms = 1000.0, seed = None))]
pub fn gen_custom(
    py: Python<'_>,
    coflows: Option<&Bound<'_, PyAny>>,
    ports: Option<&Bound<'_, PyAny>>,
    classes: Option<Vec<String>>,
    mean_interarrival_ms: f64,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTrace> {
    let coflows: usize = opt_int_arg(coflows, "gen_custom", "coflows")?.unwrap_or(500);
    let ports: u32 = opt_int_arg(ports, "gen_custom", "ports")?.unwrap_or(150);
    let seed: u64 = opt_int_arg(seed, "gen_custom", "seed")?.unwrap_or(1);
    let classes = match classes {
        None => default_classes(),
        Some(v) => v
            .iter()
            .map(|s| s.parse::<ClassSpec>())
            .collect::<Result<_, _>>()
            .map_err(|e| py_err(e.into()))?,
    };
    let spec = CustomSpec {
        ports,
        coflows,
        classes,
        mean_interarrival_ms,
        seed,
    };
    let t = py
        .allow_threads(|| spec.generate())
        .map_err(|e| py_err(e.into()))?;
    Ok(PyTrace::new(
        t,
        format!("gen custom --coflows {coflows} --ports {ports} --seed {seed}"),
    ))
}
