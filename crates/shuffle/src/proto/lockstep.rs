//! Lockstep (HPC, spec §5): in step k (1..N) node i sends its whole message to (i + k) mod N at
//! line rate; a barrier separates steps. The barrier is an input (`on_barrier`) so a driver
//! decides how it is realized.

use super::packet::{Kind, Packet};

#[derive(Debug, Clone)]
pub struct LockstepSender {
    id: usize,
    total: Vec<u32>,
    sent: u32,
    step: usize,
}

impl LockstepSender {
    pub fn new(id: usize, sizes: &[u64]) -> Self {
        LockstepSender {
            id,
            total: sizes.iter().map(|&x| x as u32).collect(),
            sent: 0,
            step: 1,
        }
    }

    /// The step this node is in (1..N; N when done).
    pub fn step(&self) -> usize {
        self.step
    }

    /// The barrier of step `step` has completed: move on to `step + 1`.
    pub fn on_barrier(&mut self, step: usize) {
        if step == self.step {
            self.step += 1;
            self.sent = 0;
        }
    }

    pub fn poll_send(&mut self) -> Option<Packet> {
        let n = self.total.len();
        if self.step >= n {
            return None;
        }
        let j = (self.id + self.step) % n;
        if self.sent >= self.total[j] {
            return None;
        }
        let p = Packet {
            kind: Kind::Data,
            src: self.id as u32,
            dst: j as u32,
            seq: self.sent,
            total: self.total[j],
            unsched: self.total[j],
            seed: 0,
        };
        self.sent += 1;
        Some(p)
    }
}
