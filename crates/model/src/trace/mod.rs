//! Trace files: the coflow-benchmark format (the Facebook trace) and Sincronia's flow-explicit
//! format. Readers detect the format, validate everything and name file, line and field on
//! error; writers produce either format so generated workloads can feed other simulators.

pub mod benchmark;
pub mod bounded;
pub mod dag;
pub mod error;
mod lines;
pub mod num;
pub mod sincronia;
pub mod stats;

use std::fmt;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use error::{Field, TraceError, TraceErrorKind, WriteError};
pub use lines::{MAX_EXACT_MS, MAX_MB};
pub use sincronia::DeclaredCounts;
pub use stats::{BinStats, TraceStats};

use crate::coflow::{Coflow, Trace};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Format {
    /// `<id> <arrival ms> <M> <mapper>... <R> <reducer>:<MB>...` (coflow-benchmark, CoflowSim).
    Benchmark,
    /// `<id> <arrival ms> <flows> <sources> <destinations> (<src> <dst> <MB>)...` (Sincronia).
    Sincronia,
}

impl Format {
    pub const ALL: [Format; 2] = [Format::Benchmark, Format::Sincronia];

    pub fn name(self) -> &'static str {
        match self {
            Format::Benchmark => "benchmark",
            Format::Sincronia => "sincronia",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown trace format `{s}` (use benchmark or sincronia)"))
    }
}

/// The most flows a trace holds unless told otherwise (`--max-flows`): 2^25, 33.5 million, 15x
/// the 10x-upscaled Facebook trace. A coflow-benchmark line of M mappers and R reducers implies
/// M x R flows, so a small file can ask for any number; the reader counts them (in u64, checked)
/// before it makes any, and refuses past the limit naming file, line and field.
pub const DEFAULT_MAX_FLOWS: u64 = 1 << 25;
/// Bytes one flow takes in a read trace ([`crate::Flow`]).
pub const FLOW_BYTES: u64 = std::mem::size_of::<crate::Flow>() as u64;

/// Reading choices where the formats leave room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Force a format instead of detecting it.
    pub format: Option<Format>,
    /// How Sincronia's declared source/destination counts are checked.
    pub sincronia_counts: DeclaredCounts,
    /// The most flows the whole trace may hold (see [`DEFAULT_MAX_FLOWS`]).
    pub max_flows: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            sincronia_counts: DeclaredCounts::default(),
            max_flows: DEFAULT_MAX_FLOWS,
        }
    }
}

impl ReadOptions {
    /// The defaults with a flow limit of `max_flows`.
    pub fn with_max_flows(max_flows: u64) -> Self {
        ReadOptions {
            max_flows,
            ..Default::default()
        }
    }
}

/// Decides the format from the first coflow line: coflow-benchmark lines carry `port:MB`
/// tokens; Sincronia lines have no colon and exactly `5 + 3 x <flows>` tokens. A file with a
/// header and no coflow lines reads the same either way and is called `Benchmark`.
pub fn detect(text: &str, file: &str) -> Result<Format, TraceError> {
    let mut lines = lines::data_lines(text);
    if lines.next().is_none() {
        return Err(TraceError::new(file, 0, TraceErrorKind::Empty));
    }
    let Some((number, line)) = lines.next() else {
        return Ok(Format::Benchmark);
    };
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.iter().any(|t| t.contains(':')) {
        return Ok(Format::Benchmark);
    }
    let flows = tokens.get(2).and_then(|t| t.parse::<usize>().ok());
    if flows.and_then(|n| n.checked_mul(3)?.checked_add(5)) == Some(tokens.len()) {
        return Ok(Format::Sincronia);
    }
    Err(TraceError::new(
        file,
        number,
        TraceErrorKind::UnknownFormat(format!(
            "the first coflow line has no `port:MB` token (coflow-benchmark) and its {} tokens \
             are not 5 + 3 x field 3 (sincronia)",
            tokens.len()
        )),
    ))
}

/// Parses `text` in whichever format it is in; `file` names it in errors.
pub fn parse_str(text: &str, file: &str) -> Result<Trace, TraceError> {
    parse_str_with(text, file, &ReadOptions::default())
}

pub fn parse_str_with(text: &str, file: &str, opts: &ReadOptions) -> Result<Trace, TraceError> {
    let format = match opts.format {
        Some(f) => f,
        None => detect(text, file)?,
    };
    match format {
        Format::Benchmark => benchmark::parse_limited(text, file, opts.max_flows),
        Format::Sincronia => {
            sincronia::parse_limited(text, file, opts.sincronia_counts, opts.max_flows)
        }
    }
}

pub fn read_path(path: &Path) -> Result<Trace, TraceError> {
    read_path_with(path, &ReadOptions::default())
}

pub fn read_path_with(path: &Path, opts: &ReadOptions) -> Result<Trace, TraceError> {
    let file = path.display().to_string();
    let text = bounded::read_bounded(path, bounded::MAX_TRACE_BYTES, bounded::MAX_LINE_BYTES)?;
    parse_str_with(&text, &file, opts)
}

/// Writes `trace` in `format` (buffered; flushed before returning).
pub fn write(trace: &Trace, format: Format, out: impl Write) -> Result<(), WriteError> {
    let mut out = BufWriter::new(out);
    match format {
        Format::Benchmark => benchmark::write(trace, &mut out)?,
        Format::Sincronia => sincronia::write(trace, &mut out)?,
    }
    out.flush()?;
    Ok(())
}

/// `trace` as text in `format`.
pub fn write_to_string(trace: &Trace, format: Format) -> Result<String, WriteError> {
    let mut out = Vec::new();
    write(trace, format, &mut out)?;
    Ok(String::from_utf8(out).expect("writers emit ASCII"))
}

/// What both formats need of a coflow to read it back: a finite, non-negative arrival, ports
/// inside the fabric and finite, non-negative sizes.
fn check_writable(c: &Coflow, ports: u32, format: &'static str) -> Result<(), WriteError> {
    let fail = |why: String| {
        Err(WriteError::Unrepresentable {
            id: c.id,
            format,
            why,
        })
    };
    if !c.arrival_s.is_finite() || c.arrival_s < 0.0 {
        return fail(format!(
            "arrival {} s is negative or not finite",
            c.arrival_s
        ));
    }
    // What the readers refuse is not written: a file the tools cannot read back is a loss.
    if c.arrival_s * 1000.0 > MAX_EXACT_MS {
        return fail(format!(
            "arrival {:e} ms is past 2^53 ms, where milliseconds are no longer exact",
            c.arrival_s * 1000.0
        ));
    }
    if c.bytes() <= 0.0 {
        return fail("it has no bytes (a coflow of 0 MB)".into());
    }
    for f in &c.flows {
        if f.src >= ports || f.dst >= ports {
            return fail(format!(
                "flow {} -> {} leaves the {ports}-port fabric",
                f.src, f.dst
            ));
        }
        if !f.bytes.is_finite() || f.bytes < 0.0 || f.bytes > MAX_MB * crate::units::MB {
            return fail(format!(
                "flow {} -> {} has size {} bytes",
                f.src, f.dst, f.bytes
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
