//! `fair`: per-flow max-min fairness over uplinks and downlinks (what TCP approximates), with an
//! optional cap on the concurrent fetches of each reducer (Hadoop fetches from 5 mappers at once).

use crate::alloc::{fill_coflows, Budget, PairFill, Refill};
use crate::machinery::Machinery;
use crate::pair_policy::PairPolicy;
use crate::{Decision, PairShare, Rates, Scheduler, Snapshot};

#[derive(Debug, Default)]
pub struct Fair {
    /// At most this many flows of one coflow into one reducer run at once (first in flow order).
    pub max_per_reducer: Option<usize>,
    budget: Budget,
    fill: PairFill,
    refill: Refill,
    /// Per reducer port: (coflow position, flows admitted) for the reducer cap.
    per_dst: Vec<(usize, usize)>,
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
        self.per_dst.clear();
        self.per_dst.resize(snap.fabric.ports(), (usize::MAX, 0));
        let cap = self.max_per_reducer;
        let per_dst = &mut self.per_dst;
        fill_coflows(
            &mut self.fill,
            snap.coflows,
            &mut self.budget,
            rates,
            |ci, f| {
                if let Some(cap) = cap {
                    let slot = &mut per_dst[f.dst as usize];
                    if slot.0 != ci {
                        *slot = (ci, 0);
                    }
                    if slot.1 >= cap {
                        return None;
                    }
                    slot.1 += 1;
                }
                Some(1.0)
            },
        );
        Decision::none()
    }
}

impl Machinery for Fair {
    /// Without the reducer cap a flow's rate is its pair's share; with it, which flows run
    /// depends on their coflow and order.
    fn pair_policy(&mut self) -> Option<&mut dyn PairPolicy> {
        if self.max_per_reducer.is_some() {
            return None;
        }
        Some(self)
    }
}

impl PairPolicy for Fair {
    fn share(&self) -> PairShare {
        PairShare::Equal
    }

    fn refill(&mut self) -> &mut Refill {
        &mut self.refill
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoflowState;
    use coflowkit_model::Fabric;

    #[test]
    fn reducer_cap_admits_the_first_flows_only() {
        let c = CoflowState::of_flows(&[(0, 4, 1.0), (1, 4, 1.0), (2, 4, 1.0), (3, 4, 1.0)]);
        let fabric = Fabric::uniform(5, 1.0);
        let coflows = [c];
        let mut rates = Rates::default();
        rates.reset(&coflows);
        let snap = Snapshot {
            now_s: 0.0,
            fabric: &fabric,
            coflows: &coflows,
        };
        Fair::new(Some(2)).allocate(&snap, &mut rates);
        assert_eq!(rates.per_coflow[0], vec![0.5, 0.5, 0.0, 0.0]);
    }
}
