//! Stage 1 of HUG and the DRF baseline: the optimal isolation guarantee over all links.
//!
//! A tenant at level `λ` gets `a = λ·w·d`. Eq 7.2 is the closed form when every tenant is
//! elastic: all rise together until the most loaded link fills, `λ* = 1 / max_i Σ_k w_k d_k^i`.
//! Multi-round DRF (Parkes, Procaccia and Shah, EC 2012, Algorithm 1) keeps raising the tenants
//! that touch no full link, and stops a bounded tenant when it has its demand (`λ·w = bound`).
//! Vectors are normalized to a largest entry of 1, so `λ·w` is a tenant's dominant share.

use super::allocation::Allocation;
use super::vector::Tenants;

/// A link with less than this fraction left counts as full.
const FULL: f64 = 1e-12;

/// Eq 7.2 with weights: the level at which the most loaded link fills.
pub fn closed_form(t: &Tenants) -> f64 {
    let mut load = vec![0.0; t.links.len()];
    for tenant in &t.tenants {
        for (&l, &d) in tenant.links.iter().zip(&tenant.d) {
            load[l as usize] += tenant.weight * d;
        }
    }
    1.0 / load.iter().fold(0.0f64, |a, &b| a.max(b))
}

/// Multi-round DRF by progressive filling: every tenant's level (`a_k = λ_k w_k d_k`) and
/// whether it stopped at a full link (rather than at its bounded demand).
/// Cost: O(rounds · (links + entries of the tenants frozen)), rounds <= tenants.
pub fn progressive(t: &Tenants) -> (Vec<f64>, Vec<bool>) {
    let n = t.links.len();
    let mut fixed = vec![0.0; n]; // share taken by frozen tenants
    let mut rate = vec![0.0; n]; // Σ w·d of the rising tenants
    let mut rising = vec![0u32; n];
    for tenant in &t.tenants {
        for (&l, &d) in tenant.links.iter().zip(&tenant.d) {
            rate[l as usize] += tenant.weight * d;
            rising[l as usize] += 1;
        }
    }
    let mut live: Vec<u32> = (0..n as u32).filter(|&l| rising[l as usize] > 0).collect();
    let mut level = vec![f64::NAN; t.len()];
    let mut blocked = vec![false; t.len()];
    let mut open: Vec<usize> = (0..t.len()).collect();
    let mut full = vec![false; n];
    while !open.is_empty() {
        // The level at which the next link fills or the next bounded tenant is satisfied.
        let mut lambda = f64::INFINITY;
        for &l in &live {
            let l = l as usize;
            lambda = lambda.min((1.0 - fixed[l]) / rate[l]);
        }
        for &k in &open {
            if let Some(b) = satisfied_at(&t.tenants[k]) {
                lambda = lambda.min(b);
            }
        }
        let lambda = lambda.max(0.0);
        let edge = lambda * (1.0 + FULL);
        for &l in &live {
            let l = l as usize;
            full[l] = (1.0 - fixed[l]) / rate[l] <= edge;
        }
        open.retain(|&k| {
            let tenant = &t.tenants[k];
            let at_link = tenant.links.iter().any(|&l| full[l as usize]);
            let done = at_link || satisfied_at(tenant).is_some_and(|b| b <= edge);
            if done {
                blocked[k] = at_link;
                level[k] = satisfied_at(tenant).map_or(lambda, |b| lambda.min(b));
                for (&l, &d) in tenant.links.iter().zip(&tenant.d) {
                    let l = l as usize;
                    fixed[l] += level[k] * tenant.weight * d;
                    rate[l] -= tenant.weight * d;
                    rising[l] -= 1;
                }
            }
            !done
        });
        live.retain(|&l| rising[l as usize] > 0);
    }
    (level, blocked)
}

/// The level at which a bounded tenant has all it wants.
fn satisfied_at(t: &super::vector::Tenant) -> Option<f64> {
    t.bound.map(|b| b / t.weight)
}

