//! The real system: a coordinator, a daemon per host and the coflow client API, moving real
//! bytes at the rates the shared schedulers of `coflowkit-sched` choose.
//!
//! - [`coordinator`]: registry of coflows and daemons; its brain is `coflowkit_sched::Scheduler`
//!   (the same code the simulator runs), called on events, at the wake-ups it asks for and every
//!   tick; rates go to daemons over a server-streaming gRPC call (protocol `coflowkit.v1`).
//! - [`daemon`]: stores put data, serves gets over TCP (optionally TLS) with per-flow
//!   token-bucket pacing and per-block CRC-32, reports progress every Δ, falls back to fair
//!   share without a coordinator, re-registers its soft state when it returns, and recovers its
//!   spilled objects when restarted on the same data dir.
//! - [`Client`]: `register`, `put`, `get`, `unregister`.
//! - [`HostRuntime`]: a tokio runtime inside one host of the emulated cluster of
//!   `coflowkit_testbed` (network namespaces with `tc` rate limits per host).
//! - [`tls`]: optional TLS on both planes ([`TlsServer`], [`TlsClient`]).
//!
//! See docs/runtime.md for the architecture and the decisions.

pub mod auth;
pub mod broadcast_run;
pub mod client;
pub mod coordinator;
pub mod daemon;
pub mod error;
pub mod frame;
mod host_runtime;
pub mod listen;
pub mod overheads;
pub mod pacer;
pub mod proto;
pub mod replay;
pub mod rpc;
mod running;
/// Moved to `coflowkit_model::small_file` (the launcher reads its files the same way).
pub use coflowkit_model::small_file;
pub mod tls;
mod trouble;

pub use auth::{Token, PROTOCOL_VERSION};
pub use client::HostDemand;
pub use client::{BroadcastOptions, Client, ClientConfig, CoflowId, CoflowOptions, CoflowWriter};
pub use coordinator::CoordinatorConfig;
pub use daemon::DaemonConfig;
pub use error::{Error, Result};
pub use host_runtime::HostRuntime;
pub use running::Running;
pub use tls::{TlsClient, TlsServer};
