//! HUG's local enforcement on a daemon (coflow thesis §7.6.1): the coordinator pushes P* and,
//! for this host's uplink, every coflow's reservation (`guarantee`) and `cap`; the daemon keeps
//! each coflow's sending rate within them. With `local` it shares the NIC itself, by local
//! max-min among the coflows sending here, each at least its guarantee and at most its cap
//! (`tenant::spare::fill_link`, the very fill of HUG's stage 2), and splits a coflow's share
//! among its flows here by max-min; the coordinator's rate for such a flow is its ceiling (its
//! part of the coflow's cap on the flow's downlink, coordinator/tenant_caps.rs, at most the
//! NIC), so a coflow never takes more here than its flows' downlinks allow. Without `local`
//! the coordinator's per-flow rates stand and only a coflow whose rates sum past its cap is
//! scaled down to it, in proportion.

use std::collections::HashMap;

use coflowkit_sched::tenant::spare::{fill_link, Part};

use crate::proto::TenantCaps;

/// The rate of every flow, given as `(coflow, the coordinator's rate)`, on a NIC of `nic`
/// bytes/s under `caps`.
pub fn pace(flows: &[(u64, f64)], caps: &TenantCaps, nic: f64) -> Vec<f64> {
    let mut rates: Vec<f64> = flows.iter().map(|f| f.1).collect();
    // Per capped coflow: (guarantee, cap, weight).
    let capped: HashMap<u64, (f64, f64, f64)> = (caps.coflows.iter())
        .map(|c| {
            let g = c.guarantee_bytes_per_s.max(0.0);
            let w = if c.weight > 0.0 && c.weight.is_finite() {
                c.weight
            } else {
                1.0
            };
            (c.coflow, (g, c.cap_bytes_per_s.max(g), w))
        })
        .collect();
    // Coflows with a cap that send here, in first-flow order: (id, its coordinator rates' sum).
    let mut here: Vec<(u64, f64)> = Vec::new();
    for &(c, r) in flows {
        if capped.contains_key(&c) {
            match here.iter_mut().find(|h| h.0 == c) {
                Some(h) => h.1 += r,
                None => here.push((c, r)),
            }
        }
    }
    let share: Vec<f64> = if caps.local {
        let others: f64 = (flows.iter())
            .filter(|f| !capped.contains_key(&f.0))
            .map(|f| f.1)
            .sum();
        // A coflow's ceiling here: its cap, and no more than its flows' downlink parts.
        let parts: Vec<Part> = (here.iter())
            .map(|h| {
                let (floor, ceil, weight) = capped[&h.0];
                let ceil = ceil.min(h.1.max(0.0));
                Part {
                    floor: floor.min(ceil),
                    ceil,
                    weight,
                }
            })
            .collect();
        let mut out = vec![0.0; parts.len()];
        fill_link(&parts, (nic - others).max(0.0), &mut out, &mut Vec::new());
        out
    } else {
        (here.iter()).map(|h| h.1.min(capped[&h.0].1)).collect()
    };
    for ((c, sum), s) in here.iter().zip(share) {
        let mine: Vec<usize> = (0..flows.len()).filter(|&i| flows[i].0 == *c).collect();
        if caps.local {
            // Max-min among its flows, each under its ceiling (the coordinator's rate).
            let ceils: Vec<f64> = mine.iter().map(|&i| flows[i].1.max(0.0)).collect();
            for (&i, r) in mine.iter().zip(max_min(&ceils, s)) {
                rates[i] = r;
            }
            continue;
        }
        for &i in &mine {
            rates[i] = if *sum > 0.0 {
                s * flows[i].1 / sum
            } else {
                s / mine.len() as f64
            };
        }
    }
    rates
}

