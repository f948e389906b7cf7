//! Protocol names and every switch of the thesis' ablation (§5 of the spec), with the defaults
//! of the full protocol. `docs/flash-shuffle.md` says why each default is what it is.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Which message a sender or a receiver serves first (thesis §6.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Policy {
    /// Greatest remaining processing fraction.
    Grpf,
    /// Greatest remaining processing time (bytes).
    Grpt,
    /// Shortest remaining processing time (bytes).
    Srpt,
}

/// The per-message limit on outstanding grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Window {
    /// Pro rata: proportional to the message's share of the receiver's remaining packets.
    ProRata,
    /// A constant number of grants per message (`ConstGrWndLim` uses RTTpackets).
    Const(u32),
    /// No per-message limit (only the receiver's total limit applies).
    Unlimited,
}

/// Spec §13.1: `ceil` (Listing 2) or `max(1, floor)` (§3.4 text) for the pro rata window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rounding {
    FloorMax1,
    Ceil,
}

/// Unscheduled data (thesis §3.3, Figure 6.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unscheduled {
    None,
    /// `budget` packets per sender: the first `budget` entries of its GRPF packet schedule,
    /// which splits them over its messages pro rata (`ProRataUnschedPkts`).
    ProRata,
    /// The first `budget` packets of every message (`ConstUnschedPkts`, Homa's RTTbytes).
    PerMessage,
}

/// What a receiver's priority is computed from (spec §13.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RxBasis {
    /// Packets received (Listing 3).
    Received,
    /// Packets granted (one reading of §3.4's "update position after sending the grant").
    Granted,
}

/// When a receiver starts granting (spec §13.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GrantStart {
    /// As soon as a message's first packet arrives (the full protocol, §3.4).
    FirstPacket,
    /// Only after hearing from every sender with data for it (the basic protocol, §3.1.5).
    AllSenders,
}

/// The grant-based protocol family (GRPF and its ablations, Hadoop-C, push strawmen).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrantOptions {
    pub policy: Policy,
    /// Packets a receiver needs outstanding to keep its link busy (one RTT).
    pub rtt_packets: u32,
    /// Degree of overcommitment: `max_out_grants = overcommit x rtt_packets`.
    pub overcommit: u32,
    pub window: Window,
    pub rounding: Rounding,
    /// Randomized packet priorities with seeds shared between the ends (§3.8).
    pub randomize: bool,
    pub unscheduled: Unscheduled,
    /// Unscheduled packets per sender (`ProRata`) or per message (`PerMessage`).
    pub unsched_budget: u32,
    pub rx_basis: RxBasis,
    pub start: GrantStart,
    /// Announce every message at time 0 (an empty DATA packet with its size), not only the
    /// messages without unscheduled packets (spec §13.8; see docs/flash-shuffle.md).
    pub announce_all: bool,
    /// GlobalSched (thesis §3.1.7, Eq. 3.14): with `Some(n)`, the pro rata window becomes
    /// `max_out x msg_rem / G x (rx_rem / G)^n` with G the all-reduced maximum of the
    /// receivers' remaining packets (the thesis evaluated n = 2). `None`: Eq. 3.8.
    pub global_exponent: Option<u32>,
    /// Bandwidth redirection limit (thesis §6.2.2): a sender sends a granted packet only if
    /// it is at most this many entries after the first unsent packet of its GRPF packet
    /// schedule. `None`: unlimited (the default protocol).
    pub redirect_limit: Option<u32>,
    /// Pro rata overcommitment (Eq. 3.11): a receiver's `max_out_grants` (and so its windows)
    /// scaled by its total incoming packets over the largest receiver's, learned out of band
    /// (`Node::set_overcommit_share`). Off by default, as in the evaluated GRPF.
    pub pro_rata_overcommit: bool,
    /// Grant batching: a receiver grants in units of this many packets (1: one grant per
    /// packet, the thesis' protocol and the simulator's default). With K > 1 it waits until a
    /// whole unit fits under its limit (`max_out_grants` for GRPF, the constant window for
    /// Hadoop-C), advances the chosen message's cumulative grant by the unit (or what is left
    /// of the message) in one GRANT, and folds grants to the same message decided together
    /// into one datagram. Outstanding grants then stay between the limit - K + 1 and the limit;
    /// a pro rata window is checked before each unit, so a message may hold up to its window
    /// + K - 1. docs/flash-shuffle.md says why and what it costs.
    #[serde(default = "one")]
    pub grant_batch: u32,
}

fn one() -> u32 {
    1
}

/// The grant batch of the real transport by default (`GrantOptions::real_link`): on a host
/// whose CPU is the bottleneck, each GRANT datagram costs as much as a DATA one to send and
/// receive (docs/transport.md, "Grant batching").
pub const REAL_GRANT_BATCH: u32 = 4;

impl Default for GrantOptions {
    /// The full GRPF protocol as evaluated (thesis §6, spec §5 first row).
    fn default() -> Self {
        GrantOptions {
            policy: Policy::Grpf,
            rtt_packets: 8,
            overcommit: 10,
            window: Window::ProRata,
            rounding: Rounding::FloorMax1,
            randomize: true,
            unscheduled: Unscheduled::ProRata,
            unsched_budget: 8,
            rx_basis: RxBasis::Received,
            start: GrantStart::AllSenders,
            announce_all: true,
            global_exponent: None,
            redirect_limit: None,
            pro_rata_overcommit: false,
            grant_batch: 1,
        }
    }
}

