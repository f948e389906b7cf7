//! HUG, Algorithm 6: stage 1 reserves the optimal isolation guarantee (`a_k = P*·w_k·d_k`,
//! DRF over all links); stage 2 shares each link's spare by local max-min. Non-cooperative
//! (public clouds, the default) caps every tenant on every link at its share of its own
//! bottleneck, `c_k^i <= max_j a_k^j` (= P* for unit weights and elastic vectors, the thesis'
//! `c <= P*`), which is what keeps lying useless (Lemma D.3.1, Theorem D.3.3). Cooperative
//! (private datacenters) drops the caps and is work-conserving.

use super::allocation::Allocation;
use super::drf::{closed_form, guarantee_level, guarantees, progressive};
use super::spare::{fill_link, Part};
use super::vector::Tenants;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Spare capacity under the per-tenant cap: strategy-proof.
    #[default]
    NonCooperative,
    /// Spare capacity by max-min without caps: work-conserving, not strategy-proof.
    Cooperative,
}

/// How stage 1 finds the guarantees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage1 {
    /// As the thesis: Eq 7.2 when every tenant is elastic, multi-round DRF when one is bounded.
    #[default]
    Auto,
    /// Eq 7.2 always (bounded tenants stopped at their demand, the rest left unused).
    ClosedForm,
    /// Multi-round DRF always: tenants off the most loaded link keep rising, so stage 1 is
    /// Pareto-efficient even for elastic tenants.
    MultiRound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HugOptions {
    pub mode: Mode,
    pub stage1: Stage1,
}

/// Stage 1: each tenant's level and the isolation guarantee P*.
pub fn stage1(t: &Tenants, how: Stage1) -> (Vec<f64>, f64) {
    let all_elastic = t.tenants.iter().all(|x| x.bound.is_none());
    let closed = match how {
        Stage1::Auto => all_elastic,
        Stage1::ClosedForm => true,
        Stage1::MultiRound => false,
    };
    if closed {
        let p = closed_form(t);
        let levels = t
            .tenants
            .iter()
            .map(|x| x.bound.map_or(p, |b| p.min(b / x.weight)))
            .collect();
        (levels, p)
    } else {
        let (levels, blocked) = progressive(t);
        let p = guarantee_level(&levels, &blocked);
        (levels, p)
    }
}

/// Algorithm 6.
pub fn hug(t: &Tenants, opts: HugOptions) -> Allocation {
    let (levels, p_star) = stage1(t, opts.stage1);
    let guarantee = guarantees(t, &levels);
    let caps: Vec<f64> = t
        .tenants
        .iter()
        .zip(&levels)
        .map(|(x, l)| match opts.mode {
            // The largest guaranteed share: on the tenant's bottleneck, where d = 1.
            Mode::NonCooperative => l * x.weight,
            Mode::Cooperative => f64::INFINITY,
        })
        .collect();
    let consumption = share_links(t, &guarantee, |k, j| {
        let x = &t.tenants[k];
        let want = x.bound.map_or(f64::INFINITY, |b| b * x.d[j]);
        caps[k].min(want)
    });
    Allocation {
        p_star,
        guarantee,
        consumption,
    }
}

/// Each link's capacity (1: everything is a fraction) shared by [`fill_link`] with the
/// tenants' `floors` and `ceil(tenant, index into its links)`.
///
/// Laid out for large fabrics: one pass over the tenants (in their order) writes every entry's
/// part into its link's slot (a counting sort), the links are filled from contiguous slices,
/// and one pass writes the results back. Walking links and reaching into each tenant's own
/// vectors instead costs a cache miss per access once the tenants outgrow the cache.
pub(crate) fn share_links(
    t: &Tenants,
    floors: &[Vec<f64>],
    ceil: impl Fn(usize, usize) -> f64,
) -> Vec<Vec<f64>> {
    let n = t.links.len();
    let mut start = vec![0u32; n + 1];
    for x in &t.tenants {
        for &l in &x.links {
            start[l as usize + 1] += 1;
        }
    }
    for l in 0..n {
        start[l + 1] += start[l];
    }
    let entries = start[n] as usize;
    let mut next = start.clone();
    let mut parts = vec![
        Part {
            floor: 0.0,
            ceil: 0.0,
            weight: 0.0
        };
        entries
    ];
    let mut slot_of = Vec::with_capacity(entries); // entry (tenant-major) -> slot
    for (k, x) in t.tenants.iter().enumerate() {
        for (j, &l) in x.links.iter().enumerate() {
            let s = next[l as usize] as usize;
            next[l as usize] += 1;
            parts[s] = Part {
                floor: floors[k][j],
                ceil: ceil(k, j).max(floors[k][j]),
                weight: x.weight,
            };
            slot_of.push(s as u32);
        }
    }
    let mut got = vec![0.0; entries];
    let mut events = Vec::new();
    for l in 0..n {
        let (a, b) = (start[l] as usize, start[l + 1] as usize);
        if a < b {
            fill_link(&parts[a..b], 1.0, &mut got[a..b], &mut events);
        }
    }
    let mut e = 0;
    t.tenants
        .iter()
        .map(|x| {
            let slots = &slot_of[e..e + x.links.len()];
            e += x.links.len();
            slots.iter().map(|&s| got[s as usize]).collect()
        })
        .collect()
}
