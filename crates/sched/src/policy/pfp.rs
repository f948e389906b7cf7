//! `pfp`: per-flow prioritization, the pFabric/PDQ proxy of the Varys evaluation: shortest
//! remaining flow first (SRTF), earliest deadline first when flows have deadlines; each flow in
//! that order takes all its two ports have left.
//!
//! Only the best flow of each (uplink, downlink) pair can get any rate: it takes all that one of
//! the pair's two ports has left, so every later flow of the pair finds that port full. So one
//! pass keeps each pair's best flow, and only those heads are sorted.

use crate::alloc::Budget;
use crate::{Decision, Rates, Scheduler, Snapshot};

/// Priority key: deadline, remaining bytes, then (coflow position (arrival order), flow
/// position). Times and sizes are non-negative, and the bits of a non-negative float order as
/// the float does: plain integers sort several times faster than float comparisons, and the
/// sort of the pairs' heads on every decision is nearly all of this policy's cost.
type Key = (u64, u64, u64);

fn key(deadline: f64, remaining: f64, ci: usize, fi: usize) -> Key {
    (
        bits(deadline),
        bits(remaining),
        (ci as u64) << 32 | fi as u64,
    )
}

/// Order-preserving bits of a float that is non-negative, or else taken as 0.
fn bits(x: f64) -> u64 {
    if x > 0.0 {
        x.to_bits()
    } else {
        0
    }
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
                let key = key(deadline, f.remaining_bytes, ci, fi);
                let s = &mut self.slot[f.src as usize * ports + f.dst as usize];
                if *s == u32::MAX {
                    *s = self.heads.len() as u32;
                    self.heads.push(key);
                } else if key < self.heads[*s as usize] {
                    self.heads[*s as usize] = key;
                }
            }
        }
        self.heads.sort_unstable(); // keys are unique
        for &(_, _, at) in &self.heads {
            let (ci, fi) = ((at >> 32) as usize, at as u32 as usize);
            let f = snap.coflows[ci].flows[fi];
            self.slot[f.src as usize * ports + f.dst as usize] = u32::MAX;
            let r = self.budget.headroom(f.src, f.dst);
            if r > self.budget.floor {
                rates.per_coflow[ci][fi] = r;
                self.budget.take(f.src, f.dst, r);
            }
        }
        Decision::none()
    }
}
