use thiserror::Error;

#[derive(Debug, Error)]
pub enum OrchestraError {
    #[error("{0}")]
    Bad(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("protocol error from {peer}: {why}")]
    Protocol { peer: String, why: String },
    #[error("broadcast failed: {0}")]
    Failed(String),
    /// The controller ended the run and reports why itself: a node's copy of the reason is
    /// not printed again (it was, once per host; pass 33, B16).
    #[error("broadcast aborted by the controller: {0}")]
    Aborted(String),
    #[error("emulated cluster: {0}")]
    Netns(String),
}

/// `map_err(io("what was being done"))`.
pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> OrchestraError {
    let what = what.into();
    move |source| OrchestraError::Io { what, source }
}
