//! The runtime's errors: what failed, where (host, coflow, data id) and why.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("protocol error from {peer}: {msg}")]
    Protocol { peer: String, msg: String },
    #[error("{peer} refused: {msg}")]
    Remote { peer: String, msg: String },
    #[error("coordinator {addr}: {status}")]
    Rpc {
        addr: String,
        #[source]
        status: Box<tonic::Status>,
    },
    #[error("cannot reach coordinator {addr}: {}", chain(.source))]
    Connect {
        addr: String,
        #[source]
        source: tonic::transport::Error,
    },
    #[error(
        "checksum mismatch in block {block} of coflow {coflow} data `{data_id}` from daemon {host}"
    )]
    Checksum {
        host: String,
        coflow: u64,
        data_id: String,
        block: u64,
    },
    #[error("daemon {host} failed during the transfer of coflow {coflow} data `{data_id}` after {got} of {} bytes: {why}", size.map_or("a not yet known number of".to_string(), |s| s.to_string()))]
    DaemonFailed {
        host: String,
        coflow: u64,
        data_id: String,
        got: u64,
        /// `None` for an object still being put when the get started (streaming).
        size: Option<u64>,
        why: String,
    },
    /// A get of an object that was still being put: the put broke off.
    #[error("the put of coflow {coflow} data `{data_id}` being streamed from daemon {host} was abandoned after {got} bytes reached this get: {why}")]
    Abandoned {
        host: String,
        coflow: u64,
        data_id: String,
        got: u64,
        why: String,
    },
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error(transparent)]
    Netns(#[from] coflowkit_testbed::NetnsError),
}

/// An error and its causes, `a: b: c` (tonic's transport errors say little at the top).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        // io::Error repeats its inner error as its source.
        let t = c.to_string();
        if !s.ends_with(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn rpc(addr: &str, status: tonic::Status) -> Self {
        Error::Rpc {
            addr: addr.to_string(),
            status: Box::new(status),
        }
    }
}
