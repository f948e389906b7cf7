//! Weighted max-min over flows, filled per (uplink, downlink) pair: a flow's fair rate depends
//! only on its two ports and its weight, so all flows of one pair are one demand of their summed
//! weight, and each then gets its weight's share. A trace with 100k active flows often has a
//! tenth as many active pairs, and the filling cost follows the pairs.

use super::budget::Budget;
use super::waterfill::{Demand, WaterFill};
use crate::state::{CoflowState, FlowState, Rates};

#[derive(Debug, Default, Clone)]
pub struct PairFill {
    /// `index[src * ports + dst]`: the pair's demand, or `u32::MAX`.
    index: Vec<u32>,
    demands: Vec<Demand>,
    pair_of: Vec<u32>,
    pair_rates: Vec<f64>,
    fill: WaterFill,
    flows: Vec<Demand>,
    owner: Vec<(u32, u32)>,
    out: Vec<f64>,
}

impl PairFill {
    /// Rates for `flows` (`src`, `dst`, `weight`) into `rates`, taken from `budget`.
    pub fn fill(&mut self, flows: &[Demand], budget: &mut Budget, rates: &mut [f64]) {
        let ports = budget.up.len();
        if self.index.len() != ports * ports {
            self.index = vec![u32::MAX; ports * ports];
        }
        self.demands.clear();
        self.pair_of.clear();
        for f in flows {
            let slot = &mut self.index[f.src as usize * ports + f.dst as usize];
            if *slot == u32::MAX {
                *slot = self.demands.len() as u32;
                self.demands.push(Demand {
                    src: f.src,
                    dst: f.dst,
                    weight: 0.0,
                });
            }
            self.demands[*slot as usize].weight += f.weight;
            self.pair_of.push(*slot);
        }
        self.pair_rates.clear();
        self.pair_rates.resize(self.demands.len(), 0.0);
        self.fill.fill(&self.demands, budget, &mut self.pair_rates);
        for ((f, &p), r) in flows.iter().zip(&self.pair_of).zip(rates.iter_mut()) {
            let d = &self.demands[p as usize];
            *r = if d.weight > 0.0 {
                self.pair_rates[p as usize] * (f.weight / d.weight)
            } else {
                0.0
            };
        }
        for d in &self.demands {
            self.index[d.src as usize * ports + d.dst as usize] = u32::MAX;
        }
    }
}

/// Per-flow weighted max-min over whole coflows: `weight(coflow, flow)` gives a flow's weight,
/// or `None` to leave it out (rate 0). Writes `rates` and takes them from `budget`.
pub fn fill_coflows(
    pf: &mut PairFill,
    coflows: &[CoflowState],
    budget: &mut Budget,
    rates: &mut Rates,
    mut weight: impl FnMut(usize, &FlowState) -> Option<f64>,
) {
    let mut flows = std::mem::take(&mut pf.flows);
    let mut owner = std::mem::take(&mut pf.owner);
    let mut out = std::mem::take(&mut pf.out);
    flows.clear();
    owner.clear();
    for (ci, c) in coflows.iter().enumerate() {
        for (fi, f) in c.flows.iter().enumerate() {
            if let Some(w) = weight(ci, f) {
                flows.push(Demand {
                    src: f.src,
                    dst: f.dst,
                    weight: w,
                });
                owner.push((ci as u32, fi as u32));
            }
        }
    }
    out.clear();
    out.resize(flows.len(), 0.0);
    pf.fill(&flows, budget, &mut out);
    for (&(ci, fi), &r) in owner.iter().zip(&out) {
        rates.per_coflow[ci as usize][fi as usize] = r;
    }
    pf.flows = flows;
    pf.owner = owner;
    pf.out = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Fabric;

    #[test]
    fn pairs_fill_like_flows() {
        // Two flows on 0->1 and one on 0->2: per-flow max-min gives each 1/3 of port 0.
        let fabric = Fabric::uniform(3, 1.0);
        let flows = [
            Demand {
                src: 0,
                dst: 1,
                weight: 1.0,
            },
            Demand {
                src: 0,
                dst: 2,
                weight: 1.0,
            },
            Demand {
                src: 0,
                dst: 1,
                weight: 1.0,
            },
        ];
        let mut by_pair = [0.0; 3];
        PairFill::default().fill(&flows, &mut Budget::full(&fabric), &mut by_pair);
        let mut by_flow = [0.0; 3];
        WaterFill::default().fill(&flows, &mut Budget::full(&fabric), &mut by_flow);
        for (a, b) in by_pair.iter().zip(by_flow) {
            assert!((a - b).abs() < 1e-12 && (a - 1.0 / 3.0).abs() < 1e-12);
        }
    }
}
