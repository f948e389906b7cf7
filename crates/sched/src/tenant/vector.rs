//! Correlation vectors (§7.3.1): one entry per link of the fabric, the demand a tenant puts on
//! that link for every unit it puts on its bottleneck. Kept sparse (a tenant touches few of a
//! large fabric's links) and normalized by link capacity, so everything downstream works in
//! fractions of a link.

use super::error::TenantError;

/// Relative tolerance of the uplink = downlink check: vectors typed in JSON carry rounded
/// thirds and sixths.
const BALANCE_TOL: f64 = 1e-6;

/// The links tenants share, each with its capacity (any unit, the same for all). Either
/// independent links (the thesis' two-link examples) or a P-port fabric whose 2P links are
/// the uplinks `0..P` then the downlinks `P..2P`; only a fabric checks that a tenant's uplink
/// and downlink demands balance.
#[derive(Debug, Clone, PartialEq)]
pub struct Links {
    capacities: Vec<f64>,
    ports: Option<usize>,
}

impl Links {
    /// Independent links with these capacities.
    pub fn independent(capacities: Vec<f64>) -> Result<Self, TenantError> {
        if capacities.is_empty() {
            return Err(TenantError::NoLinks);
        }
        if let Some((link, &value)) = capacities
            .iter()
            .enumerate()
            .find(|(_, c)| !(c.is_finite() && **c > 0.0))
        {
            return Err(TenantError::BadCapacity { link, value });
        }
        Ok(Links {
            capacities,
            ports: None,
        })
    }

    /// `n` independent links of capacity 1.
    pub fn unit(n: usize) -> Result<Self, TenantError> {
        Self::independent(vec![1.0; n])
    }

    /// A `ports`-port fabric: `capacities` lists the uplinks then the downlinks.
    pub fn fabric(ports: usize, capacities: Vec<f64>) -> Result<Self, TenantError> {
        if ports.checked_mul(2) != Some(capacities.len()) {
            return Err(TenantError::PortsMismatch {
                ports,
                got: capacities.len(),
            });
        }
        let mut l = Self::independent(capacities)?;
        l.ports = Some(ports);
        Ok(l)
    }

    pub fn len(&self) -> usize {
        self.capacities.len()
    }

    pub fn is_empty(&self) -> bool {
        self.capacities.is_empty()
    }

    pub fn capacities(&self) -> &[f64] {
        &self.capacities
    }

    /// The port count when these are a fabric's uplinks and downlinks.
    pub fn ports(&self) -> Option<usize> {
        self.ports
    }
}

/// A tenant as reported: its name, its vector in capacity units (one entry per link), its
/// weight, and whether its demand is bounded.
///
/// An elastic tenant (the default) scales along its vector as far as it is allowed, so only
/// the vector's direction matters: it is normalized to a largest entry of 1 (§7.3.1). A
/// bounded tenant (§7.6.3) wants exactly its vector, as fractions of each link, and no more.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantSpec {
    pub name: String,
    pub vector: Vec<f64>,
    pub weight: f64,
    pub bounded: bool,
}

impl TenantSpec {
    /// An elastic tenant of weight 1.
    pub fn elastic(name: impl Into<String>, vector: Vec<f64>) -> Self {
        TenantSpec {
            name: name.into(),
            vector,
            weight: 1.0,
            bounded: false,
        }
    }

    /// A bounded tenant of weight 1.
    pub fn bounded(name: impl Into<String>, vector: Vec<f64>) -> Self {
        TenantSpec {
            bounded: true,
            ..Self::elastic(name, vector)
        }
    }

    pub fn with_weight(mut self, weight: f64) -> Self {
        self.weight = weight;
        self
    }
}

/// One validated tenant: the links it uses (ascending) and its normalized demand on each.
#[derive(Debug, Clone, PartialEq)]
pub struct Tenant {
    pub name: String,
    pub weight: f64,
    /// For a bounded tenant, its demand on its most demanded link (a fraction of that link):
    /// it never wants more than `bound · d`. `None` for an elastic tenant.
    pub bound: Option<f64>,
    pub links: Vec<u32>,
    /// Demand per link in fractions of the link's capacity, normalized to a largest entry of
    /// 1, so a share `s` of the bottleneck comes with `s · d` everywhere (DRF's dominant share).
    pub d: Vec<f64>,
}

impl Tenant {
    /// The normalized demand on `link` (0 when the tenant does not use it).
    pub fn demand_on(&self, link: u32) -> f64 {
        match self.links.binary_search(&link) {
            Ok(j) => self.d[j],
            Err(_) => 0.0,
        }
    }
}

