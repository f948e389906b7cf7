//! The flash-burst shuffle over kernel UDP (thesis §3.2-3.5): one socket per rank and a
//! background I/O thread per [`Endpoint`] that drives the sans-IO
//! `coflowkit_shuffle::proto::Node` of each operation. Nothing of the protocol is here: the
//! endpoint moves bytes, keeps time, paces, batches system calls and checks what arrives.
//!
//! - [`wire`]: the versioned datagram header;
//! - [`auth`]: the authenticated encryption (AES-128-GCM) of every datagram ([`WireKey`]);
//! - [`Endpoint`]: `exchange(op, protocol, sends, recv_from)`, blocking, concurrent per op id;
//! - [`LossInjection`]: drop, duplicate, reorder at send, from a seed.

pub mod auth;
mod batch;
mod completed;
mod config;
mod driver;
mod endpoint;
mod error;
mod loss;
mod op;
mod pacer;
mod staging;
mod stats;
pub mod wire;

pub use auth::WireKey;
pub use config::{EndpointConfig, ExchangeProtocol, ReturnWhen, DEFAULT_PAYLOAD, MAX_PAYLOAD};
pub use endpoint::Endpoint;
pub use error::TransportError;
pub use loss::LossInjection;
pub use stats::EndpointStats;
