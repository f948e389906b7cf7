//! Correlation vectors of clairvoyant coflows (§7.6.1: "one can use MADD"). MADD gives every
//! flow of a coflow the rate `bytes / Γ`, so that all end together at the coflow's bottleneck
//! time Γ; the coflow's demand on a port is then its bytes through that port over Γ, and its
//! vector, normalized, is simply its bytes per uplink and downlink (divided by capacity when
//! the validation normalizes it).

use super::error::TenantError;
use super::vector::{Links, SparseSpec};

/// The vector of a coflow with `flows` as `(src port, dst port, bytes)` on a fabric of
/// `links.ports()` ports, in capacity units as [`SparseSpec`] expects (bytes per port, which
/// balance by construction). Empty flows are skipped.
pub fn madd_vector(
    name: impl Into<String>,
    links: &Links,
    flows: &[(u32, u32, f64)],
) -> Result<SparseSpec, TenantError> {
    let name = name.into();
    let ports = links.ports().ok_or(TenantError::NotAFabric)?;
    let mut bytes = std::collections::BTreeMap::<u32, f64>::new();
    for (i, &(src, dst, b)) in flows.iter().enumerate() {
        if src as usize >= ports || dst as usize >= ports {
            return Err(TenantError::BadPort {
                tenant: name,
                flow: i,
                port: src.max(dst),
                ports,
            });
        }
        if !(b.is_finite() && b >= 0.0) {
            return Err(TenantError::BadEntry {
                tenant: name,
                entry: i,
                value: b,
            });
        }
        if b > 0.0 {
            *bytes.entry(src).or_default() += b;
            *bytes.entry(ports as u32 + dst).or_default() += b;
        }
    }
    Ok(SparseSpec {
        name,
        entries: bytes.into_iter().collect(),
        weight: 1.0,
        bounded: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenant::vector::Tenants;

    #[test]
    fn shuffle_vector_is_bytes_per_port() {
        // 2 mappers (ports 0, 1) to 1 reducer (port 2): 10 and 30 bytes.
        let links = Links::fabric(3, vec![1.0; 6]).unwrap();
        let s = madd_vector("job", &links, &[(0, 2, 10.0), (1, 2, 30.0)]).unwrap();
        assert_eq!(s.entries, vec![(0, 10.0), (1, 30.0), (5, 40.0)]);
        let t = Tenants::from_sparse(links.clone(), &[s]).unwrap();
        assert_eq!(t.tenants[0].d, vec![0.25, 0.75, 1.0]);
        let e = madd_vector("job", &links, &[(0, 7, 1.0)]).unwrap_err();
        assert!(e.to_string().contains("'job': flow 0 uses port 7"), "{e}");
    }
}
