//! The one thing a group needs from below: an operation that sends some messages and receives
//! one message from each of some peers, all under one operation id. The UDP transport's
//! `Endpoint` implements it (crate `coflowkit-transport`); the tests use threads and a map.

use coflowkit_shuffle::proto::{GrantOptions, Policy, Protocol};

use crate::GroupError;

/// The protocol an exchange runs under in the transport: one of the sans-IO node's protocols
/// (grpf/grpt/srpt and their options, hadoop-C, madd, push). Lockstep and high-entropy are not
/// here: the group layer builds them from several exchanges (see `ShuffleProto`).
#[derive(Debug, Clone, PartialEq)]
pub struct WireProto {
    pub protocol: Protocol,
    pub grant: GrantOptions,
    /// MADD's Gamma (the busiest link's packets over the operation) as num / den, when the
    /// caller knows the whole matrix; `None`: the transport uses this rank's own packets.
    pub madd_gamma: Option<(u64, u64)>,
    /// Seed of the protocol's random choices (randomized priorities, Hadoop's picks).
    pub seed: u64,
}

impl WireProto {
    pub fn new(protocol: Protocol) -> WireProto {
        WireProto {
            protocol,
            grant: GrantOptions::real_link(),
            madd_gamma: None,
            seed: 0,
        }
    }
}

impl Default for WireProto {
    /// GRPF with the thesis' defaults.
    fn default() -> Self {
        WireProto::new(Protocol::Grant(Policy::Grpf))
    }
}

pub trait Exchange: Send + Sync {
    /// One operation: send each `(world rank, bytes)` and receive exactly one message from each
    /// world rank in `recv_from`; returns `(sender, bytes)` pairs (any order). Blocks until
    /// done. Messages are named by (op, src, dst): a sender and its receiver use the same `op`,
    /// and no (op, src, dst) is used twice. Calls with different ops may run concurrently from
    /// different threads, and a message may arrive before its receiver has asked for it.
    fn exchange(
        &self,
        op: u64,
        sends: Vec<(u32, Vec<u8>)>,
        recv_from: &[u32],
        proto: &WireProto,
    ) -> Result<Vec<(u32, Vec<u8>)>, GroupError>;

    fn world_rank(&self) -> u32;

    fn world_size(&self) -> u32;
}
