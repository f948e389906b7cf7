//! The same matrix in the packet simulator, beside the real run (`shuffle run`'s
//! `sim_completion_s`): one timestep is one full datagram at the ranks' link rate, headers
//! included. Hosts sit in one rack, with one timestep per hop: a round trip of
//! `SIM_ROUND_TRIP` timesteps, close to the 3-packet RTT we assume for a loaded host at
//! 200 Mbit/s. The grant protocols get the real run's RTTpackets, but at least that round trip:
//! RTTpackets is the window that covers a round trip, and the real round trip (well under one
//! datagram's time at these rates) is shorter than the simulated one. With the real run's
//! default of 2, Hadoop-C's windows of 2 covered only half the simulated round trip, and the
//! simulator predicted it twice as slow as the real run on matrices where every receiver has
//! a few senders. Grants batched in units of K need K - 1 packets more. Protocols the simulator lacks (high-entropy) get none.

use coflowkit_pktsim::{try_run, SimConfig};
use coflowkit_shuffle::matrix::ByteMatrix;

/// Bytes on the wire per datagram beyond its payload: our header, IP/UDP, Ethernet.
pub const WIRE_OVERHEAD: usize = 60 + 28 + 14;

/// The simulated round trip in timesteps: four hops of one timestep (host, ToR, host and back).
pub const SIM_ROUND_TRIP: u32 = 4;

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
    // Grants in units of K keep between window - K + 1 and window outstanding, so the window
    // must reach the round trip plus K - 1 to keep a link busy.
    cfg.grant.rtt_packets = rtt_packets.max(SIM_ROUND_TRIP + grant_batch.max(1) - 1);
    cfg.grant.grant_batch = grant_batch;
    cfg.hop_latency = SIM_ROUND_TRIP / 4;
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

    #[test]
    fn a_windowed_receiver_with_one_sender_keeps_its_link_busy() {
        // One 200-packet message under Hadoop-5 with the real run's RTTpackets of 2: the window
        // must cover the simulated round trip, or the prediction doubles.
        let m = ByteMatrix {
            n: 2,
            bytes: vec![0, 200 * 1000, 0, 0],
        };
        let step = (1000.0 + WIRE_OVERHEAD as f64) * 8.0 / 1e6;
        for k in [1, 4, 8] {
            let t = predict(&m, "hadoop-5", 1000, 1e6, 2, k, 1).unwrap();
            assert!(t <= 210.0 * step, "K = {k}: {} timesteps", t / step);
        }
    }
}
