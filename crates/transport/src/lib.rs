//! The flash-burst shuffle over kernel UDP (thesis §3.2-3.5): one socket per rank and a
//! background I/O thread per endpoint that drives the sans-IO `coflowkit_shuffle::proto::Node`
//! of each operation. Nothing of the protocol is here: the endpoint moves bytes, keeps time,
//! paces, batches system calls and checks what arrives.

#![allow(dead_code)] // the endpoint that uses these lands with the node's contract

mod batch;
mod completed;
mod config;
mod error;
mod loss;
mod pacer;
mod staging;
mod stats;
pub mod wire;

pub use config::{EndpointConfig, ExchangeProtocol};
pub use error::TransportError;
pub use loss::LossInjection;
pub use stats::EndpointStats;
