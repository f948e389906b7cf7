//! MADD (Varys) pacing as a sender: every message goes at `size / Gamma`, where Gamma (the
//! minimum completion time over all links, in packet times: one packet at line rate, the
//! simulator's timestep) is computed centrally and handed in. `Node` converts the driver's
//! clock to packet times (`Clock`).
//! The fractional credit counter of the thesis is kept as each packet's release time,
//! `ceil(k * Gamma / size)`; among released packets the earliest release goes first, and ties
//! go round from the sender's own index (`heap::rotated`): across senders that is a Latin
//! square, so senders whose messages are released together do not all pick the same receiver.

use super::heap::{rotated, IndexedHeap};
use super::packet::Packet;

#[derive(Debug, Clone)]
pub struct MaddSender {
    id: usize,
    total: Vec<u32>,
    sent: Vec<u32>,
    /// Gamma = num / den timesteps.
    num: u128,
    den: u128,
    ready: IndexedHeap,
}

impl MaddSender {
    pub fn new(id: usize, sizes: &[u64], gamma_num: u64, gamma_den: u64) -> Self {
        let n = sizes.len();
        let mut s = MaddSender {
            id,
            total: sizes
                .iter()
                .enumerate()
                .map(|(j, &x)| if j == id { 0 } else { x as u32 })
                .collect(),
            sent: vec![0; n],
            num: gamma_num as u128,
            den: gamma_den.max(1) as u128,
            ready: IndexedHeap::new(n),
        };
        for j in 0..n {
            s.reschedule(j);
        }
        s
    }

    /// Packet time at which packet `k` of the message to `j` may go.
    pub fn release(&self, j: usize, k: u32) -> u64 {
        let size = self.total[j] as u128;
        (k as u128 * self.num).div_ceil(self.den * size) as u64
    }

    fn reschedule(&mut self, j: usize) {
        if self.sent[j] >= self.total[j] {
            self.ready.remove(j);
            return;
        }
        let at = self.release(j, self.sent[j]);
        self.ready
            .set_tie(j, u64::MAX - at, rotated(self.id, j, self.total.len()));
    }

    /// Packet `k` of the message to `j`: every packet is unscheduled.
    pub fn packet(&self, j: usize, k: u32) -> Packet {
        Packet::unscheduled(self.id, j, k, self.total[j])
    }

    /// Packets of the message to `j`, and how many have been sent.
    pub fn sent(&self, j: usize) -> (u32, u32) {
        (self.total[j], self.sent[j])
    }

    /// The next packet released by packet time `now`, if any.
    pub fn poll_send(&mut self, now: u64) -> Option<Packet> {
        let (j, k) = self.ready.peek()?;
        if u64::MAX - k > now {
            return None;
        }
        let p = self.packet(j, self.sent[j]);
        self.sent[j] += 1;
        self.reschedule(j);
        Some(p)
    }

    pub fn done(&self) -> bool {
        self.ready.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paces_each_message_at_size_over_gamma() {
        // Gamma = 8 timesteps: a 4-packet message goes every 2 steps, a 2-packet one every 4.
        let mut s = MaddSender::new(0, &[0, 4, 2], 8, 1);
        assert_eq!(s.release(1, 3), 6);
        let sent: Vec<Option<u32>> = (0..8).map(|t| s.poll_send(t).map(|p| p.dst)).collect();
        assert_eq!(
            sent,
            vec![
                Some(1),
                Some(2),
                Some(1),
                None,
                Some(1),
                Some(2),
                Some(1),
                None
            ]
        );
        assert!(s.done());
    }
}
