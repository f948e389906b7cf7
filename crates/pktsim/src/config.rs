//! The simulator's settings: the network (thesis ch. 4 and §6 defaults) and the protocol.
//! Every default is argued in docs/flash-shuffle.md.

use coflowkit_shuffle::proto::{GrantOptions, Protocol, ProtocolError, Recovery};

use crate::loss::Loss;
use crate::preempt::Preemption;
use crate::variation::Variation;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest ToR-core bandwidth, as a fraction of a rack's host bandwidth: far past any
/// over-provisioning, and small enough that port credits in milli-packets stay in 64 bits.
pub const MAX_CORE_FRACTION: f64 = 1000.0;
/// Longest loss-recovery timer period (timesteps): the step budget adds 40 periods.
pub const MAX_RESEND_TIMEOUT: u64 = 1_000_000_000;

/// Which switch output ports serve control packets ahead of data (thesis §3.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Priorities {
    /// One FIFO per port: grants queue behind data (the ablation's baseline).
    None,
    /// ToR ports facing hosts only (`Prio@Edge`, the default GRPF).
    Edge,
    /// Every output port of every switch (`Prio@Core`).
    All,
}

/// How nodes are placed in racks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Node i in rack i / hosts_per_rack.
    Block,
    /// A seeded random permutation (the thesis' limited-core runs).
    Random,
}

/// Whether the diagonal (local data, never sent) counts in `total_data_bytes` (spec §13.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LocalBytes {
    Count,
    Exclude,
}

/// One simulation's settings. `protocol` is a name such as `grpf`, `hadoop-5`, `madd`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub racks: usize,
    pub protocol: String,
    pub seed: u64,
    /// Options of the grant-based protocols (GRPF family; Hadoop-C uses `rtt_packets`).
    pub grant: GrantOptions,
    /// Host link speed; one timestep is one full packet at this rate.
    pub host_gbps: f64,
    pub packet_bytes: u32,
    /// ToR-core bandwidth as a fraction of the rack's aggregate host bandwidth.
    pub core_fraction: f64,
    /// Timesteps per hop: 2 gives RTT 8 inside a rack (4 hops) and 16 across (8 hops).
    pub hop_latency: u32,
    /// Data packets a host processes per timestep (control packets are unlimited).
    pub rx_rate: u32,
    pub priorities: Priorities,
    pub placement: Placement,
    pub local_bytes: LocalBytes,
    /// Timesteps between the end of one lockstep step and the start of the next.
    pub barrier_steps: u32,
    /// Points in the utilization series.
    pub util_samples: usize,
    /// Check the protocol invariants on every packet (cheap; on by default).
    pub audit: bool,
    /// Give up after this many timesteps (0: 50 x the bound + 100,000, plus 40 timer periods
    /// with loss recovery).
    pub max_steps: u64,
    /// Application preemption (off by default).
    pub preempt: Preemption,
    /// GlobalSched staleness X (`StaleX`): the all-reduce result arrives every
    /// X x ceil(log2 N) x 0.5 RTT timesteps and is that old; 0 is `Fresh`. Used only when
    /// `grant.global_exponent` is set.
    pub allreduce_stale: f64,
    /// GlobalSched with a stale all-reduce: receivers lower the value by one packet per
    /// timestep of its age (spec §13.11; docs/flash-shuffle.md).
    pub allreduce_drain: bool,
    /// Link bandwidth variation of the switch ports (off by default). The bounds and oracles
    /// stay at nominal capacity.
    pub bw_variation: Variation,
    /// Packets dropped, duplicated or reordered on the wire (off by default). Any of them
    /// turns the protocol's loss recovery on.
    #[serde(default = "loss_off")]
    pub loss: Loss,
    /// Loss recovery's timer period in timesteps (a loss is acted on one to two periods
    /// later). 200 timesteps (96 us at the default 25 Gbps) is above the longest queueing
    /// delay of the default protocol (a receiver keeps at most 10 RTTs of 8-16 packets
    /// outstanding, so a packet waits at most about 160 timesteps at its downlink) and short
    /// against a shuffle of thousands of timesteps. The thesis suggests 1 ms for real hosts,
    /// where shuffles last far longer.
    #[serde(default = "default_timeout")]
    pub resend_timeout: u64,
    /// Periods of silence after a probe before a peer is declared dead.
    #[serde(default = "default_dead_after")]
    pub dead_after: u32,
}

fn loss_off() -> Loss {
    Loss::OFF
}

fn default_timeout() -> u64 {
    200
}

fn default_dead_after() -> u32 {
    8
}

impl SimConfig {
    /// Defaults of thesis §6 for `protocol` on `racks` racks.
    pub fn new(racks: usize, protocol: &str, seed: u64) -> Self {
        SimConfig {
            racks,
            protocol: protocol.to_string(),
            seed,
            grant: GrantOptions::default(),
            host_gbps: 25.0,
            packet_bytes: 1500,
            core_fraction: 1.0,
            hop_latency: 2,
            rx_rate: 3,
            priorities: Priorities::Edge,
            placement: Placement::Random,
            local_bytes: LocalBytes::Count,
            barrier_steps: 0,
            util_samples: 200,
            audit: true,
            max_steps: 0,
            preempt: Preemption::OFF,
            allreduce_stale: 0.0,
            allreduce_drain: true,
            bw_variation: Variation::OFF,
            loss: Loss::OFF,
            resend_timeout: default_timeout(),
            dead_after: default_dead_after(),
        }
    }

