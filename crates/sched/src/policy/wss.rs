//! `wss`: Orchestra's weighted shuffle scheduling. Every flow gets a share of its ports in
//! proportion to the bytes it has left, so the flows sharing a port finish together; with coupled
//! ports this is weighted max-min with weight = remaining bytes.

use coflowkit_model::Fabric;

use crate::alloc::{fill_coflows, Budget, Demand, Drift, PairFill, Refill};
use crate::{Decision, PairPolicy, PairShare, Rates, Scheduler, Snapshot};

#[derive(Debug)]
pub struct Wss {
    budget: Budget,
    fill: PairFill,
    refill: Refill,
}

impl Default for Wss {
    fn default() -> Self {
        Wss {
            budget: Budget::default(),
            fill: PairFill::default(),
            refill: Refill::new(Drift::Draining),
        }
    }
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
        fill_coflows(
            &mut self.fill,
            snap.coflows,
            &mut self.budget,
            rates,
            |_, f| Some(f.remaining_bytes),
        );
        Decision::none()
    }

    fn pair_policy(&mut self) -> Option<&mut dyn PairPolicy> {
        Some(self)
    }
}

impl PairPolicy for Wss {
    fn share(&self) -> PairShare {
        PairShare::Remaining
    }

    fn allocate_pairs(
        &mut self,
        fabric: &Fabric,
        pairs: &[Demand],
        lowered: Option<&[u32]>,
        rates: &mut [f64],
        now_s: f64,
    ) -> Option<&[u32]> {
        // Bytes left drain in step with the rates, which leaves them as they were: after
        // completions only the pairs that ended (and any tied with them) are filled again.
        self.refill.answer(fabric, pairs, lowered, rates, now_s)
    }
}
