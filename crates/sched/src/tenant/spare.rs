//! Local max-min on one link (§7.6.1, "local enforcement"): every tenant keeps its floor, the
//! rest of the link is shared by weighted max-min fairness, and nobody passes its ceiling.
//! HUG's stage 2 (floors = guarantees, ceilings = caps), the cooperative variant (no caps) and
//! PS-P (no floors) are all this one fill.

/// One tenant on the link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    pub floor: f64,
    /// `f64::INFINITY` for no ceiling.
    pub ceil: f64,
    pub weight: f64,
}

/// Writes `out[k] = clamp(w_k θ, floor_k, ceil_k)` for the largest `θ` that keeps the sum
/// within `cap` (everyone at its ceiling if that fits; floors alone if they already fill it).
/// `events` is scratch. Cost O(n log n).
pub fn fill_link(parts: &[Part], cap: f64, out: &mut [f64], events: &mut Vec<(f64, f64)>) {
    let floors: f64 = parts.iter().map(|p| p.floor).sum();
    if floors >= cap {
        for (o, p) in out.iter_mut().zip(parts) {
            *o = p.floor;
        }
        return;
    }
    // g(θ) = Σ clamp(w θ, f, u) is piecewise linear: a part adds slope w between f/w and u/w.
    events.clear();
    for p in parts {
        events.push((p.floor / p.weight, p.weight));
        if p.ceil.is_finite() {
            events.push((p.ceil / p.weight, -p.weight));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut theta, mut g, mut slope) = (0.0, floors, 0.0);
    let mut level = f64::INFINITY;
    for &(at, ds) in events.iter() {
        let next = g + slope * (at - theta);
        if next >= cap {
            level = theta + (cap - g) / slope;
            break;
        }
        (theta, g) = (at, next);
        slope += ds;
    }
    if level.is_infinite() && slope > 0.0 {
        level = theta + (cap - g) / slope;
    }
    for (o, p) in out.iter_mut().zip(parts) {
        *o = (p.weight * level).clamp(p.floor, p.ceil);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(parts: &[Part], cap: f64) -> Vec<f64> {
        let mut out = vec![0.0; parts.len()];
        fill_link(parts, cap, &mut out, &mut Vec::new());
        out
    }

    fn part(floor: f64, ceil: f64) -> Part {
        Part {
            floor,
            ceil,
            weight: 1.0,
        }
    }

    #[test]
    fn floors_then_max_min_under_ceilings() {
        // Fig 7.7's link 2: A at 2/3 (its cap), B from 1/9 up to its cap 2/3: B takes the 2/9.
        let c = fill(
            &[part(2.0 / 3.0, 2.0 / 3.0), part(1.0 / 9.0, 2.0 / 3.0)],
            1.0,
        );
        assert!((c[0] - 2.0 / 3.0).abs() < 1e-12 && (c[1] - 1.0 / 3.0).abs() < 1e-12);
        // Without ceilings the low one catches up, then both rise.
        let c = fill(
            &[part(0.4, f64::INFINITY), part(1.0 / 15.0, f64::INFINITY)],
            1.0,
        );
        assert!(
            (c[0] - 0.5).abs() < 1e-12 && (c[1] - 0.5).abs() < 1e-12,
            "{c:?}"
        );
        // Ceilings that do not fill the link leave it partly idle.
        let c = fill(&[part(0.1, 0.2), part(0.0, 0.3)], 1.0);
        assert_eq!(c, vec![0.2, 0.3]);
        // Weighted: 3:1.
        let w = |weight| Part {
            floor: 0.0,
            ceil: f64::INFINITY,
            weight,
        };
        let c = fill(&[w(3.0), w(1.0)], 1.0);
        assert!((c[0] - 0.75).abs() < 1e-12 && (c[1] - 0.25).abs() < 1e-12);
    }
}
