//! The same matrix in the packet simulator, beside the real run (`shuffle run`'s
//! `sim_completion_s`): one timestep is one full datagram at the ranks' link rate, headers
//! included, and the grant protocols get the real run's RTTpackets. Hosts sit in one rack,
//! with one timestep per hop (a 4-timestep round trip, close to the 3-packet RTT we assume
//! for a loaded host at 200 Mbit/s). Protocols the simulator lacks (high-entropy) get none.

use coflowkit_pktsim::{try_run, SimConfig};
use coflowkit_shuffle::matrix::ByteMatrix;

/// Bytes on the wire per datagram beyond its payload: our header, IP/UDP, Ethernet.
pub const WIRE_OVERHEAD: usize = 60 + 28 + 14;

/// Predicted completion in seconds, or `None` where the simulator has no such protocol.
pub fn predict(
    m: &ByteMatrix,
    protocol: &str,
    payload: usize,
    rate_bps: f64,
    rtt_packets: u32,
    grant_batch: u32,
    seed: u64,
) -> Option<f64> {
    let pm = m.to_packets(payload as u64, false);
    let mut cfg = SimConfig::new(1, protocol, seed);
    cfg.grant.rtt_packets = rtt_packets;
    cfg.grant.grant_batch = grant_batch;
    cfg.hop_latency = 1;
    cfg.packet_bytes = payload as u32;
    let step_s = ((payload + WIRE_OVERHEAD) * 8) as f64 / rate_bps;
    cfg.host_gbps = payload as f64 * 8.0 / step_s / 1e9;
    let report = try_run(&pm, &cfg).ok()?;
    Some(report.completion_steps as f64 * step_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_message_takes_its_packets_plus_the_path_at_the_link_rate() {
        // 2 ranks, 10 full packets one way: 10 timesteps of sending and a few of latency.
        let m = ByteMatrix {
            n: 2,
            bytes: vec![0, 10 * 1000, 0, 0],
        };
        let t = predict(&m, "madd", 1000, 1e6, 2, 1, 1).unwrap();
        let step = (1000.0 + WIRE_OVERHEAD as f64) * 8.0 / 1e6;
        assert!(t >= 10.0 * step && t <= 16.0 * step, "{t} vs step {step}");
        assert_eq!(predict(&m, "high-entropy", 1000, 1e6, 2, 1, 1), None);
    }
}
