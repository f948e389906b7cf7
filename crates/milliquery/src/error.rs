//! What can go wrong: bad tablets (named by file, line and field), a rank count that does not
//! match the tablets, bad arguments, and the group's own errors.

use std::path::PathBuf;

use coflowkit_group::GroupError;

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("missing tablet {path} (rank {rank} of {ranks})")]
    MissingTablet {
        path: PathBuf,
        rank: usize,
        ranks: usize,
    },
    #[error("{path}: {what}, not a tablet file (rank {rank} of {ranks})")]
    NotATablet {
        path: PathBuf,
        what: &'static str,
        rank: usize,
        ranks: usize,
    },
    #[error("{dir}: the tablets are for {tablets} ranks, but {ranks} ranks are running")]
    RankMismatch {
        dir: PathBuf,
        tablets: usize,
        ranks: usize,
    },
    #[error("{path}: line {line}, field `{field}`: {reason}")]
    Malformed {
        path: PathBuf,
        line: u64,
        field: String,
        reason: String,
    },
    #[error("{0}")]
    BadArgument(String),
    #[error("group communication: {0}")]
    Group(#[from] GroupError),
    #[error("a message from rank {from} is malformed ({what})")]
    BadMessage { from: usize, what: &'static str },
    #[error("a gathered message is malformed ({what})")]
    BadMerge { what: &'static str },
}
