//! Simulation options shared by `shuffle sim` and `shuffle sweep`: flattened into both
//! commands so they accept the same flags. Every protocol and simulator switch is a flag; the
//! defaults are the thesis' full GRPF in an ideal network (docs/flash-shuffle.md).

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use crate::flag_range::{f64_in, f64_positive, gbps, zero_or_in};
use coflowkit_pktsim::{LocalBytes, Loss, Placement, Preemption, Priorities, SimConfig, Variation};
use coflowkit_shuffle::proto::{
    GrantOptions, GrantStart, Policy, Protocol, Rounding, RxBasis, Unscheduled, Window,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrioArg {
    /// One FIFO per port: grants queue behind data.
    None,
    /// ToR ports facing hosts (Prio@Edge).
    Edge,
    /// Every switch port (Prio@Core).
    #[value(alias = "core")]
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WindowArg {
    /// max_out_grants x msg_rem / rx_rem (Eq. 3.8).
    ProRata,
    /// --window-packets grants per message (ConstGrWndLim).
    Const,
    /// No per-message limit.
    Unlimited,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RoundingArg {
    /// max(1, floor(...)) as in the text of §3.4.
    Floor,
    /// ceil(...) as in Listing 2.
    Ceil,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UnschedArg {
    None,
    /// One RTT per sender, split over its messages pro rata (ProRataUnschedPkts).
    ProRata,
    /// The first --unsched-packets of every message (ConstUnschedPkts, Homa's RTTbytes).
    PerMessage,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BasisArg {
    /// Receiver priority from packets received (Listing 3).
    Received,
    /// Receiver priority from packets granted.
    Granted,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StartArg {
    /// Grant as soon as a message's first packet arrives (full protocol).
    FirstPacket,
    /// Grant only after hearing from every sender (basic protocol, §3.1.5).
    AllSenders,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AnnounceArg {
    All,
    Unscheduled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StaleArg {
    Drain,
    Raw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PlacementArg {
    Random,
    Block,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LocalArg {
    /// Diagonal (local) data counts in total bytes: the ideal optimum is the line rate.
    Count,
    /// Only bytes that cross the network count.
    Exclude,
}

/// Largest packet size a flag accepts (bytes): 1 MiB, far above jumbo frames.
pub const MAX_PACKET_BYTES: i64 = 1 << 20;

#[derive(Args, Debug, Clone)]
pub struct SimOpts {
    /// Racks of hosts around one logical core switch (hosts per rack = nodes / racks).
    #[arg(long, default_value_t = 1, help_heading = "Network")]
    pub racks: usize,
    /// ToR-core bandwidth as a fraction of a rack's host bandwidth (0.5 = 2:1 oversubscribed;
    /// above 0, at most 1000).
    #[arg(long, default_value_t = 1.0, value_parser = f64_positive(1000.0), help_heading = "Network")]
    pub core: f64,
    /// Host link speed in Gbps (0.001 to 10000).
    #[arg(long, default_value_t = 25.0, value_parser = gbps(), help_heading = "Network")]
    pub host_gbps: f64,
    /// Full data packet size in bytes (one timestep = one packet at the host rate; 1 to
    /// 1048576).
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u32).range(1..=MAX_PACKET_BYTES), help_heading = "Network")]
    pub packet_bytes: u32,
    /// Timesteps per hop (2: RTT 8 inside a rack, 16 across).
    #[arg(long, default_value_t = 2, help_heading = "Network")]
    pub hop_latency: u32,
    /// Data packets a host processes per timestep.
    #[arg(long, default_value_t = 3, help_heading = "Network")]
    pub rx_rate: u32,
    /// Switch ports that send control packets ahead of data [default: edge; none with --baseline].
    #[arg(long, visible_alias = "priority", value_enum, help_heading = "Network")]
    pub priorities: Option<PrioArg>,
    /// Application preemption: the fraction of time each node is preempted (0: off, else
    /// 0.000001 to 0.99).
    #[arg(long, default_value_t = 0.0, value_parser = zero_or_in(PREEMPT.0, PREEMPT.1), help_heading = "Interference")]
    pub preempt: f64,
    /// Mean preempted interval in intra-rack RTTs (4 hops, 8 timesteps by default); lengths
    /// are N(mu, mu/4) (0.01 to 10000).
    #[arg(long, default_value_t = 20.0, value_parser = f64_in(PREEMPT_INTERVAL_RTT.0, PREEMPT_INTERVAL_RTT.1), help_heading = "Interference")]
    pub preempt_interval_rtt: f64,
    /// Link bandwidth variation: each switch port's capacity is redrawn uniformly between
    /// (1 - this) and 1 times nominal (0: off).
    #[arg(long, default_value_t = 0.0, help_heading = "Interference")]
    pub bw_variation: f64,
    /// Mean time a port capacity holds, in intra-rack RTTs (lengths N(mu, mu/4)).
    #[arg(long, default_value_t = 20.0, help_heading = "Interference")]
    pub bw_interval_rtt: f64,
    /// Probability that a packet leaving a host is lost on the wire (seeded). Any of --drop,
    /// --duplicate, --reorder turns the protocol's loss recovery on.
    #[arg(long, default_value_t = 0.0, help_heading = "Loss")]
    pub drop: f64,
    /// Probability that a packet leaving a host arrives twice.
    #[arg(long, default_value_t = 0.0, help_heading = "Loss")]
    pub duplicate: f64,
    /// Probability that a packet leaving a host is held back 1..=--reorder-max timesteps, so
    /// later packets overtake it.
    #[arg(long, default_value_t = 0.0, help_heading = "Loss")]
    pub reorder: f64,
    /// Largest delay of a reordered packet, in timesteps.
    #[arg(long, default_value_t = 8, help_heading = "Loss")]
    pub reorder_max: u32,
    /// Loss recovery's timer period in timesteps: a message silent for a whole period gets a
    /// RESEND (or its sender probes) at the period's end (1 to 10^9).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000), help_heading = "Loss")]
    pub resend_timeout: u64,
    /// How nodes are placed in racks.
    #[arg(long, value_enum, default_value = "random", help_heading = "Network")]
    pub placement: PlacementArg,
    /// Whether local (diagonal) data counts in the throughput's total bytes.
    #[arg(long, value_enum, default_value = "count", help_heading = "Network")]
    pub local_bytes: LocalArg,

    /// Start from the ablation's baseline protocol (§6.1.2): 1 RTT outstanding, constant
    /// windows, no randomization, no unscheduled data, no network priorities.
    #[arg(long, help_heading = "Protocol")]
    pub baseline: bool,
    /// Connections per receiver for `--protocol hadoop`.
    #[arg(long, default_value_t = 5, help_heading = "Protocol")]
    pub connections: u32,
    /// RTTpackets: grants that keep one link busy [default: the longest RTT in timesteps: 8 in
    /// one rack, 16 across racks, with the default hop latency].
    #[arg(long, help_heading = "Protocol")]
    pub rtt_packets: Option<u32>,
    /// Degree of overcommitment (max outstanding grants = this x RTTpackets) [default: 10; 1 with --baseline].
    #[arg(long, help_heading = "Protocol")]
    pub overcommit: Option<u32>,
    /// Per-message grant window [default: pro-rata; const with --baseline].
    #[arg(long, value_enum, help_heading = "Protocol")]
    pub window: Option<WindowArg>,
    /// Grants per message for `--window const` [default: RTTpackets].
    #[arg(long, help_heading = "Protocol")]
    pub window_packets: Option<u32>,
    /// Rounding of the pro rata window [default: floor].
    #[arg(long, value_enum, help_heading = "Protocol")]
    pub window_rounding: Option<RoundingArg>,
    /// Randomized packet priorities with shared seeds: on or off [default: on; off with --baseline].
    #[arg(long, help_heading = "Protocol")]
    pub randomize: Option<bool>,
    /// Unscheduled data [default: pro-rata; none with --baseline].
    #[arg(long, value_enum, help_heading = "Protocol")]
    pub unscheduled: Option<UnschedArg>,
    /// Unscheduled packets per sender (pro-rata) or per message [default: RTTpackets].
    #[arg(long, help_heading = "Protocol")]
    pub unsched_packets: Option<u32>,
    /// What the receiver's priority is computed from [default: received].
    #[arg(long, value_enum, help_heading = "Protocol")]
    pub rx_priority: Option<BasisArg>,
    /// When a GRPF receiver starts granting [default: all-senders].
    #[arg(long, value_enum, help_heading = "Protocol")]
    pub grant_start: Option<StartArg>,
    /// Which messages a GRPF sender announces at time 0: all (so receivers know their total
    /// after one one-way delay) or only those without unscheduled packets (the thesis' text:
    /// the others announce themselves with their first unscheduled packet) [default: all].
    #[arg(long, value_enum, help_heading = "Protocol")]
    pub announce: Option<AnnounceArg>,
    /// Bandwidth redirection limit in RTTpackets (a sender sends a granted packet only if it
    /// is at most this many RTTpackets past the first unsent packet of its GRPF schedule)
    /// [default: unlimited].
    #[arg(long, help_heading = "Protocol")]
    pub redirect_limit_rtt: Option<u32>,
    /// Pro rata overcommitment (Eq. 3.11): scale each receiver's max outstanding grants by
    /// its incoming data over the busiest receiver's.
    #[arg(long, help_heading = "Protocol")]
    pub pro_rata_overcommit: bool,
    /// Grant batching: receivers (GRPF family, Hadoop-C) grant in units of K packets, one
    /// GRANT per unit, only when a whole unit fits under their limit (1: a grant per packet,
    /// the thesis' protocol).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Protocol")]
    pub grant_batch: u32,
    /// GlobalSched (Eq. 3.14): off, fresh (instantaneous all-reduce) or stale:X (the
    /// all-reduce takes X x ceil(log2 N) x 0.5 RTT).
    #[arg(long, default_value = "off", value_parser = parse_global, help_heading = "Protocol")]
    pub global_sched: GlobalArg,
    /// How a receiver uses a stale all-reduce value: drain (lower it by one packet per
    /// timestep of its age: no backlog drains faster than a link) or raw (as is).
    #[arg(long, value_enum, default_value = "drain", help_heading = "Protocol")]
    pub stale_value: StaleArg,
    /// GlobalSched's scale-back exponent n (the thesis evaluated 2).
    #[arg(long, default_value_t = 2, help_heading = "Protocol")]
    pub global_exponent: u32,
    /// Lockstep: timesteps a barrier costs beyond noticing the step is done.
    #[arg(long, default_value_t = 0, help_heading = "Protocol")]
    pub barrier_steps: u32,

    /// Points in the utilization series.
    #[arg(long, default_value_t = 200, help_heading = "Output")]
    pub util_samples: usize,
    /// Skip the per-packet invariant checks (a little faster).
    #[arg(long, help_heading = "Output")]
    pub no_audit: bool,
    /// Give up after this many timesteps [default: 50 x the bound + 100000, plus 40 x
    /// --resend-timeout with an impaired wire].
    #[arg(long, help_heading = "Output")]
    pub max_steps: Option<u64>,
}

/// `--preempt` when on: below a millionth a node's running interval (mean x (1 - p) / p) passes
/// any run (1e-320 made it about 2^64 steps, which overflowed, adversarial pass 34, C1); above
/// 0.99 the oracles' horizon no longer grows with it (it divides by 1 - p, at least 0.01).
pub const PREEMPT: (f64, f64) = (1e-6, 0.99);

/// `--preempt-interval-rtt`: 10,000 RTTs is 80,000 timesteps at the default hop latency, the
/// length of a long run; the oracles replay every node over a horizon of 4 x the mean, so 1e18
/// overflowed it and 1e9 asked for 32 GB (adversarial pass 34, C2, C3). What remains is
/// checked against the memory this process may use before the run.
pub const PREEMPT_INTERVAL_RTT: (f64, f64) = (0.01, 10_000.0);

/// `--global-sched`: off, or the staleness X (0 = fresh).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GlobalArg {
    Off,
    Stale(f64),
}

fn parse_global(s: &str) -> Result<GlobalArg, String> {
    match s.to_ascii_lowercase().as_str() {
        "off" | "none" => Ok(GlobalArg::Off),
        "fresh" => Ok(GlobalArg::Stale(0.0)),
        other => match other.strip_prefix("stale:").map(str::parse::<f64>) {
            Some(Ok(x)) if x >= 0.0 && x.is_finite() => Ok(GlobalArg::Stale(x)),
            _ => Err(format!(
                "`{s}`: expected off, fresh or stale:X with X a non-negative number (stale:1)"
            )),
        },
    }
}

impl SimOpts {
    /// The protocol name `protocol` stands for: `hadoop` takes `--connections`.
    pub fn protocol_name(&self, protocol: &str) -> String {
        if protocol.eq_ignore_ascii_case("hadoop") {
            format!("hadoop-{}", self.connections)
        } else {
            protocol.to_string()
        }
    }

    /// The simulator configuration for one run of `protocol` (a name such as `grpf`,
    /// `hadoop-5`, `madd`) with `seed`.
    pub fn to_config(&self, protocol: &str, seed: u64) -> Result<SimConfig> {
        let name = self.protocol_name(protocol);
        let rtt = self
            .rtt_packets
            .unwrap_or_else(|| longest_rtt(self.racks, self.hop_latency));
        let parsed = Protocol::parse(&name)?;
        let policy = match parsed {
            Protocol::Grant(p) => p,
            _ => Policy::Grpf,
        };
        let mut g = if self.baseline {
            GrantOptions::baseline(policy)
        } else {
            GrantOptions {
                policy,
                ..GrantOptions::default()
            }
        };
        g.rtt_packets = rtt;
        if self.baseline {
            g.window = Window::Const(rtt);
        }
        if let Some(o) = self.overcommit {
            g.overcommit = o;
        }
        if let Some(w) = self.window {
            g.window = match w {
                WindowArg::ProRata => Window::ProRata,
                WindowArg::Const => Window::Const(self.window_packets.unwrap_or(rtt)),
                WindowArg::Unlimited => Window::Unlimited,
            };
        } else if self.window_packets.is_some() {
            bail!("--window-packets needs --window const");
        }
        if let Some(r) = self.window_rounding {
            g.rounding = match r {
                RoundingArg::Floor => Rounding::FloorMax1,
                RoundingArg::Ceil => Rounding::Ceil,
            };
        }
        if let Some(r) = self.randomize {
            g.randomize = r;
        }
        if let Some(u) = self.unscheduled {
            g.unscheduled = match u {
                UnschedArg::None => Unscheduled::None,
                UnschedArg::ProRata => Unscheduled::ProRata,
                UnschedArg::PerMessage => Unscheduled::PerMessage,
            };
        }
        g.unsched_budget = self.unsched_packets.unwrap_or(rtt);
        if let Some(b) = self.rx_priority {
            g.rx_basis = match b {
                BasisArg::Received => RxBasis::Received,
                BasisArg::Granted => RxBasis::Granted,
            };
        }
        if let Some(st) = self.grant_start {
            g.start = match st {
                StartArg::FirstPacket => GrantStart::FirstPacket,
                StartArg::AllSenders => GrantStart::AllSenders,
            };
        }
        if let Some(a) = self.announce {
            g.announce_all = a == AnnounceArg::All;
        }
        g.pro_rata_overcommit = self.pro_rata_overcommit;
        g.grant_batch = self.grant_batch;
        g.redirect_limit = self.redirect_limit_rtt.map(|x| x.saturating_mul(rtt));
        let mut stale = 0.0;
        if let GlobalArg::Stale(x) = self.global_sched {
            g.global_exponent = Some(self.global_exponent);
            stale = x;
        }
        // GlobalSched is Prio@Core plus Eq. 3.14 (thesis §6.3.1).
        let default_prio = if self.baseline {
            PrioArg::None
        } else if self.global_sched != GlobalArg::Off {
            PrioArg::All
        } else {
            PrioArg::Edge
        };
        let mut c = SimConfig::new(self.racks, &name, seed);
        c.grant = g;
        c.core_fraction = self.core;
        c.host_gbps = self.host_gbps;
        c.packet_bytes = self.packet_bytes;
        c.hop_latency = self.hop_latency;
        c.rx_rate = self.rx_rate;
        c.priorities = match self.priorities.unwrap_or(default_prio) {
            PrioArg::None => Priorities::None,
            PrioArg::Edge => Priorities::Edge,
            PrioArg::All => Priorities::All,
        };
        c.placement = match self.placement {
            PlacementArg::Random => Placement::Random,
            PlacementArg::Block => Placement::Block,
        };
        c.local_bytes = match self.local_bytes {
            LocalArg::Count => LocalBytes::Count,
            LocalArg::Exclude => LocalBytes::Exclude,
        };
        c.barrier_steps = self.barrier_steps;
        c.util_samples = self.util_samples;
        c.audit = !self.no_audit;
        c.max_steps = self.max_steps.unwrap_or(0);
        c.preempt = Preemption {
            fraction: self.preempt,
            mean_steps: self.preempt_interval_rtt * 4.0 * self.hop_latency as f64,
        };
        c.allreduce_stale = stale;
        c.bw_variation = Variation {
            depth: self.bw_variation,
            mean_steps: self.bw_interval_rtt * 4.0 * self.hop_latency as f64,
        };
        c.allreduce_drain = self.stale_value == StaleArg::Drain;
        c.loss = Loss {
            drop: self.drop,
            duplicate: self.duplicate,
            reorder: self.reorder,
            reorder_max: self.reorder_max,
        };
        c.resend_timeout = self.resend_timeout;
        Ok(c)
    }
}

/// Round-trip time in timesteps of the longest path: 4 hops each way across racks, 2 inside one.
fn longest_rtt(racks: usize, hop_latency: u32) -> u32 {
    let hops = if racks > 1 { 4 } else { 2 };
    2 * hops * hop_latency
}
