//! Links and switches: the in-flight timing wheel and the switch output ports (thesis §4.3).
//! Every hop takes the same latency, so the wheel has `latency + 1` buckets and packets never
//! need sorting. Queues hold packets by value and keep their capacity: no allocation per packet.

use std::collections::VecDeque;

use coflowkit_shuffle::proto::Packet;

/// Where a packet on a wire lands: a ToR (0..R), the core switch (R), or its host.
pub const HOST: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub at: u32,
    pub pkt: Packet,
}

/// Packets on the wires, bucketed by arrival timestep (a timing wheel as long as the longest
/// delay: control packets whose whole path is prioritized skip straight to their host).
#[derive(Debug)]
pub struct Wheel {
    buckets: Vec<Vec<Entry>>,
    latency: u64,
    pub in_flight: u64,
}

impl Wheel {
    /// A wheel for hops of `latency` timesteps and paths of up to `max_hops` hops.
    pub fn new(latency: u32, max_hops: u32) -> Self {
        Wheel {
            buckets: (0..=latency * max_hops).map(|_| Vec::new()).collect(),
            latency: latency as u64,
            in_flight: 0,
        }
    }

    /// Puts `pkt` on a wire at `now`; it lands at `at` one hop later.
    #[inline]
    pub fn send(&mut self, now: u64, at: u32, pkt: Packet) {
        self.send_hops(now, 1, at, pkt);
    }

    /// Lands `pkt` at `at` after `hops` hops of latency.
    #[inline]
    pub fn send_hops(&mut self, now: u64, hops: u64, at: u32, pkt: Packet) {
        let b = ((now + hops * self.latency) % self.buckets.len() as u64) as usize;
        self.buckets[b].push(Entry { at, pkt });
        self.in_flight += 1;
    }

    /// Takes the packets landing at `now` (give the vector back with `restore`).
    pub fn take(&mut self, now: u64) -> Vec<Entry> {
        let b = (now % self.buckets.len() as u64) as usize;
        let v = std::mem::take(&mut self.buckets[b]);
        self.in_flight -= v.len() as u64;
        v
    }

    pub fn restore(&mut self, now: u64, mut v: Vec<Entry>) {
        v.clear();
        let b = (now % self.buckets.len() as u64) as usize;
        if self.buckets[b].is_empty() {
            self.buckets[b] = v;
        }
    }
}

/// One switch output port: a FIFO for data (and for control when the port has no priorities)
/// and a high-priority queue for control packets.
#[derive(Debug)]
pub struct Port {
    pub data: VecDeque<Packet>,
    pub ctrl: VecDeque<Packet>,
    pub prio: bool,
    /// Capacity in thousandths of a data packet per timestep; the credit counter is the
    /// thesis' fractional bandwidth counter (§6.2).
    pub cap_milli: u64,
    pub credit: u64,
    pub last: u64,
    /// Where packets leaving this port land.
    pub next: u32,
    /// Switch index for occupancy: ToR r, or R for the core.
    pub switch: u32,
    pub queued_data: u64,
    pub active: bool,
    /// Its capacity exceeds anything that can reach it in one timestep: packets pass straight
    /// through (same timing as queueing and draining in the same timestep).
    pub never_queues: bool,
}

impl Port {
    pub fn new(prio: bool, cap_milli: u64, next: u32, switch: u32) -> Self {
        Port {
            data: VecDeque::new(),
            ctrl: VecDeque::new(),
            prio,
            cap_milli,
            credit: 0,
            last: 0,
            next,
            switch,
            queued_data: 0,
            active: false,
            never_queues: false,
        }
    }
}
