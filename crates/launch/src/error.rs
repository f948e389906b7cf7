use coflowkit_model::echo::echo;
use thiserror::Error;

/// Ranks a rendezvous timeout names (of a world of up to 2^32 - 1): the rest are counted.
pub const MISSING_NAMED: usize = 16;

#[derive(Debug, Error)]
pub enum LaunchError {
    #[error("environment variable {var}={:?}: {why}", echo(.value))]
    Env {
        var: &'static str,
        value: String,
        why: String,
    },
    #[error("{present} is set but {missing} is not (a launcher sets both)")]
    EnvMissing {
        present: &'static str,
        missing: &'static str,
    },
    #[error("{var}: rank {rank} is not below the size {size}")]
    RankOutOfRange {
        var: &'static str,
        rank: u32,
        size: u32,
    },
    #[error("{size} ranks but no rendezvous: set COFLOWKIT_RENDEZVOUS=host:port (rank 0's address) or COFLOWKIT_HOSTFILE=path (first line: rank 0's host)")]
    NoRendezvous { size: u32 },
    #[error("host file {}: {why}", coflowkit_model::echo::echo(.path))]
    HostFile { path: String, why: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("rendezvous: after {waited_s:.1} s still no word from {missing_count} rank(s) of {size}: {missing:?}{}",
            if *.missing_count as usize > .missing.len() { " ..." } else { "" })]
    RendezvousTimeout {
        waited_s: f64,
        size: u32,
        /// The first [`MISSING_NAMED`] of them.
        missing: Vec<u32>,
        missing_count: u32,
    },
    #[error("rendezvous: rank 0 at {addr} did not answer within {waited_s:.1} s ({why})")]
    JoinTimeout {
        addr: String,
        waited_s: f64,
        why: String,
    },
    #[error("rendezvous: rank 0 refused rank {rank}: {why}")]
    Refused { rank: u32, why: String },
    #[error("rendezvous: rank 0 sent a malformed table: {0}")]
    BadTable(String),
    #[error("rank {rank} of {size} failed ({status}); the other ranks were stopped")]
    RankFailed {
        rank: u32,
        size: u32,
        status: String,
    },
    #[error("local launch: rank(s) {running:?} still running after {waited_s:.1} s; all stopped")]
    LocalTimeout { running: Vec<u32>, waited_s: f64 },
    /// The launcher got this signal; every rank was killed and reaped. Exit with 128 + it.
    #[error("interrupted by signal {signal}; all ranks stopped")]
    Interrupted { signal: i32 },
    #[error("emulated cluster: {0}")]
    Netns(String),
    #[error("no job secret: set COFLOWKIT_SECRET_FILE=path (the same file at every rank) or COFLOWKIT_SECRET, or COFLOWKIT_INSECURE=1 to run with unauthenticated datagrams and rendezvous")]
    NoSecret,
    #[error("{0}")]
    Bad(String),
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> LaunchError {
    let what = what.into();
    move |source| LaunchError::Io { what, source }
}
