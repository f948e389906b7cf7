//! HUG, DRF and PS-P as inter-coflow schedulers (issue 22): every active coflow is a tenant
//! whose correlation vector comes from MADD (its remaining bytes per uplink and downlink,
//! `tenant::madd`), the policy in `tenant` gives it a share of every port, and that share is
//! split among its flows in proportion to their remaining bytes; a flow gets the smaller of its
//! two ends' parts. Spare a coflow is allowed on a port it cannot use (its flows are held back
//! by their other end) stays idle: a MADD coflow gains nothing from it.
//!
//! A coflow whose sizes are unknown (non-clairvoyant: `remaining_bytes` infinite) counts each
//! unfinished flow as one unit of demand on its uplink and its downlink: the thesis' default
//! all-ones vector, per flow and on the links the coflow uses (docs/hug.md, choice 11).

use crate::machinery::Machinery;
use crate::tenant::{drf, hug, psp, HugOptions, Links, SparseSpec, Tenants};
use crate::{Decision, Rates, Scheduler, Snapshot};

/// Which allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenantPolicy {
    Hug(HugOptions),
    Drf,
    Psp,
}

#[derive(Debug)]
pub struct TenantShare {
    policy: TenantPolicy,
}

impl TenantShare {
    pub fn new(policy: TenantPolicy) -> Self {
        TenantShare { policy }
    }
}

impl Scheduler for TenantShare {
    fn name(&self) -> &str {
        match self.policy {
            TenantPolicy::Hug(_) => "hug",
            TenantPolicy::Drf => "drf",
            TenantPolicy::Psp => "psp",
        }
    }

    /// Vectors from MADD read the flows' remaining bytes.
    fn clairvoyant(&self) -> bool {
        true
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        let f = snap.fabric;
        let ports = f.ports();
        // Links need positive capacities; a dead port gets nothing either way.
        let caps: Vec<f64> = (f.up_bytes_per_s.iter().chain(&f.down_bytes_per_s))
            .map(|&c| c.max(f64::MIN_POSITIVE))
            .collect();
        let Ok(links) = Links::fabric(ports, caps.clone()) else {
            return Decision::none();
        };
        // Each coflow with bytes left: its bytes per link (the vector in capacity units).
        let mut members = Vec::new();
        let mut specs = Vec::new();
        let mut bytes = vec![0.0; 2 * ports];
        for (c, co) in snap.coflows.iter().enumerate() {
            let mut touched = Vec::new();
            for fl in co.flows.iter().filter(|fl| fl.remaining_bytes > 0.0) {
                for l in [fl.src as usize, ports + fl.dst as usize] {
                    if bytes[l] == 0.0 {
                        touched.push(l as u32);
                    }
                    bytes[l] += demand(fl.remaining_bytes);
                }
            }
            if touched.is_empty() {
                continue;
            }
            touched.sort_unstable();
            let entries = touched
                .iter()
                .map(|&l| (l, std::mem::take(&mut bytes[l as usize])))
                .collect();
            specs.push(SparseSpec {
                name: co.id.to_string(),
                entries,
                weight: if co.weight > 0.0 { co.weight } else { 1.0 },
                bounded: false,
            });
            members.push(c);
        }
        if specs.is_empty() {
            return Decision::none();
        }
        let Ok(t) = Tenants::from_sparse(links, &specs) else {
            return Decision::none();
        };
        let a = match self.policy {
            TenantPolicy::Hug(o) => hug(&t, o),
            TenantPolicy::Drf => drf(&t),
            TenantPolicy::Psp => psp(&t),
        };
        for (k, &c) in members.iter().enumerate() {
            // Bytes per second this coflow may move per byte it has left on each link.
            let mut per_byte = vec![0.0; 2 * ports];
            for ((&l, share), &(_, b)) in t.tenants[k]
                .links
                .iter()
                .zip(&a.consumption[k])
                .zip(&specs[k].entries)
            {
                per_byte[l as usize] = share * caps[l as usize] / b;
            }
            let co = &snap.coflows[c];
            for (r, fl) in rates.per_coflow[c].iter_mut().zip(&co.flows) {
                if fl.remaining_bytes > 0.0 {
                    let up = per_byte[fl.src as usize];
                    let down = per_byte[ports + fl.dst as usize];
                    *r = demand(fl.remaining_bytes) * up.min(down);
                }
            }
        }
        Decision::none()
    }
}

impl Machinery for TenantShare {}

/// A flow's demand: its remaining bytes, or one unit when they are unknown.
fn demand(remaining_bytes: f64) -> f64 {
    if remaining_bytes.is_finite() {
        remaining_bytes
    } else {
        1.0
    }
}
