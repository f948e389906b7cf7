//! `wss`: Orchestra's weighted shuffle scheduling. Every flow gets a share of its ports in
//! proportion to the bytes it has left, so the flows sharing a port finish together; with coupled
//! ports this is weighted max-min with weight = remaining bytes.

use crate::alloc::{Budget, Demand, PairFill};
use crate::{Decision, Rates, Scheduler, Snapshot};

#[derive(Debug, Default)]
pub struct Wss {
    budget: Budget,
    fill: PairFill,
    demands: Vec<Demand>,
    owner: Vec<(u32, u32)>,
    out: Vec<f64>,
}

impl Scheduler for Wss {
    fn name(&self) -> &str {
        "wss"
    }

    fn clairvoyant(&self) -> bool {
        true
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        self.budget.reset(snap.fabric);
        self.demands.clear();
        self.owner.clear();
        for (ci, c) in snap.coflows.iter().enumerate() {
            for (fi, f) in c.flows.iter().enumerate() {
                self.demands.push(Demand {
                    src: f.src,
                    dst: f.dst,
                    weight: f.remaining_bytes,
                });
                self.owner.push((ci as u32, fi as u32));
            }
        }
        self.out.resize(self.demands.len(), 0.0);
        self.fill
            .fill(&self.demands, &mut self.budget, &mut self.out);
        for (&(ci, fi), &r) in self.owner.iter().zip(&self.out) {
            rates.per_coflow[ci as usize][fi as usize] = r;
        }
        Decision::none()
    }
}