/// Validated tenants over their links: what every policy in this module takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Tenants {
    pub links: Links,
    pub tenants: Vec<Tenant>,
}

impl Tenants {
    pub fn new(links: Links, specs: &[TenantSpec]) -> Result<Self, TenantError> {
        if specs.is_empty() {
            return Err(TenantError::NoTenants);
        }
        let tenants = specs
            .iter()
            .map(|s| tenant(&links, s))
            .collect::<Result<_, _>>()?;
        Ok(Tenants { links, tenants })
    }

    /// Elastic, unit-weight tenants named A, B, C... over unit links: the thesis' examples.
    pub fn elastic(links: usize, vectors: &[&[f64]]) -> Result<Self, TenantError> {
        let specs: Vec<_> = vectors
            .iter()
            .enumerate()
            .map(|(k, v)| TenantSpec::elastic(letter(k), v.to_vec()))
            .collect();
        Self::new(Links::unit(links)?, &specs)
    }

    pub fn len(&self) -> usize {
        self.tenants.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tenants.is_empty()
    }

    /// Each link's tenants as (tenant, index into its `links`), for per-link passes.
    pub fn by_link(&self) -> Vec<Vec<(u32, u32)>> {
        let mut out = vec![Vec::new(); self.links.len()];
        for (k, t) in self.tenants.iter().enumerate() {
            for (j, &l) in t.links.iter().enumerate() {
                out[l as usize].push((k as u32, j as u32));
            }
        }
        out
    }
}

/// "A", "B", ... "Z", then "T26", "T27"...
pub fn letter(k: usize) -> String {
    if k < 26 {
        ((b'A' + k as u8) as char).to_string()
    } else {
        format!("T{k}")
    }
}

pub(crate) fn tenant(links: &Links, s: &TenantSpec) -> Result<Tenant, TenantError> {
    if s.vector.len() != links.len() {
        return Err(TenantError::Length {
            tenant: s.name.clone(),
            got: s.vector.len(),
            want: links.len(),
        });
    }
    let entries = s.vector.iter().enumerate().map(|(i, &v)| (i as u32, v));
    from_entries(links, &s.name, s.weight, s.bounded, entries)
}

/// A tenant given only its non-zero entries, `(link, demand in capacity units)` with links
/// ascending: large fabrics, where a dense vector per tenant would not fit.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseSpec {
    pub name: String,
    pub entries: Vec<(u32, f64)>,
    pub weight: f64,
    pub bounded: bool,
}

impl Tenants {
    pub fn from_sparse(links: Links, specs: &[SparseSpec]) -> Result<Self, TenantError> {
        if specs.is_empty() {
            return Err(TenantError::NoTenants);
        }
        let mut tenants = Vec::with_capacity(specs.len());
        for s in specs {
            let n = links.len() as u32;
            let mut prev = None;
            for &(l, _) in &s.entries {
                if l >= n || prev.is_some_and(|p| l <= p) {
                    return Err(TenantError::BadLink {
                        tenant: s.name.clone(),
                        link: l,
                        links: links.len(),
                    });
                }
                prev = Some(l);
            }
            let it = s.entries.iter().copied();
            tenants.push(from_entries(&links, &s.name, s.weight, s.bounded, it)?);
        }
        Ok(Tenants { links, tenants })
    }
}

