//! Hadoop-C's receiver (spec §5): grant C randomly chosen incoming messages at a time, each
//! with a constant window of RTTpackets and no total limit; a new message is chosen only when
//! one of the C is fully granted. Receivers start once they know all their incoming messages,
//! as a reducer knows its map outputs.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::inbox::{Arrival, Inbox};
use super::packet::{push_grant, Packet};

#[derive(Debug, Clone)]
pub struct HadoopReceiver {
    pub inbox: Inbox,
    connections: usize,
    window: u32,
    /// Grant unit (`GrantOptions::grant_batch`, at most the window).
    unit: u32,
    active: Vec<bool>,
    n_active: usize,
    pending: Vec<u32>,
    /// Active messages that may have room for a grant.
    dirty: Vec<u32>,
    rng: ChaCha8Rng,
}

impl HadoopReceiver {
    pub fn new(
        id: usize,
        n: usize,
        expected: u32,
        connections: u32,
        window: u32,
        batch: u32,
        rng: ChaCha8Rng,
    ) -> Self {
        HadoopReceiver {
            inbox: Inbox::new(id, n, expected),
            connections: connections as usize,
            window,
            unit: batch.clamp(1, window.max(1)),
            active: vec![false; n],
            n_active: 0,
            pending: Vec::new(),
            dirty: Vec::new(),
            rng,
        }
    }

    pub fn on_packet(&mut self, p: &Packet, out: &mut Vec<Packet>) -> Arrival {
        let j = p.src as usize;
        let arrival = self.inbox.arrive(p, out);
        if matches!(arrival, Arrival::Announced | Arrival::Data { first: true }) {
            let m = &self.inbox.msgs[j];
            if m.granted < m.total {
                self.pending.push(j as u32);
            }
        }
        if matches!(arrival, Arrival::Data { .. }) && self.active[j] {
            self.dirty.push(j as u32);
        }
        arrival
    }

    pub fn poll_grants(&mut self, out: &mut Vec<Packet>) {
        if self.inbox.known < self.inbox.expected {
            return;
        }
        let since = out.len();
        loop {
            while self.n_active < self.connections && !self.pending.is_empty() {
                let i = self.rng.gen_range(0..self.pending.len());
                let j = self.pending.swap_remove(i);
                self.active[j as usize] = true;
                self.n_active += 1;
                self.dirty.push(j);
            }
            let Some(j) = self.dirty.pop() else { return };
            let j = j as usize;
            let m = &mut self.inbox.msgs[j];
            while m.out < self.window && m.granted < m.total {
                // K = 1: always 1, and it always fits.
                let g = self.unit.min(m.total - m.granted);
                if m.out + g > self.window {
                    break; // wait until a whole unit fits the window
                }
                m.granted += g;
                m.out += g;
                push_grant(out, since, self.unit > 1, self.inbox.id, j, m.granted);
            }
            if m.granted == m.total && self.active[j] {
                self.active[j] = false;
                self.n_active -= 1;
            }
        }
    }
}
