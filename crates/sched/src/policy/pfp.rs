//! `pfp`: per-flow prioritization, the pFabric/PDQ proxy of the Varys evaluation: shortest
//! remaining flow first (SRTF), earliest deadline first when flows have deadlines; each flow in
//! that order takes all its two ports have left.

use crate::alloc::Budget;
use crate::{Decision, Rates, Scheduler, Snapshot};

#[derive(Debug, Default)]
pub struct Pfp {
    budget: Budget,
    order: Vec<(f64, f64, u32, u32)>,
}

impl Scheduler for Pfp {
    fn name(&self) -> &str {
        "pfp"
    }

    fn clairvoyant(&self) -> bool {
        true
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        self.budget.reset(snap.fabric);
        self.order.clear();
        for (ci, c) in snap.coflows.iter().enumerate() {
            let deadline = c.deadline_s.unwrap_or(f64::INFINITY);
            for (fi, f) in c.flows.iter().enumerate() {
                self.order
                    .push((deadline, f.remaining_bytes, ci as u32, fi as u32));
            }
        }
        // Ties go to the earlier coflow (snapshot order is arrival order), then flow order.
        self.order.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        for &(_, _, ci, fi) in &self.order {
            let f = snap.coflows[ci as usize].flows[fi as usize];
            let r = self.budget.headroom(f.src, f.dst);
            if r > self.budget.floor {
                rates.per_coflow[ci as usize][fi as usize] = r;
                self.budget.take(f.src, f.dst, r);
            }
        }
        Decision::none()
    }
}
