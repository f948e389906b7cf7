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
        let mut o = Oracles::default();
        let mut any = vec![false; r.horizon as usize];
        for s in 0..n {
            let out = m.out_network(s);
            o.sender = o.sender.max(nth_running(&r.running[s], out)?);
        }
        for d in 0..n {
            let inn = m.in_network(d);
            if inn == 0 {
                continue;
            }
            any.iter_mut().for_each(|x| *x = false);
            for s in (0..n).filter(|&s| s != d && m.get(s, d) > 0) {
                for (a, &run) in any.iter_mut().zip(&r.running[s]) {
                    *a |= run;
                }
                let t = through(&r.running[s], &r.running[d], m.get(s, d), rx_rate)?;
                o.message = o.message.max(t);
            }
            o.receiver = o.receiver.max(through(&any, &r.running[d], inn, rx_rate)?);
        }
        Some(o)
    }
}

/// Steps until `count` running steps have passed (0 if count is 0).
fn nth_running(running: &[bool], count: u64) -> Option<u64> {
    if count == 0 {
        return Some(0);
    }
    let mut seen = 0;
    for (t, &run) in running.iter().enumerate() {
        seen += run as u64;
        if seen == count {
            return Some(t as u64 + 1);
        }
    }
    None
}

/// Steps until `amount` packets are processed: one arrives in each step where `arrive` holds,
/// and the receiver processes up to `rx_rate` of those arrived in each step where it runs.
fn through(arrive: &[bool], process: &[bool], amount: u64, rx_rate: u32) -> Option<u64> {
    if amount == 0 {
        return Some(0);
    }
    let (mut arrived, mut done) = (0u64, 0u64);
    for (t, (&a, &p)) in arrive.iter().zip(process).enumerate() {
        if a && arrived < amount {
            arrived += 1;
        }
        if p {
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