fn from_entries(
    links: &Links,
    name: &str,
    weight: f64,
    bounded: bool,
    entries: impl Iterator<Item = (u32, f64)> + Clone,
) -> Result<Tenant, TenantError> {
    let name = || name.to_string();
    if !(weight.is_finite() && weight > 0.0) {
        return Err(TenantError::BadWeight {
            tenant: name(),
            value: weight,
        });
    }
    if let Some((entry, value)) = entries.clone().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
        return Err(TenantError::BadEntry {
            tenant: name(),
            entry: entry as usize,
            value,
        });
    }
    if let Some(ports) = links.ports() {
        // In capacity units: with heterogeneous links the normalized entries need not balance.
        let (mut up, mut down) = (0.0, 0.0);
        for (i, v) in entries.clone() {
            if (i as usize) < ports {
                up += v;
            } else {
                down += v;
            }
        }
        if (up - down).abs() > BALANCE_TOL * f64::max(up, down) {
            return Err(TenantError::Unbalanced {
                tenant: name(),
                ports,
                up,
                down,
            });
        }
    }
    let mut t = Tenant {
        name: name(),
        weight,
        bound: None,
        links: Vec::new(),
        d: Vec::new(),
    };
    let caps = links.capacities();
    for (i, v) in entries {
        if v > 0.0 {
            t.links.push(i);
            t.d.push(v / caps[i as usize]);
        }
    }
    let max = t.d.iter().fold(0.0f64, |a, &b| a.max(b));
    if max == 0.0 {
        return Err(TenantError::AllZero { tenant: name() });
    }
    t.d.iter_mut().for_each(|x| *x /= max);
    if bounded {
        t.bound = Some(max);
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elastic_vectors_are_normalized_and_sparse() {
        let t = Tenants::elastic(3, &[&[1.0, 0.0, 4.0]]).unwrap();
        assert_eq!(t.tenants[0].links, vec![0, 2]);
        assert_eq!(t.tenants[0].d, vec![0.25, 1.0]);
        assert_eq!(t.tenants[0].demand_on(1), 0.0);
    }

    #[test]
    fn capacities_normalize_entries() {
        let links = Links::independent(vec![2.0, 10.0]).unwrap();
        let t = Tenants::new(links, &[TenantSpec::bounded("x", vec![1.0, 1.0])]).unwrap();
        assert_eq!(t.tenants[0].d, vec![1.0, 0.2]);
        assert_eq!(t.tenants[0].bound, Some(0.5));
    }

    #[test]
    fn bad_input_names_tenant_and_entry() {
        let l = || Links::unit(2).unwrap();
        let e = Tenants::new(l(), &[TenantSpec::elastic("web", vec![1.0])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tenant 'web': vector has 1 entries, the fabric has 2 links"
        );
        let e = Tenants::new(l(), &[TenantSpec::elastic("db", vec![1.0, -0.5])]).unwrap_err();
        assert!(e.to_string().contains("'db': entry 1 is -0.5"), "{e}");
        let e = Tenants::new(l(), &[TenantSpec::elastic("z", vec![0.0, 0.0])]).unwrap_err();
        assert!(e.to_string().contains("'z': every entry is 0"), "{e}");
        let e = Tenants::new(l(), &[TenantSpec::elastic("n", vec![f64::NAN, 1.0])]).unwrap_err();
        assert!(matches!(e, TenantError::BadEntry { entry: 0, .. }), "{e}");
        let w = TenantSpec::elastic("w", vec![1.0, 1.0]).with_weight(0.0);
        assert!(matches!(
            Tenants::new(l(), &[w]).unwrap_err(),
            TenantError::BadWeight { .. }
        ));
        let fab = Links::fabric(2, vec![1.0; 4]).unwrap();
        let e =
            Tenants::new(fab, &[TenantSpec::elastic("u", vec![1.0, 0.0, 0.5, 0.0])]).unwrap_err();
        assert!(
            e.to_string()
                .contains("'u': uplinks (entries 0..2) sum to 1"),
            "{e}"
        );
        assert!(Tenants::new(l(), &[]).is_err());
        assert!(matches!(
            Links::independent(vec![1.0, 0.0]).unwrap_err(),
            TenantError::BadCapacity { link: 1, .. }
        ));
        assert!(Links::fabric(2, vec![1.0; 3]).is_err());
        let sparse = |entries| SparseSpec {
            name: "s".into(),
            entries,
            weight: 1.0,
            bounded: false,
        };
        let e = Tenants::from_sparse(l(), &[sparse(vec![(1, 1.0), (0, 1.0)])]).unwrap_err();
        assert!(matches!(e, TenantError::BadLink { link: 0, .. }), "{e}");
        let e = Tenants::from_sparse(l(), &[sparse(vec![(2, 1.0)])]).unwrap_err();
        assert!(e.to_string().contains("'s': link 2"), "{e}");
        let ok = Tenants::from_sparse(l(), &[sparse(vec![(1, 2.0)])]).unwrap();
        assert_eq!(
            (ok.tenants[0].links.clone(), ok.tenants[0].d.clone()),
            (vec![1], vec![1.0])
        );
    }

    #[test]
    fn fig_7_2_vectors_balance_on_a_3x3_fabric() {
        let fab = Links::fabric(3, vec![1.0; 6]).unwrap();
        let specs = [
            TenantSpec::elastic("A", vec![0.5, 1.0, 0.0, 1.0, 0.5, 0.0]),
            TenantSpec::elastic("B", vec![1.0, 1.0 / 6.0, 0.0, 0.0, 1.0, 1.0 / 6.0]),
        ];
        assert!(Tenants::new(fab, &specs).is_ok());
    }
}
