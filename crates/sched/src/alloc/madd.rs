//! Γ (Eq 4.1), MADD (Minimum Allocation for Desired Duration) and backfilling.

use super::budget::Budget;
use crate::state::FlowState;

/// Per-port byte sums of one coflow, with the touched ports remembered so that clearing costs
/// only what was touched.
#[derive(Debug, Default, Clone)]
pub struct PortLoads {
    out: Vec<f64>,
    inn: Vec<f64>,
    touched_out: Vec<u32>,
    touched_in: Vec<u32>,
}

impl PortLoads {
    fn load(&mut self, ports: usize, flows: &[FlowState]) {
        if self.out.len() != ports {
            self.out = vec![0.0; ports];
            self.inn = vec![0.0; ports];
        }
        for &p in &self.touched_out {
            self.out[p as usize] = 0.0;
        }
        for &p in &self.touched_in {
            self.inn[p as usize] = 0.0;
        }
        self.touched_out.clear();
        self.touched_in.clear();
        for f in flows {
            if f.remaining_bytes <= 0.0 {
                continue;
            }
            if self.out[f.src as usize] == 0.0 {
                self.touched_out.push(f.src);
            }
            self.out[f.src as usize] += f.remaining_bytes;
            if self.inn[f.dst as usize] == 0.0 {
                self.touched_in.push(f.dst);
            }
            self.inn[f.dst as usize] += f.remaining_bytes;
        }
    }

    /// Γ: the least time in which `flows` could finish on what `budget` leaves; infinite if a
    /// port they need is full. `capacity` ports are given by `up`/`down`.
    pub fn gamma_on(&mut self, flows: &[FlowState], up: &[f64], down: &[f64], floor: f64) -> f64 {
        self.load(up.len(), flows);
        let mut g: f64 = 0.0;
        for &p in &self.touched_out {
            let cap = up[p as usize];
            if cap <= floor {
                return f64::INFINITY;
            }
            g = g.max(self.out[p as usize] / cap);
        }
        for &p in &self.touched_in {
            let cap = down[p as usize];
            if cap <= floor {
                return f64::INFINITY;
            }
            g = g.max(self.inn[p as usize] / cap);
        }
        g
    }

    pub fn gamma(&mut self, flows: &[FlowState], budget: &Budget) -> f64 {
        self.gamma_on(flows, &budget.up, &budget.down, budget.floor)
    }
}

/// Every active coflow's remaining bytes per port, aggregated once per decision, so that each
/// Γ costs O(ports the coflow touches) instead of O(its flows): an M x R shuffle touches M + R
/// ports but has M x R flows.
#[derive(Debug, Default, Clone)]
pub struct LoadTable {
    ports: usize,
    /// Entries of coflow `i` are `entries[off[i]..off[i + 1]]`; a port `p < ports` is an uplink,
    /// `ports + p` the downlink of `p`.
    off: Vec<usize>,
    entries: Vec<(u32, f64)>,
    scratch: PortLoads,
}

impl LoadTable {
    /// Aggregate `coflows` (each a flow list).
    pub fn build<'a>(&mut self, ports: usize, coflows: impl Iterator<Item = &'a [FlowState]>) {
        self.ports = ports;
        self.off.clear();
        self.entries.clear();
        self.off.push(0);
        for flows in coflows {
            let l = &mut self.scratch;
            l.load(ports, flows);
            for &p in &l.touched_out {
                self.entries.push((p, l.out[p as usize]));
            }
            for &p in &l.touched_in {
                self.entries.push((ports as u32 + p, l.inn[p as usize]));
            }
            self.off.push(self.entries.len());
        }
    }

    /// Γ of coflow `i` on capacities `up`/`down` (infinite if it needs a port at or below
    /// `floor`).
    pub fn gamma_on(&self, i: usize, up: &[f64], down: &[f64], floor: f64) -> f64 {
        let mut g: f64 = 0.0;
        for &(r, bytes) in &self.entries[self.off[i]..self.off[i + 1]] {
            let r = r as usize;
            let cap = if r < self.ports {
                up[r]
            } else {
                down[r - self.ports]
            };
            if cap <= floor {
                return f64::INFINITY;
            }
            g = g.max(bytes / cap);
        }
        g
    }

    pub fn gamma(&self, i: usize, budget: &Budget) -> f64 {
        self.gamma_on(i, &budget.up, &budget.down, budget.floor)
    }
}

/// Give each flow `remaining / tau` (all finish together at `tau`) and take it from `budget`.
pub fn madd_for(flows: &[FlowState], tau: f64, budget: &mut Budget, rates: &mut [f64]) {
    if !(tau > 0.0 && tau.is_finite()) {
        return;
    }
    for (f, r) in flows.iter().zip(rates.iter_mut()) {
        let rate = f.remaining_bytes / tau;
        *r += rate;
        budget.take(f.src, f.dst, rate);
    }
}

