//! `pfp`: per-flow prioritization, the pFabric/PDQ proxy of the Varys evaluation: shortest
//! remaining flow first (SRTF), earliest deadline first when flows have deadlines; each flow in
//! that order takes all its two ports have left.
//!
//! Only the best flow of each (uplink, downlink) pair can get any rate: it takes all that one of
//! the pair's two ports has left, so every later flow of the pair finds that port full. So one
//! pass keeps each pair's best flow, and only those heads are sorted.

use crate::alloc::Budget;
use crate::{Decision, Rates, Scheduler, Snapshot};

/// Priority key: deadline, remaining bytes, coflow position (arrival order), flow position.
type Key = (f64, f64, u32, u32);

fn before(a: &Key, b: &Key) -> bool {
    a.0.total_cmp(&b.0)
        .then(a.1.total_cmp(&b.1))
        .then(a.2.cmp(&b.2))
        .then(a.3.cmp(&b.3))
        .is_lt()
}

#[derive(Debug, Default)]
pub struct Pfp {
    budget: Budget,
    /// `head[src * ports + dst]`: index into `heads`, or `u32::MAX`.
    slot: Vec<u32>,
    heads: Vec<Key>,
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
        let ports = snap.fabric.ports();
        if self.slot.len() != ports * ports {
            self.slot = vec![u32::MAX; ports * ports];
        }
        self.heads.clear();
        for (ci, c) in snap.coflows.iter().enumerate() {
            let deadline = c.deadline_s.unwrap_or(f64::INFINITY);
            for (fi, f) in c.flows.iter().enumerate() {
                let key = (deadline, f.remaining_bytes, ci as u32, fi as u32);
                let s = &mut self.slot[f.src as usize * ports + f.dst as usize];
                if *s == u32::MAX {
                    *s = self.heads.len() as u32;
                    self.heads.push(key);
                } else if before(&key, &self.heads[*s as usize]) {
                    self.heads[*s as usize] = key;
                }
            }
        }
        self.heads.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        for &(_, _, ci, fi) in &self.heads {
            let f = snap.coflows[ci as usize].flows[fi as usize];
            self.slot[f.src as usize * ports + f.dst as usize] = u32::MAX;
            let r = self.budget.headroom(f.src, f.dst);
            if r > self.budget.floor {
                rates.per_coflow[ci as usize][fi as usize] = r;
                self.budget.take(f.src, f.dst, r);
            }
        }
        Decision::none()
    }
}
