//! `Rem(.)`: the unallocated capacity of every uplink and downlink during one decision.

use coflowkit_model::Fabric;

/// A port with less than this fraction of the largest capacity left counts as full: it absorbs
/// the floating-point dust that subtracting rates leaves behind.
pub const FULL_FRACTION: f64 = 1e-12;

#[derive(Debug, Clone, Default)]
pub struct Budget {
    pub up: Vec<f64>,
    pub down: Vec<f64>,
    /// Bytes per second below which a port is full.
    pub floor: f64,
    /// Per-uplink scratch for proportional backfill: (leftover at the start, summed rates,
    /// flows), valid for the uplinks in `touched` only.
    pub(crate) groups: Vec<(f64, f64, u32)>,
    pub(crate) touched: Vec<u32>,
    /// Ports written by [`Budget::reset`] so far (both sides): a reset costs O(N), and a
    /// regression test of the BASHuffler estimate counts them.
    pub(crate) resets: u64,
}

impl Budget {
    pub fn full(fabric: &Fabric) -> Self {
        let mut b = Budget::default();
        b.reset(fabric);
        b
    }

    pub fn reset(&mut self, fabric: &Fabric) {
        self.resets += (fabric.up_bytes_per_s.len() + fabric.down_bytes_per_s.len()) as u64;
        self.up.clear();
        self.up.extend_from_slice(&fabric.up_bytes_per_s);
        self.down.clear();
        self.down.extend_from_slice(&fabric.down_bytes_per_s);
        self.groups.resize(self.up.len(), (0.0, 0.0, 0));
        let max = self
            .up
            .iter()
            .chain(&self.down)
            .fold(0.0, |a: f64, &b| a.max(b));
        self.floor = max * FULL_FRACTION;
    }

    /// Ports written by resets so far (uplinks and downlinks).
    pub fn ports_reset(&self) -> u64 {
        self.resets
    }

    /// The most a new flow from `src` to `dst` could get right now.
    pub fn headroom(&self, src: u32, dst: u32) -> f64 {
        self.up[src as usize].min(self.down[dst as usize])
    }

    /// Take `rate` from both ends of a flow, never leaving a negative remainder.
    pub fn take(&mut self, src: u32, dst: u32, rate: f64) {
        let u = &mut self.up[src as usize];
        *u = (*u - rate).max(0.0);
        let d = &mut self.down[dst as usize];
        *d = (*d - rate).max(0.0);
    }

    pub fn has_room(&self, src: u32, dst: u32) -> bool {
        self.up[src as usize] > self.floor && self.down[dst as usize] > self.floor
    }
}
