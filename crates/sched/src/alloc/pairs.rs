//! Weighted max-min over flows, filled per (uplink, downlink) pair: a flow's fair rate depends
//! only on its two ports and its weight, so all flows of one pair are one demand of their summed
//! weight, and each then gets its weight's share. A trace with 100k active flows often has a
//! tenth as many active pairs, and the filling cost follows the pairs.

use super::budget::Budget;
use super::pair_index::{PairIndex, NONE};
use super::waterfill::{Demand, WaterFill};
use crate::state::{CoflowState, FlowState, Rates};

#[derive(Debug, Default, Clone)]
pub struct PairFill {
    /// Each pair's demand, or [`NONE`]; dense or hashed by the fabric's size.
    index: PairIndex,
    demands: Vec<Demand>,
    pair_of: Vec<u32>,
    pair_rates: Vec<f64>,
    fill: WaterFill,
    /// Per flow of [`fill_coflows`]: its weight (0 when left out).
    out: Vec<f64>,
}

/// Per-flow weighted max-min over whole coflows: `weight(coflow, flow)` gives a flow's weight,
/// or `None` to leave it out (rate 0). Writes `rates` and takes them from `budget`. One pass
/// groups the flows by pair, one writes the rates: nothing copied per flow but its pair and
/// weight.
pub fn fill_coflows(
    pf: &mut PairFill,
    coflows: &[CoflowState],
    budget: &mut Budget,
    rates: &mut Rates,
    mut weight: impl FnMut(usize, &FlowState) -> Option<f64>,
) {
    let ports = budget.up.len();
    if pf.index.ports() != ports {
        pf.index = PairIndex::new(ports);
    }
    pf.demands.clear();
    pf.pair_of.clear();
    pf.out.clear();
    for (ci, c) in coflows.iter().enumerate() {
        for f in &c.flows {
            let Some(w) = weight(ci, f) else {
                pf.pair_of.push(u32::MAX);
                pf.out.push(0.0);
                continue;
            };
            let mut slot = pf.index.get(f.src, f.dst);
            if slot == NONE {
                slot = pf.demands.len() as u32;
                pf.index.set(f.src, f.dst, slot);
                pf.demands.push(Demand {
                    src: f.src,
                    dst: f.dst,
                    weight: 0.0,
                });
            }
            pf.demands[slot as usize].weight += w;
            pf.pair_of.push(slot);
            pf.out.push(w);
        }
    }
    pf.pair_rates.clear();
    pf.pair_rates.resize(pf.demands.len(), 0.0);
    pf.fill.fill(&pf.demands, budget, &mut pf.pair_rates);
    let mut k = 0;
    for (r, c) in rates.per_coflow.iter_mut().zip(coflows) {
        for rate in &mut r[..c.flows.len()] {
            let (p, w) = (pf.pair_of[k], pf.out[k]);
            k += 1;
            if p == u32::MAX {
                continue;
            }
            let d = &pf.demands[p as usize];
            *rate = if d.weight > 0.0 {
                pf.pair_rates[p as usize] * (w / d.weight)
            } else {
                0.0
            };
        }
    }
    // Dense: unset the pairs used (not ports² entries); hashed: drop them all at once.
    if matches!(pf.index, PairIndex::Dense { .. }) {
        for d in &pf.demands {
            pf.index.set(d.src, d.dst, NONE);
        }
    } else {
        pf.index.clear_sparse();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Fabric;

    #[test]
    fn pairs_fill_like_flows() {
        // Two flows on 0->1 and one on 0->2: per-flow max-min gives each 1/3 of port 0.
        let fabric = Fabric::uniform(3, 1.0);
        let flows = [(0, 1), (0, 2), (0, 1)];
        let coflow = CoflowState::of_flows(&flows.map(|(src, dst)| (src, dst, 1.0)));
        let coflows = [coflow];
        let mut by_pair = Rates::default();
        by_pair.reset(&coflows);
        let mut pf = PairFill::default();
        fill_coflows(
            &mut pf,
            &coflows,
            &mut Budget::full(&fabric),
            &mut by_pair,
            |_, _| Some(1.0),
        );
        let demands: Vec<Demand> = (flows.iter())
            .map(|&(src, dst)| Demand {
                src,
                dst,
                weight: 1.0,
            })
            .collect();
        let mut by_flow = [0.0; 3];
        WaterFill::default().fill(&demands, &mut Budget::full(&fabric), &mut by_flow);
        for (a, b) in by_pair.per_coflow[0].iter().zip(by_flow) {
            assert!((a - b).abs() < 1e-12 && (a - 1.0 / 3.0).abs() < 1e-12);
        }
    }
}
