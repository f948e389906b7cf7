//! The naive work-conserving policies of §7.4 and App. D.2: DRF's guarantees (Eq 7.2), then
//! every link's spare handed out by a rule that ignores how it could be abused. They exist to
//! show what HUG prevents: under each a tenant gains by lying.

use super::allocation::Allocation;
use super::drf::{closed_form, guarantees};
use super::vector::Tenants;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpareRule {
    /// All of it to the tenant reporting the highest demand on the link (Fig 7.4, Lemma D.2.6).
    HighestDemand,
    /// All of it to the tenant reporting the least non-zero demand (Lemma D.2.4).
    LeastDemand,
    /// All of it to the least demand counting zero: a tenant that does not use the link may
    /// get it and waste it (Lemma D.2.3).
    LeastDemandWithZero,
    /// Split equally among the link's tenants (Lemma D.2.8).
    Equal,
    /// Split in proportion to the reported demands (Lemma D.2.9).
    Proportional,
}

/// Eq 7.2's guarantees plus the whole spare of every link by `rule`. Ties split equally.
pub fn naive(t: &Tenants, rule: SpareRule) -> Allocation {
    let p = closed_form(t);
    let guarantee = guarantees(t, &vec![p; t.len()]);
    let mut consumption = guarantee.clone();
    for on in t.by_link() {
        let used: f64 = on
            .iter()
            .map(|&(k, j)| guarantee[k as usize][j as usize])
            .sum();
        let spare = (1.0 - used).max(0.0);
        if on.is_empty() || spare == 0.0 {
            continue;
        }
        let weights: Vec<f64> = on
            .iter()
            .map(|&(k, j)| t.tenants[k as usize].d[j as usize])
            .collect();
        let pick = |target: f64| -> Vec<f64> {
            let hit = |w: f64| (w - target).abs() <= 1e-12 * target.max(1.0);
            let n = weights.iter().filter(|&&w| hit(w)).count() as f64;
            weights
                .iter()
                .map(|&w| if hit(w) { 1.0 / n } else { 0.0 })
                .collect()
        };
        let min = weights.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        let share: Vec<f64> = match rule {
            SpareRule::HighestDemand => pick(weights.iter().fold(0.0, |a, &b| a.max(b))),
            SpareRule::LeastDemand => pick(min),
            SpareRule::LeastDemandWithZero => {
                if on.len() < t.len() {
                    continue; // a tenant with zero demand here wins it and cannot use it
                }
                pick(min)
            }
            SpareRule::Equal => vec![1.0 / on.len() as f64; on.len()],
            SpareRule::Proportional => {
                let sum: f64 = weights.iter().sum();
                weights.iter().map(|w| w / sum).collect()
            }
        };
        for (&(k, j), s) in on.iter().zip(share) {
            consumption[k as usize][j as usize] += s * spare;
        }
    }
    Allocation {
        p_star: p,
        guarantee,
        consumption,
    }
}
