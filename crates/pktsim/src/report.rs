//! What a run measured, in the thesis' units: throughput = total data bytes / (nodes x time
//! to receive the last message), optimality = throughput / the throughput upper bound.

use coflowkit_shuffle::matrix::PacketMatrix;
use serde::{Deserialize, Serialize};

use crate::config::LocalBytes;
use crate::engine::Sim;
use crate::oracle::Oracles;

/// What one run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    pub protocol: String,
    pub nodes: usize,
    pub racks: usize,
    pub skewness: f64,
    /// Time until the last data packet was received, in seconds and timesteps.
    pub completion_s: f64,
    pub completion_steps: u64,
    pub throughput_gbps: f64,
    /// Throughput if the shuffle took exactly the lower bound (no latency).
    pub bound_gbps: f64,
    /// Under preemption: the throughput if the shuffle took exactly the greatest of the three
    /// preemption oracles (and the network bounds); `optimality` is then against it.
    pub oracle_gbps: Option<f64>,
    /// The preemption oracles in timesteps (per sender, per receiver, per message).
    pub oracle_steps: Option<Oracles>,
    /// Measured fraction of node-timesteps spent preempted (until the end of the run).
    pub preempted_fraction: f64,
    pub optimality: f64,
    /// Lower bounds in timesteps: the most loaded host link, the most loaded ToR-core link.
    pub ideal_bound_steps: f64,
    pub core_bound_steps: f64,
    /// Peak data bytes queued in one switch (any ToR or the core), and in one output port.
    pub peak_buffer_bytes: u64,
    pub peak_port_bytes: u64,
    pub peak_tor_bytes: u64,
    pub peak_core_bytes: u64,
    /// The worst ToR's peak (= `peak_tor_bytes`; the name of issue 4's contract).
    pub max_tor_buffer_bytes: u64,
    /// Time-average data bytes queued in one ToR (mean over ToRs) and in the core switch.
    pub avg_tor_buffer_bytes: f64,
    pub avg_core_buffer_bytes: f64,
    /// Peak data bytes queued in one output port, by kind: ToR to host, ToR to core, core to
    /// ToR.
    pub peak_tor_down_port_bytes: u64,
    pub peak_tor_up_port_bytes: u64,
    pub peak_core_port_bytes: u64,
    /// Share of the data-time queued in ToRs that sat in ToR-to-core ports (the rest waited
    /// in ToR-to-host ports); 0 when nothing queued.
    pub tor_uplink_share: f64,
    pub data_packets: u64,
    /// Data packets received (all of them when `complete`).
    pub delivered_packets: u64,
    pub total_data_bytes: u64,
    pub timestep_s: f64,
    /// Packet arrivals at switches and hosts (data and control): the simulator's work.
    pub packet_hops: u64,
    /// Every data packet delivered.
    pub complete: bool,
    /// Protocol invariants broken (audit): sends beyond grants and unscheduled credit,
    /// outstanding grants above the limit, packets received twice or unexpected.
    pub violations: u64,
    /// Aggregate uplink and downlink utilization over time, for the utilization chart.
    pub utilization: Vec<UtilSample>,
    /// Fraction of the non-empty messages received in full by the end of each utilization
    /// sample's interval (thesis Figure 6.3).
    pub messages_done: Vec<f64>,
    /// The impaired wire and loss recovery at work (only when the wire was impaired).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossReport>,
}

/// What the wire did and what loss recovery did about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossReport {
    pub dropped: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Data packets sent again (answers to RESENDs and sender probes).
    pub retransmissions: u64,
    /// Data packets that reached a receiver that already had them.
    pub duplicates_received: u64,
    /// Nodes that declared a peer dead (never right here: nobody dies in the simulator).
    pub dead_peers: u64,
}

/// Fraction of host uplinks and downlinks carrying data at `time_s` (each in [0, 1]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UtilSample {
    pub time_s: f64,
    pub up: f64,
    pub down: f64,
}

