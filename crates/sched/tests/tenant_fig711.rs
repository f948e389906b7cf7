//! Fig 7.11's network-level experiment as allocations (the thesis ran it on 100 EC2 machines;
//! here the policies' shares of a 100-machine fabric, phase by phase): C_A sends i -> i+50,
//! C_B is all-to-all (99 flows out of and into every machine), C_C sends j -> j+25 (mod 100).
//! Per-flow fairness lets C_B take 99/100 of every link, then 99/101 with C_C; HUG (and PS-P,
//! every vector being all-ones) splits every link equally: 1/2, then 1/3.

use coflowkit_sched::tenant::{
    hug, per_flow, psp, HugOptions, Links, TenantFlow, TenantSpec, Tenants,
};

const M: u32 = 100;

fn flows(tenant: u32) -> Vec<TenantFlow> {
    let pairs: Vec<(u32, u32)> = match tenant {
        0 => (0..M).map(|i| (i, (i + 50) % M)).collect(),
        1 => (0..M)
            .flat_map(|i| (0..M).filter(move |&j| j != i).map(move |j| (i, j)))
            .collect(),
        _ => (0..M).map(|j| (j, (j + 25) % M)).collect(),
    };
    (pairs.into_iter())
        .map(|(src, dst)| TenantFlow { tenant, src, dst })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn fig_7_11_per_flow_fairness_against_hug() {
    let links = Links::fabric(M as usize, vec![1.0; 2 * M as usize]).unwrap();
    // Phase 2: A and B. Phase 3: A, B and C (each index = tenant as numbered in `flows`).
    for (present, per_flow_a, per_flow_b, even) in [
        (vec![0, 1], 1.0 / 100.0, 99.0 / 100.0, 1.0 / 2.0),
        (vec![0, 1, 2], 1.0 / 101.0, 99.0 / 101.0, 1.0 / 3.0),
    ] {
        let fl: Vec<TenantFlow> = (present.iter())
            .flat_map(|&t| flows(t))
            .map(|mut f| {
                f.tenant = present.iter().position(|&p| p == f.tenant).unwrap() as u32;
                f
            })
            .collect();
        let shares = per_flow(&links, present.len(), &fl).unwrap();
        for (l, (a, b)) in shares[0].iter().zip(&shares[1]).enumerate() {
            assert!(close(*a, per_flow_a), "A on link {l}: {a}");
            assert!(close(*b, per_flow_b), "B on link {l}: {b}");
        }
        // Every tenant sends and receives the same on every machine: all-ones vectors.
        let specs: Vec<TenantSpec> = (present.iter())
            .map(|t| TenantSpec::elastic(format!("C{t}"), vec![1.0; 2 * M as usize]))
            .collect();
        let t = Tenants::new(links.clone(), &specs).unwrap();
        let h = hug(&t, HugOptions::default());
        assert!(close(h.p_star, even), "P* {}", h.p_star);
        for a in [h, psp(&t)] {
            for k in 0..present.len() {
                assert!(a.consumption[k].iter().all(|&c| close(c, even)), "{k}");
            }
        }
    }
}
