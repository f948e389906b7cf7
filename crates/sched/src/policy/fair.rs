//! `fair`: per-flow max-min fairness over uplinks and downlinks (what TCP approximates), with an
//! optional cap on the concurrent fetches of each reducer (Hadoop fetches from 5 mappers at once).

use crate::alloc::{Budget, Demand, PairFill};
use crate::{Decision, Rates, Scheduler, Snapshot};

#[derive(Debug, Default)]
pub struct Fair {
    /// At most this many flows of one coflow into one reducer run at once (first in flow order).
    pub max_per_reducer: Option<usize>,
    budget: Budget,
    fill: PairFill,
    demands: Vec<Demand>,
    owner: Vec<(u32, u32)>,
    out: Vec<f64>,
    per_dst: Vec<u32>,
}

impl Fair {
    pub fn new(max_per_reducer: Option<usize>) -> Self {
        Fair {
            max_per_reducer,
            ..Default::default()
        }
    }
}

impl Scheduler for Fair {
    fn name(&self) -> &str {
        "fair"
    }

    fn clairvoyant(&self) -> bool {
        false
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        self.budget.reset(snap.fabric);
        self.demands.clear();
        self.owner.clear();
        self.per_dst.resize(snap.fabric.ports(), 0);
        for (ci, c) in snap.coflows.iter().enumerate() {
            for (fi, f) in c.flows.iter().enumerate() {
                if let Some(cap) = self.max_per_reducer {
                    let n = &mut self.per_dst[f.dst as usize];
                    if *n as usize >= cap {
                        continue;
                    }
                    *n += 1;
                }
                self.demands.push(Demand {
                    src: f.src,
                    dst: f.dst,
                    weight: 1.0,
                });
                self.owner.push((ci as u32, fi as u32));
            }
            if self.max_per_reducer.is_some() {
                for f in &c.flows {
                    self.per_dst[f.dst as usize] = 0;
                }
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
