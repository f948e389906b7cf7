//! Random tenants on a large fabric, for timing allocations (`coflowkit hug bench`).

use rand::seq::index::sample;
use rand::{Rng, SeedableRng};

use super::error::TenantError;
use super::vector::{Links, SparseSpec, Tenants};

/// `tenants` elastic tenants on a `machines`-machine fabric, each on `vms` distinct machines
/// drawn from `seed`, sending a random amount from each and receiving the same total, spread
/// at random over the same machines (so uplinks and downlinks balance).
pub fn random_fabric(
    machines: usize,
    tenants: usize,
    vms: usize,
    seed: u64,
) -> Result<Tenants, TenantError> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let vms = vms.clamp(1, machines.max(1));
    let specs: Vec<SparseSpec> = (0..tenants)
        .map(|k| {
            let mut on = sample(&mut rng, machines, vms).into_vec();
            on.sort_unstable();
            let up: Vec<f64> = on.iter().map(|_| rng.gen_range(0.1..1.0)).collect();
            let down: Vec<f64> = on.iter().map(|_| rng.gen_range(0.1..1.0)).collect();
            let scale = up.iter().sum::<f64>() / down.iter().sum::<f64>();
            let mut entries: Vec<(u32, f64)> =
                on.iter().zip(&up).map(|(&i, &v)| (i as u32, v)).collect();
            entries.extend(
                on.iter()
                    .zip(&down)
                    .map(|(&i, &v)| ((machines + i) as u32, v * scale)),
            );
            SparseSpec {
                name: format!("t{k}"),
                entries,
                weight: 1.0,
                bounded: false,
            }
        })
        .collect();
    Tenants::from_sparse(Links::fabric(machines, vec![1.0; 2 * machines])?, &specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_balanced_and_sized() {
        let a = random_fabric(50, 7, 5, 3).unwrap();
        assert_eq!(a, random_fabric(50, 7, 5, 3).unwrap());
        assert_eq!(a.len(), 7);
        assert!(a.tenants.iter().all(|x| x.links.len() == 10));
    }
}
