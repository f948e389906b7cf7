//! The three preemption oracles of thesis §6.2.1 (spec §1.4): lower bounds on completion time
//! computed from every node's preemption schedule, ignoring network latency. A packet is
//! received when its receiver processes it, which needs the receiver running (`rx_rate` data
//! packets per running timestep); a packet is sent only while its sender runs (one per step).
//!
//! 1. per sender: the step by which the sender has run long enough to send all its packets;
//! 2. per receiver ("assuming no other receiver exists"): every sender with data for it sends
//!    it one packet in each of its running steps until its message is out; the switch buffers
//!    them and the receiver's link lands at most one per step, in any step (the NIC queues
//!    while the receiver is preempted); the receiver processes what has landed in its running
//!    steps;
//! 3. per message: the step by which the message can be through, its sender sending in every
//!    running step and its receiver processing in every running step.
//!
//! Each is a lower bound for every protocol the simulator runs; the greatest is the oracle.
//! Bounds 2 and 3 tie arrivals to senders' sends, not to senders running: a packet sent
//! before a sender was preempted can still land (and be processed) while it is preempted.

use coflowkit_shuffle::matrix::PacketMatrix;
use serde::{Deserialize, Serialize};

use crate::preempt::{Preemption, Replay};

/// The oracles in timesteps (counted like `completion_steps`: the last step, plus one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Oracles {
    pub sender: u64,
    pub receiver: u64,
    pub message: u64,
}

impl Oracles {
    pub fn bound(&self) -> u64 {
        self.sender.max(self.receiver).max(self.message)
    }

    /// The oracles of `m` under `p` (seeded like the simulation), or None if preemption is off.
    pub fn compute(
        m: &PacketMatrix,
        p: &Preemption,
        seed: u64,
        rx_rate: u32,
        hint: u64,
    ) -> Option<Oracles> {
        if !p.on() {
            return None;
        }
        let mut horizon = Self::first_horizon(p, hint);
        loop {
            let replay = Replay::new(p, seed, m.n, horizon);
            if let Some(o) = Self::within(m, &replay, rx_rate) {
                return Some(o);
            }
            horizon = horizon.saturating_mul(2);
        }
    }

    /// The horizon of the first replay for a run whose lower bound is `hint` timesteps
    /// (saturating: a mean interval of 1e18 steps overflowed here, adversarial pass 34, C2).
    pub fn first_horizon(p: &Preemption, hint: u64) -> u64 {
        ((hint as f64 / (1.0 - p.fraction).max(0.01)) as u64)
            .saturating_mul(2)
            .saturating_add((p.mean_steps as u64).saturating_mul(4))
            .saturating_add(64)
    }

    /// Bytes the first replay of [`Oracles::compute`] holds for `n` nodes (every node's state
    /// per step, its running steps as `u32`, a bit set, and one count per step), or `u64::MAX`
    /// past the `u32` steps it can number; 0 when preemption is off. For a caller to refuse a
    /// run whose oracles would not fit, before simulating (adversarial pass 34, C3: 320 GB).
    pub fn replay_bytes(n: usize, p: &Preemption, hint: u64) -> u64 {
        if !p.on() {
            return 0;
        }
        let horizon = Self::first_horizon(p, hint);
        if horizon > u32::MAX as u64 {
            return u64::MAX;
        }
        let per_step = (n as u128) * 41 / 8 + 4;
        u64::try_from(horizon as u128 * per_step).unwrap_or(u64::MAX)
    }

    /// The oracles if they all fall within the replay's horizon.
    pub fn within(m: &PacketMatrix, r: &Replay, rx_rate: u32) -> Option<Oracles> {
        let n = m.n;
        let words = (r.horizon as usize).div_ceil(64);
        let mut bits = vec![vec![0u64; words]; n];
        let mut runs: Vec<Vec<u32>> = vec![Vec::new(); n];
        for i in 0..n {
            for (t, &run) in r.running[i].iter().enumerate() {
                if run {
                    bits[i][t / 64] |= 1 << (t % 64);
                    runs[i].push(t as u32);
                }
            }
        }
        let mut o = Oracles::default();
        for (s, run) in runs.iter().enumerate() {
            let out = m.out_network(s) as usize;
            if out > 0 {
                o.sender = o.sender.max(*run.get(out - 1)? as u64 + 1);
            }
        }
        let mut sends = vec![0u32; r.horizon as usize];
        for (d, process) in bits.iter().enumerate() {
            let inn = m.in_network(d);
            if inn == 0 {
                continue;
            }
            sends.iter_mut().for_each(|x| *x = 0);
            for s in (0..n).filter(|&s| s != d && m.get(s, d) > 0) {
                for &t in runs[s].get(..m.get(s, d) as usize)? {
                    sends[t as usize] += 1;
                }
            }
            o.receiver = o.receiver.max(receiver(&sends, process, inn, rx_rate)?);
        }
        // Per message: an upper estimate (every packet processed after the last one arrives)
        // for all, then the exact value in decreasing order of the estimate until no estimate
        // can beat the best exact value.
        let mut cand: Vec<(u64, usize, usize)> = Vec::new();
        for d in 0..n {
            for s in (0..n).filter(|&s| s != d && m.get(s, d) > 0) {
                let size = m.get(s, d);
                let last = *runs[s].get(size as usize - 1)?;
                let from = runs[d].partition_point(|&t| t < last);
                let k = size.div_ceil(rx_rate as u64) as usize;
                let upper = runs[d]
                    .get(from + k - 1)
                    .map_or(u64::MAX, |&u| u as u64 + 1);
                cand.push((upper, s, d));
            }
        }
        cand.sort_unstable_by(|a, b| b.cmp(a));
        for (upper, s, d) in cand {
            if upper <= o.message {
                break;
            }
            let t = through(&bits[s], &bits[d], r.horizon, m.get(s, d), rx_rate)?;
            o.message = o.message.max(t);
        }
        Some(o)
    }
}

