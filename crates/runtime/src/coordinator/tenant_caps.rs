//! HUG's enforcement as the thesis does it (§7.6.1): the coordinator computes P* and each
//! coflow's reservation and cap centrally, and pushes every daemon the ones of its uplink;
//! the daemon keeps each coflow between them (daemon/tenant_pace.rs). The downlink entries
//! are not pushed: a daemon paces what it sends, not what it receives.

use coflowkit_sched::tenant::board::Shares;

use crate::proto::{CoflowCap, RateUpdate, TenantCaps};

/// Add to every daemon's table (indexed by port) the caps of its uplink (link = port). With
/// `local` the flows of capped coflows are listed at the daemon's NIC rate (`nics[port]`):
/// the coordinator does not pace them, the daemon's local fill under the caps does.
pub fn attach(
    updates: &mut [RateUpdate],
    shares: &Shares,
    local: bool,
    nics: &[f64],
    coflow_of: impl Fn(usize, u64) -> Option<u64>,
) {
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
    for (port, u) in updates.iter_mut().enumerate() {
        let Some(t) = &mut u.tenant else { continue };
        t.coflows.sort_by_key(|c| c.coflow);
        if local {
            let capped = |c: u64| t.coflows.binary_search_by_key(&c, |x| x.coflow).is_ok();
            for r in &mut u.rates {
                if coflow_of(port, r.flow).is_some_and(capped) {
                    r.bytes_per_s = nics.get(port).copied().unwrap_or(r.bytes_per_s);
                }
            }
        }
    }
}
