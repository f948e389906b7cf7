//! Group communication for flash bursts (MilliSort §4, spec millisort.md §8.2): k-nomial
//! broadcast and gather (with a combine callback at every tree node), all-gather by recursive
//! doubling for any group size, a dissemination barrier, and all-to-all-v with the shuffle
//! protocol chosen per call (the transport's grpf/hadoop-C/madd, or the group's own lockstep
//! and high-entropy). Everything runs over `Exchange`, so the schedules are tested without
//! sockets and the same code drives the UDP transport.

mod codec;
pub mod counted;
mod endpoint;
mod error;
pub mod exchange;
mod group;
pub mod id;
pub mod mem;
mod ops;
mod proto;
pub mod schedule;
mod start;

pub use counted::Counted;
pub use error::GroupError;
pub use exchange::{Exchange, WireProto};
pub use group::Group;
pub use proto::ShuffleProto;
pub use schedule::gather::{BCAST_K, GATHER_K};
pub use schedule::high_entropy::HighEntropyOptions;
pub use start::{unix_ns, Start};
