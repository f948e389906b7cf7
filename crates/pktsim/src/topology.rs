//! The idealized two-level fat tree (thesis §4.3, Figure 3.1): racks of hosts under one ToR
//! each, every ToR on one logical core switch, a unique path between any two hosts. Ports are
//! numbered: ToR-to-host ports `0..n` (one per host), ToR-to-core ports `n..n+R`, core-to-ToR
//! ports `n+R..n+2R`.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::config::Placement;

#[derive(Debug, Clone)]
pub struct Topology {
    pub nodes: usize,
    pub racks: usize,
    pub hosts_per_rack: usize,
    pub rack_of: Vec<u32>,
}

impl Topology {
    pub fn new(nodes: usize, racks: usize, placement: Placement, seed: u64) -> Self {
        let per = nodes.div_ceil(racks);
        let mut slot: Vec<usize> = (0..nodes).collect();
        if placement == Placement::Random {
            slot.shuffle(&mut ChaCha8Rng::seed_from_u64(seed ^ 0x7091_0000));
        }
        Topology {
            nodes,
            racks,
            hosts_per_rack: per,
            rack_of: slot.iter().map(|&s| (s / per) as u32).collect(),
        }
    }

    pub fn rack(&self, node: usize) -> usize {
        self.rack_of[node] as usize
    }

    pub fn up_port(&self, rack: usize) -> usize {
        self.nodes + rack
    }

    pub fn core_port(&self, rack: usize) -> usize {
        self.nodes + self.racks + rack
    }

    pub fn ports(&self) -> usize {
        self.nodes + 2 * self.racks
    }

    /// ToR-core link capacity in thousandths of a packet per timestep.
    pub fn core_milli(&self, core_fraction: f64) -> u64 {
        (core_fraction * self.hosts_per_rack as f64 * 1000.0)
            .round()
            .max(1.0) as u64
    }
}