/// Steps until a receiver has processed `amount` packets (oracle 2): `sends[t]` packets are
/// sent to it in step t, its link lands at most one sent packet per step (latency ignored: in
/// the step it is sent at the earliest), and it processes up to `rx_rate` landed packets in
/// each step whose bit is set in `process`. None if not within the horizon.
///
/// Landing is not tied to a sender running in the same step: in the engine, packets sent
/// before every sender was preempted wait in the ToR and keep landing one per step. (The
/// first version let a packet arrive only in a step where some sender ran; with two senders
/// sending in steps 0-4 and then both preempted, the engine's receiver went on processing
/// their buffered packets in steps 5-14 while the oracle's waited for a sender to run again,
/// and a push-rr run finished in 57 steps under an "oracle" of 58.)
fn receiver(sends: &[u32], process: &[u64], amount: u64, rx_rate: u32) -> Option<u64> {
    let (mut sent, mut landed, mut done) = (0u64, 0u64, 0u64);
    for (t, &k) in sends.iter().enumerate() {
        sent += k as u64;
        landed = (landed + 1).min(sent);
        if process[t / 64] & (1u64 << (t % 64)) != 0 {
            done = (done + rx_rate as u64).min(landed);
            if done == amount {
                return Some(t as u64 + 1);
            }
        }
    }
    None
}

