//! Why a matrix could not be read, written or generated. Read errors name file, line and field.

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum MatrixErrorKind {
    #[error("cannot read: {0}")]
    Io(String),
    #[error("empty file (expected a header line `nodes <n> packets` or `nodes <n> normalized`)")]
    Empty,
    #[error("field {field} ({name}): {why}")]
    Field {
        field: usize,
        name: String,
        why: String,
    },
    #[error("row {row} has {found} fields, expected {expected}")]
    RowLength {
        row: usize,
        found: usize,
        expected: usize,
    },
    #[error("the header announces {expected} rows but the file has {found}")]
    MissingRows { expected: usize, found: usize },
    #[error("row {row}: a row beyond the {expected} the header announces")]
    ExtraRow { row: usize, expected: usize },
    #[error("this is a normalized matrix; a packet matrix is needed (generate one with `coflowkit shuffle gen`)")]
    NotPackets,
    #[error("{field}: {why}")]
    Spec { field: String, why: String },
    #[error("every cell off the diagonal is 0: a shuffle with no data to send over the network (the diagonal stays on its node)")]
    NoNetworkData,
    #[error("row and column sums cannot both be kept in whole packets: {0}")]
    Rounding(String),
}

/// An error located in a file (`line` 0: the whole file) or, with an empty `file`, in a
/// generation request.
#[derive(Debug, Error, PartialEq)]
#[error("{}{kind}", location(file, *line))]
pub struct MatrixError {
    pub file: String,
    pub line: usize,
    pub kind: MatrixErrorKind,
}

fn location(file: &str, line: usize) -> String {
    match (file.is_empty(), line) {
        (true, _) => String::new(),
        (false, 0) => format!("{file}: "),
        (false, l) => format!("{file}:{l}: "),
    }
}

impl MatrixError {
    pub fn at(file: &str, line: usize, kind: MatrixErrorKind) -> Self {
        MatrixError {
            file: file.to_string(),
            line,
            kind,
        }
    }
    pub fn spec(field: &str, why: &str) -> Self {
        Self::at(
            "",
            0,
            MatrixErrorKind::Spec {
                field: field.to_string(),
                why: why.to_string(),
            },
        )
    }
}
