//! What a multi-tenant policy exchanges with the world that runs it, beside the snapshot: the
//! correlation vectors tenants report (the thesis' public API, §7.6.1: "tenants push
//! correlation vectors"; read at every decision) and the last decision's guarantees and caps
//! per link (what the operator pushes to the machines for local enforcement). Shared by clones
//! so the coordinator's RPC handlers write reports while its brain decides.
//!
//! A separate board, not a field of `CoflowState`, keeps the shared snapshot (built by every
//! world and many tests) and the `Scheduler` trait unchanged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::tenant::vector::{Links, SparseSpec, Tenants};
use crate::tenant::TenantError;

/// A reported vector: `(link, demand)` with links ascending (uplink `p` is link `p`, downlink
/// `p` is link `ports + p`), demands in bytes (any unit, the same on every link), not normalized.
pub type Reported = Vec<(u32, f64)>;

/// One coflow's share of one link in the last decision, bytes per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkShare {
    pub link: u32,
    /// Stage 1's reservation `a_k^i`.
    pub guarantee_bytes_per_s: f64,
    /// The most it may use there: HUG's stage-2 cap (its share of its own bottleneck; the link
    /// for the cooperative variant), DRF's guarantee, PS-P's share.
    pub cap_bytes_per_s: f64,
    /// What the policy gave it there (stage 2 included).
    pub consumption_bytes_per_s: f64,
    /// The coflow's weight (stage 2 shares spare by weighted max-min).
    pub weight: f64,
}

/// The last decision of a tenant policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shares {
    /// The isolation guarantee per unit weight (Eq 7.2's P*, or multi-round DRF's level).
    pub p_star: f64,
    /// Per coflow id, its links (ascending).
    pub coflows: HashMap<u64, Vec<LinkShare>>,
}

#[derive(Debug, Default)]
struct Inner {
    reports: HashMap<u64, Reported>,
    shares: Shares,
}

/// The shared board (cheap to clone; clones see the same contents).
#[derive(Debug, Clone, Default)]
pub struct Board(Arc<Mutex<Inner>>);

impl Board {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record coflow `id`'s vector after checking it as HUG would read it on a fabric of
    /// `ports` ports with these `capacities` (2 x ports, bytes/s): entries finite, >= 0, not all
    /// zero, links in range and ascending, uplinks and downlinks summing to the same bytes.
    pub fn report(
        &self,
        id: u64,
        ports: usize,
        capacities: Vec<f64>,
        mut vector: Reported,
    ) -> Result<(), TenantError> {
        vector.sort_by_key(|e| e.0);
        let links = Links::fabric(ports, capacities)?;
        let spec = SparseSpec {
            name: format!("coflow {id}"),
            entries: vector.clone(),
            weight: 1.0,
            bounded: false,
        };
        Tenants::from_sparse(links, std::slice::from_ref(&spec))?;
        self.lock().reports.insert(id, vector);
        Ok(())
    }

    /// The coflow is gone: its report with it.
    pub fn forget(&self, id: u64) {
        self.lock().reports.remove(&id);
    }

    pub fn reported(&self, id: u64) -> Option<Reported> {
        self.lock().reports.get(&id).cloned()
    }

    /// Every report, for a decision (one lock).
    pub fn reports(&self) -> HashMap<u64, Reported> {
        self.lock().reports.clone()
    }

    pub fn set_shares(&self, shares: Shares) {
        self.lock().shares = shares;
    }

    pub fn shares(&self) -> Shares {
        self.lock().shares.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_checked_as_hug_reads_them() {
        let b = Board::default();
        let caps = vec![1.0; 4];
        assert!(b
            .report(1, 2, caps.clone(), vec![(0, 1.0), (3, 1.0)])
            .is_ok());
        assert_eq!(b.reported(1), Some(vec![(0, 1.0), (3, 1.0)]));
        let e = b.report(2, 2, caps.clone(), vec![(0, 1.0), (3, 2.0)]);
        assert!(matches!(e, Err(TenantError::Unbalanced { .. })), "{e:?}");
        let e = b.report(2, 2, caps.clone(), vec![(0, -1.0), (3, -1.0)]);
        assert!(matches!(e, Err(TenantError::BadEntry { .. })), "{e:?}");
        let e = b.report(2, 2, caps.clone(), vec![(0, 0.0), (2, 0.0)]);
        assert!(matches!(e, Err(TenantError::AllZero { .. })), "{e:?}");
        let e = b.report(2, 2, caps, vec![(0, 1.0), (4, 1.0)]);
        assert!(matches!(e, Err(TenantError::BadLink { .. })), "{e:?}");
        assert_eq!(b.reported(2), None);
        b.forget(1);
        assert!(b.reports().is_empty());
    }
}
