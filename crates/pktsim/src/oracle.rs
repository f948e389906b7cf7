//! The three preemption oracles of thesis §6.2.1 (spec §1.4): lower bounds on completion time
//! computed from every node's preemption schedule, ignoring network latency. A packet is
//! received when its receiver processes it, which needs the receiver running (`rx_rate` data
//! packets per running timestep); a packet is sent only while its sender runs (one per step).
//!
//! 1. per sender: the step by which the sender has run long enough to send all its packets;
//! 2. per receiver: the step by which it can have processed all its packets, if any of its
//!    senders that is running can deliver one packet per step (a relaxation of "no other
//!    receiver exists": it ignores how the packets split over senders, so it stays a lower
//!    bound; the per-message oracle covers a single sender's share);
//! 3. per message: the step by which the message can be through, its sender sending in every
//!    running step and its receiver processing in every running step.
//!
//! Each is a lower bound for every protocol the simulator runs; the greatest is the oracle.

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
        let mut horizon = ((hint as f64 / (1.0 - p.fraction).max(0.01)) as u64) * 2
            + 4 * p.mean_steps as u64
            + 64;
        loop {
            let replay = Replay::new(p, seed, m.n, horizon);
            if let Some(o) = Self::within(m, &replay, rx_rate) {
                return Some(o);
            }
            horizon *= 2;
        }
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
        let mut any = vec![0u64; words];
        for d in 0..n {
            let inn = m.in_network(d);
            if inn == 0 {
                continue;
            }
            any.iter_mut().for_each(|x| *x = 0);
            for s in (0..n).filter(|&s| s != d && m.get(s, d) > 0) {
                for (a, &b) in any.iter_mut().zip(&bits[s]) {
                    *a |= b;
                }
            }
            o.receiver = o
                .receiver
                .max(through(&any, &bits[d], r.horizon, inn, rx_rate)?);
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
            let any = |t: usize| senders.iter().any(|&s| r.running[s][t]);
            o.receiver = o.receiver.max(walk(&any, &r.running[i], m.in_network(i))?);
            for &s in &senders {
                let rs = &r.running[s];
                o.message = o.message.max(walk(&|t| rs[t], &r.running[i], m.get(s, i))?);
            }
        }
        Some(o)
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
    fn receiver_oracle_needs_some_sender_running() {
        // Nodes 0 and 1 each send 2 to node 2; 0 runs in steps 0-1, 1 in steps 0-1 too:
        // only 2 arrival steps before both stop until step 6.
        let t = true;
        let f = false;
        let m = PacketMatrix {
            n: 3,
            packets: vec![0, 0, 2, 0, 0, 2, 0, 0, 0],
        };
        let r = rep(vec![
            vec![t, t, f, f, f, f, t, t],
            vec![t, t, f, f, f, f, t, t],
            vec![t; 8],
        ]);
        let o = Oracles::within(&m, &r, 3).unwrap();
        assert_eq!(o.sender, 2);
        assert_eq!(o.message, 2);
        assert_eq!(o.receiver, 8); // 4 packets, one per step: steps 0, 1, 6, 7
    }
}
