//! Errors of trace reading and writing. A read error always says where: file, 1-based line and,
//! when one token is to blame, its 1-based position and meaning, e.g.
//! `trace.txt:5: field 7 (mapper port): port 151 out of range 0..150`.

use std::fmt;

use thiserror::Error;

use crate::coflow::CoflowId;

/// One whitespace-separated token of a line: its 1-based position and what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub index: usize,
    pub name: String,
}

impl Field {
    pub fn new(index: usize, name: impl Into<String>) -> Self {
        Field {
            index,
            name: name.into(),
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field {} ({})", self.index, self.name)
    }
}

/// What went wrong while reading a trace.
#[derive(Debug, Error)]
pub enum TraceErrorKind {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("empty file (expected a header line `<ports> <coflows>`)")]
    Empty,
    #[error("line longer than {limit} bytes")]
    LineTooLong { limit: usize },
    #[error("file larger than {limit} bytes")]
    FileTooLarge { limit: u64 },
    /// `byte` is 1-based within the line.
    #[error("byte {byte} of the line is not UTF-8 text")]
    NotUtf8 { byte: usize },
    #[error("bad header: {0} (expected `<ports> <coflows>`)")]
    BadHeader(String),
    #[error("field 2 (coflow count): the header announces {header} coflows but the file has only {found}")]
    TooFewCoflows { header: usize, found: usize },
    #[error("coflow line beyond the {header} announced by field 2 (coflow count) of the header")]
    TooManyCoflows { header: usize },
    /// `why` says which count announced the missing tokens, when one did.
    #[error("{field}: line ends early{why}")]
    Truncated { field: Field, why: String },
    #[error("{field}: `{text}` is not {expected}")]
    BadNumber {
        field: Field,
        text: String,
        expected: &'static str,
    },
    #[error("{field}: port {port} out of range 0..{ports}")]
    PortOutOfRange { field: Field, port: u64, ports: u32 },
    /// The text as written (the value may be thousands of digits long: 1e308), bounded by
    /// [`crate::echo::echo`].
    #[error("{field}: size `{text}` MB is not a number of MB from 0 to 2^33 (8 PiB, the most bytes counted exactly)")]
    BadSize { field: Field, text: String },
    /// A size above 0 that is not one byte: flows move whole bytes, and 0 is refused as no
    /// data, so 1e-300 MB (a count of no byte) is refused too.
    #[error("{field}: size `{text}` MB is less than one byte (2^-20 MB) but not 0: give 0 for no data or a size of at least one byte")]
    SubByteSize { field: Field, text: String },
    #[error("{field}: coflow {id} has no bytes (all its sizes are 0 MB): its completion time would be 0 and every ratio with it undefined")]
    EmptyCoflow { field: Field, id: CoflowId },
    #[error("{field}: duplicate coflow id {id} (first on line {first_line})")]
    DuplicateId {
        field: Field,
        id: CoflowId,
        first_line: usize,
    },
    #[error("{field}: port {port} appears twice among the {role}s (first as field {first_index})")]
    DuplicatePort {
        field: Field,
        role: &'static str,
        port: u32,
        first_index: usize,
    },
    #[error("{field}: declares {declared}, but {why}")]
    DeclaredCount {
        field: Field,
        declared: usize,
        why: String,
    },
    /// `flows` is `None` when the count passes u64.
    #[error("{field}: {} flows ({how}), after {before} flows in the coflows before it: over the limit of {max} flows a trace may hold (about {} bytes each to read, more to simulate); raise it with --max-flows", flows.map_or_else(|| "more than 2^64".to_string(), |f| f.to_string()), super::FLOW_BYTES)]
    TooManyFlows {
        field: Field,
        how: String,
        flows: Option<u64>,
        before: u64,
        max: u64,
    },
    /// A coflow's parents or compute time (the DAG extension, `trace::dag`).
    #[error("{field}: {why}")]
    Dag { field: Field, why: String },
    #[error("{field}: unexpected trailing token `{token}`")]
    TrailingTokens { field: Field, token: String },
    #[error("unknown trace format: {0}")]
    UnknownFormat(String),
}

/// A read error located in a file. `line` is 0 when the error concerns the whole file (I/O,
/// empty file).
#[derive(Debug, Error)]
#[error("{}: {kind}", location(file, *line))]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub kind: TraceErrorKind,
}

fn location(file: &str, line: usize) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}")
    }
}

impl TraceError {
    pub fn new(file: &str, line: usize, kind: TraceErrorKind) -> Self {
        TraceError {
            file: file.to_string(),
            line,
            kind,
        }
    }
}

/// Why a trace could not be written.
#[derive(Debug, Error)]
pub enum WriteError {
    #[error("coflow {id} cannot be written in {format} format: {why}")]
    Unrepresentable {
        id: CoflowId,
        format: &'static str,
        why: String,
    },
    #[error("cannot write trace: {0}")]
    Io(#[from] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_file_line_and_field() {
        let e = TraceError::new(
            "trace.txt",
            5,
            TraceErrorKind::PortOutOfRange {
                field: Field::new(7, "mapper port"),
                port: 151,
                ports: 150,
            },
        );
        assert_eq!(
            e.to_string(),
            "trace.txt:5: field 7 (mapper port): port 151 out of range 0..150"
        );
    }

    #[test]
    fn whole_file_errors_have_no_line() {
        let e = TraceError::new("t.txt", 0, TraceErrorKind::Empty);
        assert!(e.to_string().starts_with("t.txt: empty file"));
    }
}
