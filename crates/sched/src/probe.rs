//! A scheduler that measures another: it decides exactly as the wrapped policy and records the
//! multi-tenant measures of every decision ([`tenant::metrics`](crate::tenant::metrics)). The
//! simulator runs it like any policy, so what is measured is the shipped code.

use crate::alloc::{Freed, TopUp};
use crate::machinery::Machinery;
use crate::pair_policy::PairPolicy;
use crate::tenant::metrics::{observe, Recorder, TenantMetrics};
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

pub struct Probe {
    inner: Box<dyn Scheduler>,
    recorder: Recorder,
}

impl Probe {
    pub fn new(inner: Box<dyn Scheduler>) -> Self {
        Probe {
            inner,
            recorder: Recorder::new(),
        }
    }

    /// The measures of every decision taken so far.
    pub fn finish(self) -> TenantMetrics {
        self.recorder.finish()
    }
}

impl Scheduler for Probe {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn clairvoyant(&self) -> bool {
        self.inner.clairvoyant()
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        let d = self.inner.allocate(snap, rates);
        self.recorder.push(observe(snap, rates));
        d
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.inner.on_flow_completion()
    }
}

impl Machinery for Probe {
    fn topup(&mut self) -> Option<&mut TopUp> {
        self.inner.topup()
    }

    /// Never a pair policy: the pair world does not decide per event, and every rate change
    /// should pass through `allocate` to be measured (same rates, up to float rounding).
    fn pair_policy(&mut self) -> Option<&mut dyn PairPolicy> {
        None
    }

    fn redistribute(&mut self, snap: &Snapshot, rates: &mut Rates, freed: &mut Freed) -> bool {
        self.inner.redistribute(snap, rates, freed)
    }
}
