use thiserror::Error;

#[derive(Debug, Error)]
pub enum NetnsError {
    #[error("network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN); running as uid {0}")]
    NotRoot(u32),
    #[error("network namespaces need `{0}`, which was not found (install iproute2)")]
    Missing(&'static str),
    #[error("`{command}` failed: {why}")]
    Command { command: String, why: String },
    #[error("entering network namespace {namespace}: {source}")]
    Enter {
        namespace: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no free private /24 in 10.200.0.0/16 to 10.250.0.0/16 (every one overlaps a route)")]
    NoSubnet,
    #[error("{0}")]
    Config(String),
}

pub type Result<T, E = NetnsError> = std::result::Result<T, E>;
