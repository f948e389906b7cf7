//! Lockstep (HPC, spec §5): in step k (1..N) node i sends its whole message to (i + k) mod N at
//! line rate; a barrier separates steps. The barrier is an input (`on_barrier`) so a driver
//! decides how it is realized.

use super::packet::Packet;

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

    /// Packet `k` of the message to `j`: every packet is unscheduled.
    pub fn packet(&self, j: usize, k: u32) -> Packet {
        Packet::unscheduled(self.id, j, k, self.total[j])
    }

    /// Packets of the message to `j`, and how many have been sent (all of it in earlier
    /// steps, none in later ones).
    pub fn sent(&self, j: usize) -> (u32, u32) {
        let n = self.total.len();
        let k = (j + n - self.id) % n;
        let sent = match k.cmp(&self.step) {
            _ if k == 0 => 0,
            std::cmp::Ordering::Less => self.total[j],
            std::cmp::Ordering::Equal => self.sent,
            std::cmp::Ordering::Greater => 0,
        };
        (self.total[j], sent)
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
        let p = self.packet(j, self.sent);
        self.sent += 1;
        Some(p)
    }
}