impl GrantOptions {
    /// The ablation's starting point (§6.1.2): no unscheduled packets, exactly one RTT
    /// outstanding, constant windows of RTTpackets, deterministic priorities. (Grants at the
    /// same network priority as data is a network setting of the simulator.)
    pub fn baseline(policy: Policy) -> Self {
        GrantOptions {
            policy,
            overcommit: 1,
            window: Window::Const(8),
            randomize: false,
            unscheduled: Unscheduled::None,
            ..GrantOptions::default()
        }
    }

    pub fn max_out_grants(&self) -> u64 {
        self.overcommit as u64 * self.rtt_packets as u64
    }

    /// The defaults of a real driver: the full protocol with grants batched by
    /// [`REAL_GRANT_BATCH`] (the simulator keeps 1, the thesis' protocol).
    pub fn real_link() -> Self {
        GrantOptions {
            grant_batch: REAL_GRANT_BATCH,
            ..GrantOptions::default()
        }
    }

    /// The grant unit under a limit of `limit` outstanding grants: K, but never more than the
    /// limit (a unit that can never fit would stop granting).
    pub fn grant_unit(&self, limit: u64) -> u64 {
        (self.grant_batch.max(1) as u64).min(limit.max(1))
    }
}

/// Send order of the push strawmen (senders send everything without grants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PushOrder {
    /// Receivers in index order, one message after the other (Figure 3.3).
    Blocks,
    /// One packet per message in turn, receivers in index order (Figure 3.4).
    RoundRobin,
}

/// A protocol by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Protocol {
    /// `grpf`, `grpt`, `srpt`: the receiver-driven protocol with that policy at both ends.
    Grant(Policy),
    /// `hadoop-C`: each receiver grants C random messages at a time, constant windows of
    /// RTTpackets, no total limit; senders round robin.
    Hadoop { connections: u32 },
    /// `madd`: central pacing of every message at size / Gamma, no grants.
    Madd,
    /// `lockstep`: N - 1 steps, node i sends to (i + k) mod N in step k, barrier between steps.
    Lockstep,
    /// `push-blocks`, `push-rr`: everything sent unscheduled in a fixed order (strawmen of
    /// Figures 3.3 and 3.4).
    Push(PushOrder),
}

#[derive(Debug, Error, PartialEq)]
pub enum ProtocolError {
    #[error(
        "unknown protocol `{0}` (expected grpf, grpt, srpt, hadoop-C such as hadoop-5, madd, lockstep, push-blocks or push-rr)"
    )]
    Unknown(String),
    #[error("protocol `{0}`: the number of connections must be a positive integer")]
    BadConnections(String),
}

impl Protocol {
    pub fn parse(name: &str) -> Result<Protocol, ProtocolError> {
        let lower = name.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "grpf" => Protocol::Grant(Policy::Grpf),
            "grpt" => Protocol::Grant(Policy::Grpt),
            "srpt" => Protocol::Grant(Policy::Srpt),
            "madd" => Protocol::Madd,
            "lockstep" => Protocol::Lockstep,
            "push-blocks" => Protocol::Push(PushOrder::Blocks),
            "push-rr" => Protocol::Push(PushOrder::RoundRobin),
            _ => match lower.strip_prefix("hadoop-") {
                Some(c) => match c.parse::<u32>() {
                    Ok(c) if c > 0 => Protocol::Hadoop { connections: c },
                    _ => return Err(ProtocolError::BadConnections(name.to_string())),
                },
                None => return Err(ProtocolError::Unknown(name.to_string())),
            },
        })
    }

    pub fn name(&self) -> String {
        match self {
            Protocol::Grant(Policy::Grpf) => "grpf".into(),
            Protocol::Grant(Policy::Grpt) => "grpt".into(),
            Protocol::Grant(Policy::Srpt) => "srpt".into(),
            Protocol::Hadoop { connections } => format!("hadoop-{connections}"),
            Protocol::Madd => "madd".into(),
            Protocol::Lockstep => "lockstep".into(),
            Protocol::Push(PushOrder::Blocks) => "push-blocks".into(),
            Protocol::Push(PushOrder::RoundRobin) => "push-rr".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_say_why() {
        for n in [
            "grpf",
            "grpt",
            "srpt",
            "hadoop-5",
            "hadoop-1000",
            "madd",
            "lockstep",
            "push-rr",
            "push-blocks",
        ] {
            assert_eq!(Protocol::parse(n).unwrap().name(), n);
        }
        assert_eq!(
            Protocol::parse("HADOOP-3").unwrap(),
            Protocol::Hadoop { connections: 3 }
        );
        assert!(matches!(
            Protocol::parse("hadoop-0"),
            Err(ProtocolError::BadConnections(_))
        ));
        assert!(matches!(
            Protocol::parse("hadoop"),
            Err(ProtocolError::Unknown(_))
        ));
        assert!(matches!(
            Protocol::parse("tcp"),
            Err(ProtocolError::Unknown(_))
        ));
    }

    #[test]
    fn default_overcommitment_is_ten_rtts_of_eight_packets() {
        assert_eq!(GrantOptions::default().max_out_grants(), 80);
    }
}
