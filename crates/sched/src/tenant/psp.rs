//! PS-P (FairCloud; EyeQ and ElasticSwitch alike, §7.4.1): every link split among the tenants
//! that use it, by weight, whatever their vectors say beyond "uses it"; work conservation
//! hands a bounded tenant's unused part to the others on that link.

use super::allocation::Allocation;
use super::hug::share_links;
use super::vector::Tenants;

/// The guarantee is the weighted equal split; the consumption the work-conserving one.
pub fn psp(t: &Tenants) -> Allocation {
    let n = t.links.len();
    let mut weight_on = vec![0.0; n];
    for x in &t.tenants {
        for &l in &x.links {
            weight_on[l as usize] += x.weight;
        }
    }
    let guarantee: Vec<Vec<f64>> = t
        .tenants
        .iter()
        .map(|x| {
            x.links
                .iter()
                .map(|&l| x.weight / weight_on[l as usize])
                .collect()
        })
        .collect();
    let zero: Vec<Vec<f64>> = guarantee.iter().map(|g| vec![0.0; g.len()]).collect();
    let consumption = share_links(t, &zero, |k, j| {
        let x = &t.tenants[k];
        x.bound.map_or(f64::INFINITY, |b| b * x.d[j])
    });
    let p_star = (0..t.len())
        .map(|k| {
            let x = &t.tenants[k];
            super::allocation::progress_of(&x.d, &guarantee[k]) / x.weight
        })
        .fold(f64::INFINITY, f64::min);
    Allocation {
        p_star,
        guarantee,
        consumption,
    }
}
