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
    #[error("coordinator {addr}: {}", status_line(.status))]
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
    /// An error with what this process's connections met before it (`crate::trouble`): the
    /// cause that was only in a warning (EMFILE at an accept).
    #[error("{error}{why}")]
    Explained { error: Box<Error>, why: String },
    #[error(transparent)]
    Netns(#[from] coflowkit_testbed::NetnsError),
}

/// A gRPC status in one bounded line, `Unavailable: message: cause` (tonic's `Display` of a
/// status prints its metadata map and its source's `Debug` form, a dump of several hundred bytes
/// when a server closes a connection at its limit).
pub fn status_line(s: &tonic::Status) -> String {
    let mut msg = s.message().to_string();
    if let Some(src) = std::error::Error::source(s) {
        let causes = chain(src);
        // tonic's message often is the cause's first link (`transport error`).
        if msg.is_empty() || causes.starts_with(&msg) {
            msg = causes;
        } else if !msg.contains(&causes) {
            msg.push_str(": ");
            msg.push_str(&causes);
        }
    }
    if msg.is_empty() {
        msg = s.code().description().to_string();
    }
    let one_line = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:?}: {}", s.code(), coflowkit_model::echo::echo(&one_line))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Adversarial pass 32, A10: `status` printed tonic's `Display` of a status, metadata and
    /// a cause's `Debug` dump included.
    #[test]
    fn a_status_is_one_bounded_line_with_its_code_and_message() {
        let cause = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let mut s = tonic::Status::unavailable(format!("closed\n{}", "x".repeat(5000)));
        s.set_source(std::sync::Arc::new(cause));
        let line = status_line(&s);
        assert!(line.starts_with("Unavailable: closed x"), "{line}");
        assert!(
            !line.contains('\n') && !line.contains("metadata") && line.len() < 400,
            "{line}"
        );
        let bare = status_line(&tonic::Status::new(tonic::Code::Unknown, ""));
        assert_eq!(bare, "Unknown: Unknown error");
        let short = tonic::Status::unavailable("busy");
        let mut s = short;
        s.set_source(std::sync::Arc::new(std::io::Error::other("reset by peer")));
        assert_eq!(status_line(&s), "Unavailable: busy: reset by peer");
        let mut s = tonic::Status::unknown("transport error");
        s.set_source(std::sync::Arc::new(std::io::Error::other(
            "transport error: connection reset",
        )));
        assert_eq!(
            status_line(&s),
            "Unknown: transport error: connection reset"
        );
        let e = Error::rpc("h:1", tonic::Status::unavailable("busy"));
        assert_eq!(e.to_string(), "coordinator h:1: Unavailable: busy");
    }
}
