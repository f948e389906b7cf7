//! The scan GSS and PGSS share: evaluate each candidate in the given order and keep the first
//! one whose utilization is strictly greater than every earlier one (Algorithm 1, lines 3-7).
//! Callers shuffle the order first (§3.5), so every maximizer has a chance.

use super::bandwidth::Bandwidth;

/// The first-hit maximizer of `utilization(pattern + (c -> dst))` over `order` (non-empty).
pub(crate) fn first_best(
    bw: &mut Bandwidth,
    pattern: &[(u32, u32)],
    dst: u32,
    order: &[u32],
    tolerance: f64,
) -> u32 {
    let mut best = order[0];
    if order.len() == 1 {
        // The only candidate wins whatever its utilization: no evaluation (each costs O(F),
        // F the flows of the whole cluster's pattern).
        return best;
    }
    let mut best_util = f64::NEG_INFINITY;
    for &c in order {
        let util = bw.total(pattern, &[(c, dst)]);
        if util > best_util + tolerance {
            best_util = util;
            best = c;
        }
    }
    best
}
