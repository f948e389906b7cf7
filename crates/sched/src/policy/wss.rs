//! `wss`: Orchestra's weighted shuffle scheduling. Every flow gets a share of its ports in
//! proportion to the bytes it has left, so the flows sharing a port finish together; with coupled
//! ports this is weighted max-min with weight = remaining bytes.

use crate::alloc::{fill_coflows, Budget, PairFill, Refill};
use crate::machinery::Machinery;
use crate::pair_policy::PairPolicy;
use crate::{Decision, PairShare, Rates, Scheduler, Snapshot};

#[derive(Debug, Default)]
pub struct Wss {
    budget: Budget,
    fill: PairFill,
    refill: Refill,
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
}

impl Machinery for Wss {
    fn pair_policy(&mut self) -> Option<&mut dyn PairPolicy> {
        Some(self)
    }
}

impl PairPolicy for Wss {
    fn share(&self) -> PairShare {
        PairShare::Remaining
    }

    fn refill(&mut self) -> &mut Refill {
        &mut self.refill
    }
}
