//! Tenants that lie (§7.4, App. D): a policy allocates by the *reported* vectors, but what a
//! tenant gains is measured by its *true* vector. Elastic tenants consume whatever they are
//! allocated; inelastic ones only what their true vector can use at their true progress.

use super::error::TenantError;
use super::vector::{tenant, Tenant, TenantSpec, Tenants};

/// `t` with tenant `k` reporting `vector` instead (same name, weight and kind).
pub fn reporting(t: &Tenants, k: usize, vector: Vec<f64>) -> Result<Tenants, TenantError> {
    let old = &t.tenants[k];
    let spec = TenantSpec {
        name: old.name.clone(),
        vector,
        weight: old.weight,
        bounded: old.bound.is_some(),
    };
    let mut out = t.clone();
    out.tenants[k] = tenant(&t.links, &spec)?;
    Ok(out)
}

/// The share `x` (aligned with `reported.links`) gives on `link`.
fn on(reported: &Tenant, x: &[f64], link: u32) -> f64 {
    match reported.links.binary_search(&link) {
        Ok(j) => x[j],
        Err(_) => 0.0,
    }
}

/// A tenant's true progress: `min_i x^i / d^i` over the links its true vector uses, where
/// `x` is what it was given (aligned with its reported links).
pub fn true_progress(reported: &Tenant, x: &[f64], truth: &Tenant) -> f64 {
    truth
        .links
        .iter()
        .zip(&truth.d)
        .map(|(&l, d)| on(reported, x, l) / d)
        .fold(f64::INFINITY, f64::min)
}

/// What an inelastic tenant consumes of `x` per link (one entry per link of `n`): its true
/// progress times its true vector.
pub fn inelastic_use(reported: &Tenant, x: &[f64], truth: &Tenant, n: usize) -> Vec<f64> {
    let p = true_progress(reported, x, truth);
    let mut out = vec![0.0; n];
    for (&l, d) in truth.links.iter().zip(&truth.d) {
        out[l as usize] = p * d;
    }
    out
}
