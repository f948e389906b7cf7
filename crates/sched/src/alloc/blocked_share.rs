//! The leftover share of blocked coflows: after the priority pass, the coflows it could not
//! serve (a port they need was full) split what is left among their flows, each flow getting
//! `min(up left / blocked flows on its uplink, down left / blocked flows on its downlink)`,
//! all shares computed from the same leftovers. This is the reference simulator's step for its
//! "skipped" coflows (CoflowSim's `updateRatesFairShare`, docs/coflowsim.md); it runs before
//! work conservation, so the leftovers of a coflow's non-bottleneck ports go to the coflows
//! behind it instead of to its own flows, which would end early without ending it sooner.

use super::Budget;
use crate::{CoflowState, Rates};

/// Share `budget`'s leftovers among the flows of `blocked` (indices of `coflows`) and take the
/// shares from `budget`. Flows with a full end get nothing and do not count.
pub fn share_among_blocked(
    blocked: &[usize],
    coflows: &[CoflowState],
    budget: &mut Budget,
    rates: &mut Rates,
) {
    if blocked.is_empty() {
        return;
    }
    let ports = budget.up.len();
    let (mut n_up, mut n_down) = (vec![0u32; ports], vec![0u32; ports]);
    for &i in blocked {
        for f in &coflows[i].flows {
            if budget.has_room(f.src, f.dst) {
                n_up[f.src as usize] += 1;
                n_down[f.dst as usize] += 1;
            }
        }
    }
    let mut shares = Vec::new();
    for &i in blocked {
        for (k, f) in coflows[i].flows.iter().enumerate() {
            if !budget.has_room(f.src, f.dst) {
                continue;
            }
            let up = budget.up[f.src as usize] / f64::from(n_up[f.src as usize]);
            let down = budget.down[f.dst as usize] / f64::from(n_down[f.dst as usize]);
            shares.push((i, k, up.min(down)));
        }
    }
    for (i, k, rate) in shares {
        let f = &coflows[i].flows[k];
        rates.per_coflow[i][k] += rate;
        budget.take(f.src, f.dst, rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Fabric;

    #[test]
    fn blocked_flows_split_each_port_by_count_and_take_the_tighter_end() {
        // 3 ports of 1 B/s; uplink 0 and downlink 2 have 0.5 left, the rest is free.
        let fabric = Fabric::uniform(3, 1.0);
        let mut budget = Budget::full(&fabric);
        budget.take(0, 2, 0.5);
        let a = CoflowState::of_flows(&[(0, 1, 5.0), (1, 2, 5.0)]);
        let b = CoflowState::of_flows(&[(0, 1, 5.0), (2, 0, 5.0)]);
        let coflows = vec![a, b];
        let mut rates = Rates::default();
        rates.reset(&coflows);
        share_among_blocked(&[0, 1], &coflows, &mut budget, &mut rates);
        // Uplink 0: 0.5 over two flows; downlink 1: 1 over two; so 0.25 each.
        assert_eq!(rates.per_coflow[0][0], 0.25);
        assert_eq!(rates.per_coflow[1][0], 0.25);
        // 1 -> 2: uplink 1 alone (1.0), downlink 2 has 0.5 left for one flow.
        assert_eq!(rates.per_coflow[0][1], 0.5);
        // 2 -> 0: both ends free and alone.
        assert_eq!(rates.per_coflow[1][1], 1.0);
        assert!(budget.up[0] <= budget.floor && budget.down[2] <= budget.floor);
        assert_eq!(budget.down[1], 0.5);
    }

    #[test]
    fn a_full_end_gets_nothing_and_does_not_dilute_the_others() {
        let fabric = Fabric::uniform(3, 1.0);
        let mut budget = Budget::full(&fabric);
        budget.take(0, 0, 1.0); // uplink 0 and downlink 0 full
        let c = CoflowState::of_flows(&[(0, 1, 5.0), (2, 1, 5.0), (1, 0, 5.0)]);
        let coflows = vec![c];
        let mut rates = Rates::default();
        rates.reset(&coflows);
        share_among_blocked(&[0], &coflows, &mut budget, &mut rates);
        assert_eq!(rates.per_coflow[0], vec![0.0, 1.0, 0.0]);
    }
}
