//! HUG's enforcement as the thesis does it (§7.6.1): the coordinator computes P* and each
//! coflow's reservation and cap centrally, and pushes every daemon the ones of its uplink;
//! the daemon keeps each coflow between them (daemon/tenant_pace.rs).
//!
//! Downlinks: a daemon paces what it sends, not what it receives, so a receiver's share is
//! enforced at its senders. With `local`, each flow of a capped coflow is listed at its part
//! of the coflow's cap on the flow's downlink (the cap split equally among the coflow's flows
//! into that receiver, from every daemon) instead of the NIC rate, and the daemon's local fill
//! keeps the flow under it. The senders then never overrun a receiver's per-coflow cap
//! together; the price is that a part a sender cannot use (its uplink is full) is not handed
//! to the coflow's other senders to the same receiver until the next decision re-divides.

use std::collections::HashMap;

use coflowkit_sched::tenant::board::Shares;

use crate::proto::{CoflowCap, RateUpdate, TenantCaps};

/// Add to every daemon's table (indexed by port) the caps of its uplink (link = port). With
/// `local` the flows of capped coflows are listed at `min(NIC, their part of the coflow's
/// downlink cap)`: the coordinator does not pace them, the daemon's local fill under the caps
/// does. `ends(port, flow)` is a flow's coflow and receiving port; `nics` has one entry per
/// port of the scheduler's fabric (the daemons, then the outside), so downlink `p` is link
/// `nics.len() + p`.
pub fn attach(
    updates: &mut [RateUpdate],
    shares: &Shares,
    local: bool,
    nics: &[f64],
    ends: impl Fn(usize, u64) -> Option<(u64, usize)>,
) {
    let ports = nics.len();
    for u in updates.iter_mut() {
        u.tenant = Some(TenantCaps {
            p_star: shares.p_star,
            coflows: Vec::new(),
            local,
        });
    }
    for (&coflow, links) in &shares.coflows {
        for l in links {
            // Uplinks only: a downlink's index (ports + p) or the outside port is past the
            // daemons.
            let Some(Some(t)) = updates.get_mut(l.link as usize).map(|u| u.tenant.as_mut()) else {
                continue;
            };
            t.coflows.push(CoflowCap {
                coflow,
                guarantee_bytes_per_s: l.guarantee_bytes_per_s,
                cap_bytes_per_s: l.cap_bytes_per_s,
                weight: l.weight,
            });
        }
    }
    for u in updates.iter_mut() {
        if let Some(t) = &mut u.tenant {
            t.coflows.sort_by_key(|c| c.coflow);
        }
    }
    if !local {
        return;
    }
    // Every capped coflow's flows per receiving port, over all daemons.
    let capped = |c: u64, port: usize| {
        let t = updates[port].tenant.as_ref();
        t.is_some_and(|t| t.coflows.binary_search_by_key(&c, |x| x.coflow).is_ok())
    };
    let mut into: HashMap<(u64, usize), usize> = HashMap::new();
    for (port, u) in updates.iter().enumerate() {
        for r in &u.rates {
            if let Some((c, dst)) = ends(port, r.flow).filter(|&(c, _)| capped(c, port)) {
                *into.entry((c, dst)).or_default() += 1;
            }
        }
    }
    let down_cap = |c: u64, dst: usize| {
        let links = shares.coflows.get(&c)?;
        let l = links.iter().find(|l| l.link as usize == ports + dst)?;
        Some(l.cap_bytes_per_s / into[&(c, dst)] as f64)
    };
    let listed: Vec<Vec<Option<f64>>> = (updates.iter().enumerate())
        .map(|(port, u)| {
            (u.rates.iter())
                .map(|r| {
                    let (c, dst) = ends(port, r.flow).filter(|&(c, _)| capped(c, port))?;
                    let nic = nics.get(port).copied().unwrap_or(r.bytes_per_s);
                    Some(down_cap(c, dst).map_or(nic, |d| d.min(nic)))
                })
                .collect()
        })
        .collect();
    for (u, listed) in updates.iter_mut().zip(listed) {
        for (r, l) in u.rates.iter_mut().zip(listed) {
            if let Some(l) = l {
                r.bytes_per_s = l;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::FlowRate;
    use coflowkit_sched::tenant::board::LinkShare;

    fn share(link: u32, g: f64, cap: f64) -> LinkShare {
        LinkShare {
            link,
            guarantee_bytes_per_s: g,
            cap_bytes_per_s: cap,
            consumption_bytes_per_s: g,
            weight: 1.0,
        }
    }

    fn update(flows: &[u64]) -> RateUpdate {
        RateUpdate {
            round: 1,
            rates: (flows.iter())
                .map(|&flow| FlowRate {
                    flow,
                    bytes_per_s: 0.1,
                })
                .collect(),
            unregistered: vec![],
            tenant: None,
        }
    }

    #[test]
    fn local_lists_each_flow_at_its_part_of_the_downlink_cap() {
        // Three daemons of 1 B/s and the outside port (links: uplinks 0-3, downlinks 4-7).
        // Coflow 1 sends 0 -> 2 (flow 10) and 1 -> 2 (flow 11), HUG with P* = 2/3: caps 2/3 on
        // uplinks 0, 1 and downlink 2 (link 6). Coflow 2 sends 0 -> 1 (flow 20), capped 2/3 on
        // uplink 0 and downlink 1 (link 5).
        let shares = Shares {
            p_star: 2.0 / 3.0,
            coflows: HashMap::from([
                (
                    1,
                    vec![
                        share(0, 1.0 / 3.0, 2.0 / 3.0),
                        share(1, 1.0 / 3.0, 2.0 / 3.0),
                        share(6, 2.0 / 3.0, 2.0 / 3.0),
                    ],
                ),
                (
                    2,
                    vec![
                        share(0, 2.0 / 3.0, 2.0 / 3.0),
                        share(5, 2.0 / 3.0, 2.0 / 3.0),
                    ],
                ),
            ]),
        };
        let ends = |_port: usize, flow: u64| match flow {
            10 => Some((1, 2)),
            11 => Some((1, 2)),
            20 => Some((2, 1)),
            _ => None,
        };
        let nics = [1.0, 1.0, 1.0, 3.0];
        let mut u = vec![update(&[10, 20, 99]), update(&[11]), update(&[])];
        attach(&mut u, &shares, true, &nics, ends);
        // Coflow 1's downlink cap 2/3 over its two flows into port 2: 1/3 each; coflow 2's
        // only flow into port 1: 2/3; flow 99 (no coflow known) keeps the coordinator's rate.
        let got: Vec<Vec<f64>> = (u.iter())
            .map(|u| u.rates.iter().map(|r| r.bytes_per_s).collect())
            .collect();
        let want = [vec![1.0 / 3.0, 2.0 / 3.0, 0.1], vec![1.0 / 3.0], vec![]];
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.len(), w.len());
            assert!(
                g.iter().zip(w).all(|(a, b)| (a - b).abs() < 1e-12),
                "{got:?}"
            );
        }
        // Uplink caps as before: daemon 0 has both coflows, daemon 1 coflow 1, daemon 2 none.
        let n: Vec<usize> = u
            .iter()
            .map(|u| u.tenant.as_ref().unwrap().coflows.len())
            .collect();
        assert_eq!(n, [2, 1, 0]);
        // Without `local` the coordinator's rates stand.
        let mut u = vec![update(&[10, 20]), update(&[11]), update(&[])];
        attach(&mut u, &shares, false, &nics, ends);
        assert!(u
            .iter()
            .flat_map(|u| &u.rates)
            .all(|r| r.bytes_per_s == 0.1));
        // A downlink cap above the NIC: the NIC.
        let mut big = shares.clone();
        big.coflows.get_mut(&2).unwrap()[1].cap_bytes_per_s = 5.0;
        let mut u = vec![update(&[20]), update(&[]), update(&[])];
        attach(&mut u, &big, true, &nics, ends);
        assert_eq!(u[0].rates[0].bytes_per_s, 1.0);
    }
}