/// MADD on what `budget` leaves: every flow finishes exactly at Γ. Returns Γ (infinite, and no
/// rates given, when a needed port is full).
pub fn madd(
    loads: &mut PortLoads,
    flows: &[FlowState],
    budget: &mut Budget,
    rates: &mut [f64],
) -> f64 {
    let g = loads.gamma(flows, budget);
    madd_for(flows, g, budget, rates);
    g
}

/// How leftover capacity is handed out after the priority pass (work conservation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backfill {
    /// CoflowSim: walk coflows in order and give each flow all its two ports have left.
    #[default]
    Greedy,
    /// Thesis Pseudocode 1 line 16: each uplink's leftover is split among the coflow's flows there
    /// in proportion to their MADD rates (equally when all are zero), capped by the downlink;
    /// then what downlink caps left is handed out greedily, so the pass is work conserving.
    Proportional,
    /// No work conservation.
    None,
}

/// Greedy backfill of one coflow's flows.
pub fn backfill_greedy(flows: &[FlowState], budget: &mut Budget, rates: &mut [f64]) {
    for (f, r) in flows.iter().zip(rates.iter_mut()) {
        let add = budget.headroom(f.src, f.dst);
        if add > budget.floor {
            *r += add;
            budget.take(f.src, f.dst, add);
        }
    }
}

/// Proportional backfill of one coflow's flows (see [`Backfill::Proportional`]): what each
/// uplink has left when the coflow's turn comes is split among the coflow's flows there in
/// proportion to their rates (equally if all are zero), each capped by its downlink.
pub fn backfill_proportional(flows: &[FlowState], budget: &mut Budget, rates: &mut [f64]) {
    let mut touched = std::mem::take(&mut budget.touched);
    touched.clear();
    for (f, &r) in flows.iter().zip(rates.iter()) {
        let g = &mut budget.groups[f.src as usize];
        if g.2 == 0 {
            *g = (budget.up[f.src as usize], 0.0, 0);
            touched.push(f.src);
        }
        g.1 += r;
        g.2 += 1;
    }
    for (f, r) in flows.iter().zip(rates.iter_mut()) {
        let (leftover, total, n) = budget.groups[f.src as usize];
        if leftover <= budget.floor {
            continue;
        }
        let w = if total > 0.0 {
            *r / total
        } else {
            1.0 / n as f64
        };
        let add = (leftover * w).min(budget.down[f.dst as usize]);
        if add > budget.floor {
            *r += add;
            budget.take(f.src, f.dst, add);
        }
    }
    for &p in &touched {
        budget.groups[p as usize] = (0.0, 0.0, 0);
    }
    budget.touched = touched;
}

pub fn backfill(kind: Backfill, flows: &[FlowState], budget: &mut Budget, rates: &mut [f64]) {
    match kind {
        Backfill::Greedy => backfill_greedy(flows, budget, rates),
        Backfill::Proportional => backfill_proportional(flows, budget, rates),
        Backfill::None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Fabric;

    fn flow(src: u32, dst: u32, bytes: f64) -> FlowState {
        FlowState {
            src,
            dst,
            sent_bytes: 0.0,
            remaining_bytes: bytes,
        }
    }

    #[test]
    fn gamma_on_half_allocated_port_o13() {
        // O13: 1 Gbps port with 0.5 Gbps left; 1 Gb through it takes 2 s.
        let fabric = Fabric::uniform_bps(2, 1e9);
        let mut b = Budget::full(&fabric);
        b.take(0, 1, 0.5e9 / 8.0);
        let g = PortLoads::default().gamma(&[flow(0, 1, 1e9 / 8.0)], &b);
        assert!((g - 2.0).abs() < 1e-12);
    }

    #[test]
    fn madd_on_fig_3_2_gives_quarter_quarter_half() {
        // O3: senders 0,1,2; receivers 3,4.
        let fabric = Fabric::uniform(5, 1.0);
        let mut b = Budget::full(&fabric);
        let flows = [
            flow(0, 3, 1.0),
            flow(0, 4, 1.0),
            flow(1, 3, 1.0),
            flow(1, 4, 1.0),
            flow(2, 3, 2.0),
            flow(2, 4, 2.0),
        ];
        let mut rates = [0.0; 6];
        let g = madd(&mut PortLoads::default(), &flows, &mut b, &mut rates);
        assert!((g - 4.0).abs() < 1e-12);
        let want = [0.25, 0.25, 0.25, 0.25, 0.5, 0.5];
        for (r, w) in rates.iter().zip(want) {
            assert!((r - w).abs() < 1e-12);
        }
    }

    #[test]
    fn full_port_makes_gamma_infinite() {
        let fabric = Fabric::uniform(2, 1.0);
        let mut b = Budget::full(&fabric);
        b.take(0, 1, 1.0);
        assert!(PortLoads::default()
            .gamma(&[flow(0, 1, 1.0)], &b)
            .is_infinite());
    }
}