/// Steps until `amount` packets are processed: one arrives in each step whose bit is set in
/// `arrive`, and the receiver processes up to `rx_rate` of those arrived in each step whose
/// bit is set in `process`. None if not within `horizon` steps.
fn through(
    arrive: &[u64],
    process: &[u64],
    horizon: u64,
    amount: u64,
    rx_rate: u32,
) -> Option<u64> {
    if amount == 0 {
        return Some(0);
    }
    let (mut arrived, mut done) = (0u64, 0u64);
    for t in 0..horizon as usize {
        let bit = 1u64 << (t % 64);
        if arrive[t / 64] & bit != 0 && arrived < amount {
            arrived += 1;
        }
        if process[t / 64] & bit != 0 {
            done = (done + rx_rate as u64).min(arrived);
            if done == amount {
                return Some(t as u64 + 1);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The oracles step by step, without bitsets or pruning.
    fn naive(m: &PacketMatrix, r: &Replay, rx: u32) -> Option<Oracles> {
        let walk = |arrive: &dyn Fn(usize) -> bool, proc: &[bool], amount: u64| -> Option<u64> {
            if amount == 0 {
                return Some(0);
            }
            let (mut a, mut done) = (0, 0);
            for (t, &running) in proc.iter().enumerate() {
                if arrive(t) && a < amount {
                    a += 1;
                }
                if running {
                    done = (done + rx as u64).min(a);
                    if done == amount {
                        return Some(t as u64 + 1);
                    }
                }
            }
            None
        };
        let mut o = Oracles::default();
        let always = vec![true; r.horizon as usize];
        for i in 0..m.n {
            let run = &r.running[i];
            o.sender = o.sender.max(walk(&|t| run[t], &always, m.out_network(i))?);
            let senders: Vec<usize> = (0..m.n).filter(|&s| s != i && m.get(s, i) > 0).collect();
            o.receiver = o.receiver.max(receiver_naive(m, r, rx, i, &senders)?);
            for &s in &senders {
                let rs = &r.running[s];
                o.message = o.message.max(walk(&|t| rs[t], &r.running[i], m.get(s, i))?);
            }
        }
        Some(o)
    }

    /// Oracle 2 for receiver `d`, step by step: every sender with data left for `d` sends one
    /// packet in each step it runs; at most one sent packet lands per step; `d` processes up
    /// to `rx` landed packets in each step it runs.
    fn receiver_naive(
        m: &PacketMatrix,
        r: &Replay,
        rx: u32,
        d: usize,
        senders: &[usize],
    ) -> Option<u64> {
        let amount = m.in_network(d);
        if amount == 0 {
            return Some(0);
        }
        let mut sent = vec![0u64; m.n];
        let (mut landed, mut done) = (0u64, 0u64);
        for t in 0..r.horizon as usize {
            for &s in senders {
                if r.running[s][t] && sent[s] < m.get(s, d) {
                    sent[s] += 1;
                }
            }
            if landed < sent.iter().sum::<u64>() {
                landed += 1;
            }
            if r.running[d][t] {
                done = (done + rx as u64).min(landed);
                if done == amount {
                    return Some(t as u64 + 1);
                }
            }
        }
        None
    }

    proptest! {
        #[test]
        fn pruned_oracles_equal_the_step_by_step_ones(
            n in 2usize..6, seed in any::<u64>(), rx in 1u32..4, frac in 1u8..4, mean in 1u32..30,
            sizes in proptest::collection::vec(0u64..30, 36),
        ) {
            let m = PacketMatrix { n, packets: (0..n * n).map(|k| if k / n == k % n { 0 } else { sizes[k] }).collect() };
            let p = Preemption { fraction: 0.25 * frac as f64, mean_steps: mean as f64 };
            let r = Replay::new(&p, seed, n, 2000);
            prop_assert_eq!(Oracles::within(&m, &r, rx), naive(&m, &r, rx));
        }
    }

    fn rep(running: Vec<Vec<bool>>) -> Replay {
        Replay {
            horizon: running[0].len() as u64,
            running,
        }
    }

    #[test]
    fn each_oracle_binds_where_it_should() {
        // Node 0 sends 3 to node 1. Node 0 runs in steps 0-1 and 4-5; node 1 only from step 6.
        let m = PacketMatrix {
            n: 2,
            packets: vec![0, 3, 0, 0],
        };
        let t = true;
        let f = false;
        let r = rep(vec![
            vec![t, t, f, f, t, t, t, t, t, t],
            vec![f, f, f, f, f, f, t, t, t, t],
        ]);
        let o = Oracles::within(&m, &r, 3).unwrap();
        assert_eq!(o.sender, 5); // third running step of node 0 is step 4
        assert_eq!(o.message, 7); // everything waits for node 1 to run at step 6
        assert_eq!(o.receiver, 7);
        // A slow receiver: 1 packet per running step.
        let o = Oracles::within(&m, &r, 1).unwrap();
        assert_eq!(o.message, 9);
        assert_eq!(o.bound(), 9);
        // Beyond the horizon: None.
        let m = PacketMatrix {
            n: 2,
            packets: vec![0, 30, 0, 0],
        };
        assert_eq!(Oracles::within(&m, &r, 3), None);
    }

    #[test]
    fn receiver_oracle_lands_buffered_packets_while_senders_are_preempted() {
        // Nodes 0 and 1 each send 2 to node 2 and run only in steps 0-1 and 6-7: the 4 packets
        // are all sent by step 1, the link lands one per step (steps 0-3) and the receiver,
        // always running, has processed them by step 3, though no sender runs in steps 2-3.
        let t = true;
        let f = false;
        let m = PacketMatrix {
            n: 3,
            packets: vec![0, 0, 2, 0, 0, 2, 0, 0, 0],
        };
        let senders = vec![t, t, f, f, f, f, t, t];
        let r = rep(vec![senders.clone(), senders, vec![t; 8]]);
        let o = Oracles::within(&m, &r, 3).unwrap();
        assert_eq!(o.sender, 2);
        assert_eq!(o.message, 2);
        assert_eq!(o.receiver, 4);
        // Senders always running, the receiver preempted in steps 1-5 instead: it processes
        // 1 packet in step 0, its NIC queues the 3 landing in steps 1-3, and 3 packets per
        // running step clear them in step 6.
        let r = rep(vec![vec![t; 8], vec![t; 8], vec![t, f, f, f, f, f, t, t]]);
        let o = Oracles::within(&m, &r, 3).unwrap();
        assert_eq!(o.receiver, 7);
        // With 1 packet per running step it takes steps 6, 7 and 8.
        let r = rep(vec![
            vec![t; 10],
            vec![t; 10],
            vec![t, f, f, f, f, f, t, t, t, t],
        ]);
        assert_eq!(Oracles::within(&m, &r, 1).unwrap().receiver, 9);
    }

    #[test]
    fn receiver_oracle_counts_only_packets_a_sender_still_has() {
        // Node 0 sends 1 and runs throughout; node 1 sends 3 and runs only from step 5: after
        // node 0's packet nothing can land until step 5 (the old "some sender with data runs"
        // rule would have let node 0's running steps land node 1's packets).
        let t = true;
        let f = false;
        let m = PacketMatrix {
            n: 3,
            packets: vec![0, 0, 1, 0, 0, 3, 0, 0, 0],
        };
        let r = rep(vec![
            vec![t; 10],
            vec![f, f, f, f, f, t, t, t, t, t],
            vec![t; 10],
        ]);
        let o = Oracles::within(&m, &r, 3).unwrap();
        assert_eq!(o.receiver, 8); // steps 0, 5, 6, 7
        assert_eq!(o.message, 8);
    }
}