/// `total` shared by max-min among flows with these ceilings.
fn max_min(ceils: &[f64], total: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..ceils.len()).collect();
    order.sort_by(|&a, &b| ceils[a].total_cmp(&ceils[b]));
    let mut out = vec![0.0; ceils.len()];
    let mut left = total.max(0.0);
    for (k, &i) in order.iter().enumerate() {
        let r = ceils[i].min(left / (order.len() - k) as f64);
        out[i] = r;
        left -= r;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::CoflowCap;

    fn caps(local: bool, cs: &[(u64, f64, f64)]) -> TenantCaps {
        TenantCaps {
            p_star: 0.4,
            local,
            coflows: (cs.iter())
                .map(|&(coflow, g, c)| CoflowCap {
                    coflow,
                    guarantee_bytes_per_s: g,
                    cap_bytes_per_s: c,
                    weight: 0.0,
                })
                .collect(),
        }
    }

    fn close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-9, "got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn local_max_min_between_guarantees_and_caps() {
        // App. D.2's link 2 (capacity 1): A guaranteed 2/5, B 1/15, both capped at 2/5, C has
        // no demand there. Spare 8/15: A is at its cap, B rises to its cap, 1/5 stays idle.
        let c = caps(true, &[(1, 0.4, 0.4), (2, 1.0 / 15.0, 0.4)]);
        close(&pace(&[(1, 1.0), (2, 1.0)], &c, 1.0), &[0.4, 0.4]);
        // B's two flows split its share equally (both listed at the NIC); an uncapped flow
        // keeps its rate and takes its part of the NIC first.
        let got = pace(&[(2, 1.0), (1, 1.0), (2, 1.0), (9, 0.1)], &c, 1.0);
        close(&got, &[0.2, 0.4, 0.2, 0.1]);
        // Little room left by uncapped flows: the guarantees still hold (floors first).
        let got = pace(&[(1, 1.0), (2, 1.0), (9, 0.9)], &c, 1.0);
        close(&got, &[0.4, 1.0 / 15.0, 0.9]);
        // Caps above the NIC: local max-min with the guarantees as floors.
        let c = caps(true, &[(1, 0.1, 1.0), (2, 0.1, 1.0), (3, 0.6, 1.0)]);
        close(
            &pace(&[(1, 1.0), (2, 1.0), (3, 1.0)], &c, 1.0),
            &[0.2, 0.2, 0.6],
        );
        // Weighted: coflow 2 of weight 3 takes three times coflow 1's part of the spare.
        let mut c = caps(true, &[(1, 0.0, 1.0), (2, 0.0, 1.0)]);
        c.coflows[1].weight = 3.0;
        close(&pace(&[(1, 1.0), (2, 1.0)], &c, 1.0), &[0.25, 0.75]);
    }

    #[test]
    fn local_keeps_each_flow_under_its_downlink_part() {
        // A coflow guaranteed 1/3 and capped at 2/3 whose only flow here may take 1/3 of its
        // receiver's downlink (coordinator/tenant_caps.rs): 1/3, the rest of the NIC idle.
        let c = caps(true, &[(1, 1.0 / 3.0, 2.0 / 3.0)]);
        close(&pace(&[(1, 1.0 / 3.0)], &c, 1.0), &[1.0 / 3.0]);
        // Two flows of one coflow with ceilings 0.1 and 1 share its 0.5 by max-min.
        let c = caps(true, &[(1, 0.5, 0.5)]);
        close(&pace(&[(1, 0.1), (1, 1.0)], &c, 1.0), &[0.1, 0.4]);
        // What a downlink-held coflow leaves, the other coflow takes (up to its cap): coflow 1
        // (floor 0.2, cap 0.6) held at 0.1 by its receiver, coflow 2 (floor 0.2, cap 1) 0.9.
        let c = caps(true, &[(1, 0.2, 0.6), (2, 0.2, 1.0)]);
        close(&pace(&[(1, 0.1), (2, 1.0)], &c, 1.0), &[0.1, 0.9]);
        // A flow listed at 0 (the coordinator gives it nothing, or none assigned yet) waits.
        close(&pace(&[(2, 0.0), (2, 1.0)], &c, 1.0), &[0.0, 1.0]);
    }

    #[test]
    fn without_local_the_coordinator_rates_stand_under_the_caps() {
        let c = caps(false, &[(1, 0.2, 0.4)]);
        // Within the cap: untouched; past it (0.3 + 0.3): scaled to 0.4; uncapped coflow 2 kept.
        close(
            &pace(&[(1, 0.1), (1, 0.2), (2, 0.9)], &c, 1.0),
            &[0.1, 0.2, 0.9],
        );
        close(
            &pace(&[(1, 0.3), (1, 0.3), (2, 0.9)], &c, 1.0),
            &[0.2, 0.2, 0.9],
        );
    }
}
