//! Orchestra (coflow thesis ch. 4, spec `coflow.md` §2): broadcasts between real processes
//! over TCP with Cornet (large blocks, send and receive slots, the source's round robin,
//! controller-given peer sets, one integrity check) and the baselines the thesis compares it
//! with (chain, d-ary tree, HDFS-like replication, a BitTorrent-like swarm), the pipelined
//! binomial tree lower bound, rack awareness (configured or learned), and the transfer
//! controllers that pick a mechanism per transfer and share the network across transfers.
//!
//! The controller's state ([`controller`]) and a Cornet receiver's choice of what to ask whom
//! ([`cornet`]) are sans-IO: `coflowkit broadcast` hosts them ([`run`], one process per host,
//! [`node`]), and so does the runtime (its coordinator is the controller of `client.broadcast`,
//! its daemons the peers).

pub mod bound;
pub mod clustering;
pub mod control;
pub mod controller;
pub mod cornet;
pub mod data;
mod error;
pub mod experiments;
pub mod flows;
pub mod itc;
pub mod layout;
pub mod link;
pub mod mechanism;
pub mod node;
pub mod pace;
pub mod roundrobin;
pub mod run;
pub mod select;
pub mod topology;
pub mod transfers;
pub mod wire;

pub use control::Options;
pub use error::OrchestraError;
pub use mechanism::Mechanism;
pub use run::{run_broadcast, run_broadcast_on, BroadcastConfig, BroadcastResult, Kill, KillWhen};
pub use topology::Racks;
