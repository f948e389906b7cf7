//! What an allocation policy gives each tenant, and the measures of §7.3.2 over it.

use super::vector::{Tenant, Tenants};

/// Per tenant, aligned with its [`Tenant::links`]: the guaranteed share `a` and the share it
/// ends up consuming `c` (elastic tenants use all they are allowed), as fractions of each
/// link's capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// The isolation guarantee per unit of weight: Eq 7.2's P* (the minimum progress) when
    /// every weight is 1.
    pub p_star: f64,
    pub guarantee: Vec<Vec<f64>>,
    pub consumption: Vec<Vec<f64>>,
}

impl Allocation {
    /// Tenant `k`'s progress (its minimum demand-normalized consumption, §7.3.2) by its
    /// reported vector.
    pub fn progress(&self, t: &Tenants, k: usize) -> f64 {
        progress_of(&t.tenants[k].d, &self.consumption[k])
    }

    /// The lowest progress of any tenant.
    pub fn isolation_guarantee(&self, t: &Tenants) -> f64 {
        (0..t.len())
            .map(|k| self.progress(t, k))
            .fold(f64::INFINITY, f64::min)
    }

    /// Each link's consumed fraction.
    pub fn link_use(&self, t: &Tenants) -> Vec<f64> {
        let mut u = vec![0.0; t.links.len()];
        for (tenant, c) in t.tenants.iter().zip(&self.consumption) {
            for (&l, &x) in tenant.links.iter().zip(c) {
                u[l as usize] += x;
            }
        }
        u
    }

    /// The consumed fraction of all capacity (Table 7.1's utilization over the total).
    /// Capacities are scaled by the largest first, so capacities whose sum passes f64's range
    /// (two of 1e308) still give a finite answer (it was inf / inf, NaN).
    pub fn utilization(&self, t: &Tenants) -> f64 {
        let caps = t.links.capacities();
        let top = caps.iter().copied().fold(0.0, f64::max);
        if top.is_nan() || top <= 0.0 {
            return 0.0;
        }
        let used: f64 = (self.link_use(t).iter().zip(caps))
            .map(|(u, c)| u * (c / top))
            .sum();
        used / caps.iter().map(|c| c / top).sum::<f64>()
    }

    /// Tenant `k`'s guarantee with one entry per link.
    pub fn dense_guarantee(&self, t: &Tenants, k: usize) -> Vec<f64> {
        dense(&t.tenants[k], &self.guarantee[k], t.links.len())
    }

    /// Tenant `k`'s consumption with one entry per link.
    pub fn dense_consumption(&self, t: &Tenants, k: usize) -> Vec<f64> {
        dense(&t.tenants[k], &self.consumption[k], t.links.len())
    }
}

/// `min_i x_i / d_i` over a tenant's links.
pub fn progress_of(d: &[f64], x: &[f64]) -> f64 {
    d.iter()
        .zip(x)
        .map(|(d, x)| x / d)
        .fold(f64::INFINITY, f64::min)
}

fn dense(t: &Tenant, x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n];
    for (&l, &v) in t.links.iter().zip(x) {
        out[l as usize] = v;
    }
    out
}