    /// The protocol's loss recovery: on exactly when the wire is impaired, so loss-free runs
    /// stay the thesis' protocol packet for packet (recovery only adds packets there).
    pub fn recovery(&self) -> Option<Recovery> {
        self.loss.on().then_some(Recovery {
            timeout: self.resend_timeout,
            dead_after: self.dead_after,
        })
    }

    /// Seconds per timestep (0.48 us for 1500 B at 25 Gbps).
    pub fn timestep_s(&self) -> f64 {
        self.packet_bytes as f64 * 8.0 / (self.host_gbps * 1e9)
    }

    /// Checks the settings against a matrix of `nodes` nodes.
    pub fn validate(&self, nodes: usize) -> Result<Protocol, SimError> {
        let p = Protocol::parse(&self.protocol)?;
        let bad = |field: &'static str, why: String| Err(SimError::Config { field, why });
        if nodes < 2 {
            return bad(
                "nodes",
                format!("a shuffle needs at least 2 nodes, got {nodes}"),
            );
        }
        if self.racks == 0 || self.racks > nodes {
            return bad(
                "racks",
                format!(
                    "must be in 1..={nodes} (the node count), got {}",
                    self.racks
                ),
            );
        }
        if !(self.core_fraction > 0.0 && self.core_fraction <= MAX_CORE_FRACTION) {
            return bad(
                "core",
                format!(
                    "must be above 0 and at most {MAX_CORE_FRACTION}, got {}",
                    self.core_fraction
                ),
            );
        }
        if self.hop_latency == 0 {
            return bad("hop-latency", "must be at least 1 timestep".into());
        }
        if self.rx_rate == 0 {
            return bad("rx-rate", "must be at least 1 packet per timestep".into());
        }
        if !(self.host_gbps.is_finite() && self.host_gbps > 0.0 && self.packet_bytes > 0) {
            return bad(
                "host-gbps",
                "link speed and packet size must be positive".into(),
            );
        }
        if self.grant.rtt_packets == 0 || self.grant.overcommit == 0 {
            return bad(
                "rtt-packets",
                "RTTpackets and the overcommitment degree must be at least 1".into(),
            );
        }
        if self.grant.grant_batch == 0 {
            return bad(
                "grant-batch",
                "grants come in units of at least 1 packet".into(),
            );
        }
        let pr = &self.preempt;
        if !(pr.fraction >= 0.0 && pr.fraction < 1.0) {
            return bad(
                "preempt",
                format!(
                    "the preempted fraction must be in [0, 1), got {}",
                    pr.fraction
                ),
            );
        }
        if pr.on() && !(pr.mean_steps.is_finite() && pr.mean_steps >= 1.0) {
            return bad(
                "preempt-interval-rtt",
                format!(
                    "the mean preempted interval must be at least 1 timestep, got {:e}",
                    pr.mean_steps
                ),
            );
        }
        // The oracles number timesteps as u32 over 4 x the mean interval (adversarial pass
        // 34, C2: 1e18 overflowed the horizon).
        if pr.on() && pr.mean_steps > MAX_PREEMPT_STEPS {
            return bad(
                "preempt-interval-rtt",
                format!(
                    "the mean preempted interval must be at most {MAX_PREEMPT_STEPS:e} \
                     timesteps, got {:e}",
                    pr.mean_steps
                ),
            );
        }
        let v = &self.bw_variation;
        if !(v.depth >= 0.0 && v.depth < 1.0) {
            return bad(
                "bw-variation",
                format!("the depth must be in [0, 1), got {}", v.depth),
            );
        }
        if v.on() && !(v.mean_steps.is_finite() && v.mean_steps >= 1.0) {
            return bad(
                "bw-interval-rtt",
                format!(
                    "the mean interval must be at least 1 timestep, got {}",
                    v.mean_steps
                ),
            );
        }
        if !(self.allreduce_stale >= 0.0 && self.allreduce_stale.is_finite()) {
            return bad(
                "global-sched",
                format!(
                    "staleness must be a non-negative number, got {}",
                    self.allreduce_stale
                ),
            );
        }
        let l = &self.loss;
        for (field, p) in [
            ("drop", l.drop),
            ("duplicate", l.duplicate),
            ("reorder", l.reorder),
        ] {
            if !(0.0..1.0).contains(&p) {
                return bad(field, format!("a probability must be in [0, 1), got {p}"));
            }
        }
        if l.reorder_max == 0 {
            return bad(
                "reorder",
                "the largest delay must be at least 1 timestep".into(),
            );
        }
        if !(1..=MAX_RESEND_TIMEOUT).contains(&self.resend_timeout) {
            return bad(
                "resend-timeout",
                format!(
                    "the timer period must be in 1..={MAX_RESEND_TIMEOUT} timesteps, got {}",
                    self.resend_timeout
                ),
            );
        }
        if self.resend_timeout == 0 || self.dead_after == 0 {
            return bad(
                "resend-timeout",
                "the timer period and the dead-peer bound must be at least 1".into(),
            );
        }
        if let Some(e) = self.grant.global_exponent {
            if !(1..=4).contains(&e) {
                return bad(
                    "global-exponent",
                    format!("the scale-back exponent must be in 1..=4, got {e}"),
                );
            }
        }
        Ok(p)
    }
}

/// The longest mean preempted interval, in timesteps: the oracles replay a horizon of 4 x it
/// and number its steps as `u32`.
pub const MAX_PREEMPT_STEPS: f64 = (1u64 << 30) as f64;

#[derive(Debug, Error, PartialEq)]
pub enum SimError {
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    #[error("invalid setting `{field}`: {why}")]
    Config { field: &'static str, why: String },
}
