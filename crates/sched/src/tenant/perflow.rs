//! Per-flow fairness (TCP-like, the baseline of §7.7): every flow of every tenant is one
//! max-min participant on its uplink and downlink, so a tenant's share grows with its flow
//! count, which is what lets an all-to-all tenant take the fabric (Fig 7.10, 7.11).

use super::error::TenantError;
use super::vector::Links;
use crate::alloc::{Budget, Demand, WaterFill};

/// One flow of tenant `tenant` from port `src` to port `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TenantFlow {
    pub tenant: u32,
    pub src: u32,
    pub dst: u32,
}

/// Max-min rates of `flows` on a fabric of ports, summed per tenant as fractions of each link
/// (one entry per link), for `tenants` tenants.
pub fn per_flow(
    links: &Links,
    tenants: usize,
    flows: &[TenantFlow],
) -> Result<Vec<Vec<f64>>, TenantError> {
    let ports = links.ports().ok_or(TenantError::NotAFabric)?;
    if let Some((i, f)) = flows.iter().enumerate().find(|(_, f)| {
        f.src as usize >= ports || f.dst as usize >= ports || f.tenant as usize >= tenants
    }) {
        return Err(TenantError::BadFlow {
            flow: i,
            tenant: f.tenant,
            src: f.src,
            dst: f.dst,
            ports,
            tenants,
        });
    }
    let caps = links.capacities();
    let mut budget = Budget {
        up: caps[..ports].to_vec(),
        down: caps[ports..].to_vec(),
        ..Budget::default()
    };
    budget.floor = caps.iter().fold(0.0f64, |a, &b| a.max(b)) * crate::alloc::budget::FULL_FRACTION;
    let demands: Vec<Demand> = flows
        .iter()
        .map(|f| Demand {
            src: f.src,
            dst: f.dst,
            weight: 1.0,
        })
        .collect();
    let mut rates = vec![0.0; flows.len()];
    WaterFill::default().fill_rates(&demands, &budget, &mut rates);
    let mut out = vec![vec![0.0; caps.len()]; tenants];
    for (f, r) in flows.iter().zip(rates) {
        let up = f.src as usize;
        let down = ports + f.dst as usize;
        out[f.tenant as usize][up] += r / caps[up];
        out[f.tenant as usize][down] += r / caps[down];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_count_buys_share_on_a_shared_uplink() {
        // Fig 7.10's host level: A1 -> A2 (one flow), B1 -> n destinations, both on machine 0.
        let n = 9;
        let links = Links::fabric(n + 2, vec![1.0; 2 * (n + 2)]).unwrap();
        let mut flows = vec![TenantFlow {
            tenant: 0,
            src: 0,
            dst: 1,
        }];
        flows.extend((0..n as u32).map(|i| TenantFlow {
            tenant: 1,
            src: 0,
            dst: 2 + i,
        }));
        let c = per_flow(&links, 2, &flows).unwrap();
        assert!(per_flow(&Links::unit(2).unwrap(), 2, &flows).is_err());
        assert!(
            (c[0][0] - 1.0 / (n as f64 + 1.0)).abs() < 1e-12,
            "{:?}",
            c[0]
        );
        assert!((c[1][0] - n as f64 / (n as f64 + 1.0)).abs() < 1e-12);
    }
}
