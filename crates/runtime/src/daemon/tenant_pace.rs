//! HUG's local enforcement on a daemon (coflow thesis §7.6.1): the coordinator pushes P* and,
//! for this host's uplink, every coflow's reservation (`guarantee`) and `cap`; the daemon keeps
//! each coflow's sending rate within them. With `local` it shares the NIC itself, by local
//! max-min among the coflows sending here, each at least its guarantee and at most its cap
//! (`tenant::spare::fill_link`, the very fill of HUG's stage 2), and splits a coflow's share
//! equally among its flows here (the coordinator's rates for them are ignored: it lists them
//! unpaced); without `local` the coordinator's per-flow rates stand and only a coflow whose
//! rates sum past its cap is scaled down to it, in proportion.

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
        let parts: Vec<Part> = (here.iter())
            .map(|h| {
                let (floor, ceil, weight) = capped[&h.0];
                Part {
                    floor,
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
        for &i in &mine {
            rates[i] = if !caps.local && *sum > 0.0 {
                s * flows[i].1 / sum
            } else {
                s / mine.len() as f64
            };
        }
    }
    rates
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
        close(&pace(&[(1, 0.0), (2, 0.0)], &c, 1.0), &[0.4, 0.4]);
        // B's two flows split its share equally whatever the coordinator listed; an uncapped
        // flow keeps its rate and takes its part of the NIC first.
        let got = pace(&[(2, 1.0), (1, 1.0), (2, 1.0), (9, 0.1)], &c, 1.0);
        close(&got, &[0.2, 0.4, 0.2, 0.1]);
        // Little room left by uncapped flows: the guarantees still hold (floors first).
        let got = pace(&[(1, 1.0), (2, 1.0), (9, 0.9)], &c, 1.0);
        close(&got, &[0.4, 1.0 / 15.0, 0.9]);
        // Caps above the NIC: local max-min with the guarantees as floors.
        let c = caps(true, &[(1, 0.1, 1.0), (2, 0.1, 1.0), (3, 0.6, 1.0)]);
        close(
            &pace(&[(1, 0.0), (2, 0.0), (3, 0.0)], &c, 1.0),
            &[0.2, 0.2, 0.6],
        );
        // Weighted: coflow 2 of weight 3 takes three times coflow 1's part of the spare.
        let mut c = caps(true, &[(1, 0.0, 1.0), (2, 0.0, 1.0)]);
        c.coflows[1].weight = 3.0;
        close(&pace(&[(1, 0.0), (2, 0.0)], &c, 1.0), &[0.25, 0.75]);
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