/// The isolation guarantee of stage-1 levels: the lowest level of a tenant stopped by a full
/// link (a satisfied bounded tenant has all it asked for and does not count), or the lowest
/// level when every tenant is satisfied.
pub fn guarantee_level(levels: &[f64], blocked: &[bool]) -> f64 {
    let min = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::INFINITY, f64::min);
    let b = min(&mut levels
        .iter()
        .zip(blocked)
        .filter(|(_, &b)| b)
        .map(|(l, _)| *l));
    if b.is_finite() {
        b
    } else {
        min(&mut levels.iter().copied())
    }
}

/// DRF: the multi-round levels, each tenant consuming exactly its guarantee (DRF hands out no
/// spare).
pub fn drf(t: &Tenants) -> Allocation {
    let (levels, blocked) = progressive(t);
    let guarantee = guarantees(t, &levels);
    Allocation {
        p_star: guarantee_level(&levels, &blocked),
        consumption: guarantee.clone(),
        guarantee,
    }
}

/// `a_k = λ_k w_k d_k`.
pub fn guarantees(t: &Tenants, levels: &[f64]) -> Vec<Vec<f64>> {
    t.tenants
        .iter()
        .zip(levels)
        .map(|(tenant, &l)| tenant.d.iter().map(|d| l * tenant.weight * d).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenant::vector::{Links, TenantSpec};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn fig_7_1_drf_gives_two_thirds() {
        let t = Tenants::elastic(2, &[&[0.5, 1.0], &[1.0, 1.0 / 6.0]]).unwrap();
        assert!(close(closed_form(&t), 2.0 / 3.0));
        let a = drf(&t);
        assert!(close(a.p_star, 2.0 / 3.0));
        let want = [[1.0 / 3.0, 2.0 / 3.0], [2.0 / 3.0, 1.0 / 9.0]];
        for (got, want) in a.guarantee.iter().zip(want) {
            for (g, w) in got.iter().zip(want) {
                assert!(close(*g, w), "{:?}", a.guarantee);
            }
        }
        // 2/9 of link 2 idle: utilization (1 + 7/9) / 2 = 8/9 (O11).
        assert!(close(a.utilization(&t), 8.0 / 9.0));
    }

    #[test]
    fn multi_round_raises_tenants_off_the_bottleneck() {
        // A and B share link 0; C alone on link 1 goes on to fill it.
        let t = Tenants::elastic(2, &[&[1.0, 0.0], &[1.0, 0.0], &[0.0, 1.0]]).unwrap();
        assert!(close(closed_form(&t), 0.5));
        let (l, _) = progressive(&t);
        assert!(
            close(l[0], 0.5) && close(l[1], 0.5) && close(l[2], 1.0),
            "{l:?}"
        );
    }

    #[test]
    fn bounded_tenant_stops_at_its_demand_and_frees_the_rest() {
        // One link: a bounded tenant wanting 0.2 and two elastic ones: 0.2, 0.4, 0.4 (max-min).
        let specs = [
            TenantSpec::bounded("small", vec![0.2]),
            TenantSpec::elastic("x", vec![1.0]),
            TenantSpec::elastic("y", vec![1.0]),
        ];
        let t = Tenants::new(Links::unit(1).unwrap(), &specs).unwrap();
        let a = drf(&t);
        let got: Vec<f64> = a.consumption.iter().map(|c| c[0]).collect();
        assert!(
            close(got[0], 0.2) && close(got[1], 0.4) && close(got[2], 0.4),
            "{got:?}"
        );
        // Eq 7.2 alone would give each 1/3: the small tenant could not use its third.
        assert!(
            close(a.p_star, 0.4),
            "the small tenant's level is 1 (satisfied)"
        );
    }

    #[test]
    fn weights_scale_levels() {
        let specs = [
            TenantSpec::elastic("heavy", vec![1.0]).with_weight(3.0),
            TenantSpec::elastic("light", vec![1.0]),
        ];
        let t = Tenants::new(Links::unit(1).unwrap(), &specs).unwrap();
        let a = drf(&t);
        assert!(close(a.consumption[0][0], 0.75) && close(a.consumption[1][0], 0.25));
        assert!(close(a.p_star, 0.25) && close(closed_form(&t), 0.25));
    }
}