impl SimReport {
    pub(crate) fn of(sim: &Sim, m: &PacketMatrix) -> SimReport {
        let cfg = &sim.cfg;
        let n = m.n;
        let ts = cfg.timestep_s();
        let pb = cfg.packet_bytes as u64;
        let complete = sim.finished();
        let steps = if sim.m.data_total == 0 {
            0
        } else {
            sim.m.last_rx + 1
        };
        let counted = match cfg.local_bytes {
            LocalBytes::Count => m.total_packets(),
            LocalBytes::Exclude => sim.m.data_total,
        };
        let bytes = counted * pb;
        let gbps = |t_steps: f64| {
            if t_steps > 0.0 {
                bytes as f64 * 8.0 / (n as f64 * t_steps * ts) / 1e9
            } else {
                0.0
            }
        };
        let lower = sim.bounds.lower().value();
        let throughput = if complete { gbps(steps as f64) } else { 0.0 };
        let bound = gbps(lower);
        let oracles = Oracles::compute(m, &cfg.preempt, cfg.seed, cfg.rx_rate, lower.ceil() as u64);
        let oracle = oracles.map(|o| gbps((o.bound() as f64).max(lower)));
        let target = oracle.unwrap_or(bound);
        let run_steps = sim.now().max(1) as f64;
        let preempted_fraction =
            sim.m.preempted_steps.iter().sum::<u64>() as f64 / (n as f64 * run_steps);
        let racks = sim.topo.racks;
        let avg_tor = sim.m.occupancy_sum[..racks].iter().sum::<u64>() as f64
            / (racks as f64 * run_steps)
            * pb as f64;
        let avg_core = sim.m.occupancy_sum[racks] as f64 / run_steps * pb as f64;
        let errors: u64 = (0..n).map(|i| sim.node(i).inbox().errors).sum();
        let loss = sim.loss_counts().map(|c| {
            let nodes = (0..n).map(|i| sim.node(i));
            LossReport {
                dropped: c.dropped,
                duplicated: c.duplicated,
                reordered: c.reordered,
                retransmissions: nodes.clone().map(|x| x.retransmissions).sum(),
                duplicates_received: nodes.clone().map(|x| x.inbox().duplicates).sum(),
                dead_peers: nodes.filter(|x| x.dead_peer().is_some()).count() as u64,
            }
        });
        let peak_tor = sim.m.peak_switch[..sim.topo.racks]
            .iter()
            .copied()
            .max()
            .unwrap_or(0);
        let peak_core = sim.m.peak_switch[sim.topo.racks];
        SimReport {
            protocol: sim.protocol.name(),
            nodes: n,
            racks: sim.topo.racks,
            skewness: m.skewness(),
            completion_s: steps as f64 * ts,
            completion_steps: steps,
            throughput_gbps: throughput,
            bound_gbps: bound,
            oracle_gbps: oracle,
            oracle_steps: oracles,
            preempted_fraction,
            optimality: if target > 0.0 {
                throughput / target
            } else {
                0.0
            },
            ideal_bound_steps: sim.bounds.ideal.value(),
            core_bound_steps: sim.bounds.core.value(),
            peak_buffer_bytes: peak_tor.max(peak_core) * pb,
            peak_port_bytes: sim.m.peak_port * pb,
            peak_tor_bytes: peak_tor * pb,
            peak_core_bytes: peak_core * pb,
            max_tor_buffer_bytes: peak_tor * pb,
            avg_tor_buffer_bytes: avg_tor,
            avg_core_buffer_bytes: avg_core,
            peak_tor_down_port_bytes: sim.m.peak_port_class[0] * pb,
            peak_tor_up_port_bytes: sim.m.peak_port_class[1] * pb,
            peak_core_port_bytes: sim.m.peak_port_class[2] * pb,
            tor_uplink_share: {
                let [down, up, _] = sim.m.class_sum;
                if down + up > 0 {
                    up as f64 / (down + up) as f64
                } else {
                    0.0
                }
            },
            data_packets: sim.m.data_total,
            delivered_packets: sim.m.data_done,
            total_data_bytes: bytes,
            timestep_s: ts,
            packet_hops: sim.m.hops,
            complete,
            violations: sim.m.violations + errors,
            utilization: utilization(
                &sim.m.up_series,
                &sim.m.down_series,
                n,
                ts,
                cfg.util_samples,
            ),
            messages_done: cumulative(&sim.m.done_series, sim.m.messages, cfg.util_samples),
            loss,
        }
    }
}

/// Running fraction of `total` at the end of each of `samples` equal bins.
fn cumulative(per_step: &[u32], total: u64, samples: usize) -> Vec<f64> {
    if per_step.is_empty() || samples == 0 || total == 0 {
        return Vec::new();
    }
    let width = per_step.len().div_ceil(samples);
    let mut sum = 0u64;
    per_step
        .chunks(width)
        .map(|c| {
            sum += c.iter().map(|&x| x as u64).sum::<u64>();
            sum as f64 / total as f64
        })
        .collect()
}

/// Averages the per-timestep counts over `samples` equal bins.
fn utilization(up: &[u32], down: &[u32], n: usize, ts: f64, samples: usize) -> Vec<UtilSample> {
    if up.is_empty() || samples == 0 {
        return Vec::new();
    }
    let width = up.len().div_ceil(samples);
    up.chunks(width)
        .zip(down.chunks(width))
        .enumerate()
        .map(|(b, (u, d))| {
            let per = (n * u.len()) as f64;
            UtilSample {
                time_s: (b * width) as f64 * ts,
                up: u.iter().map(|&x| x as f64).sum::<f64>() / per,
                down: d.iter().map(|&x| x as f64).sum::<f64>() / per,
            }
        })
        .collect()
}
