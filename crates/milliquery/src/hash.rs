//! Hash partitioning with a seeded hash (xxh3), so every rank computes the same target for a
//! key alone and a different seed gives a different, independent partition.

use xxhash_rust::xxh3::xxh3_64_with_seed;

pub fn hash_bytes(seed: u64, bytes: &[u8]) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// The rank that owns `key` among `ranks`.
pub fn target(seed: u64, key: &[u8], ranks: usize) -> usize {
    (hash_bytes(seed, key) % ranks as u64) as usize
}

/// Q2's partition key: the address as four bytes (the original used `ip % M`).
pub fn ip_target(seed: u64, ip: u32, ranks: usize) -> usize {
    target(seed, &ip.to_be_bytes(), ranks)
}

/// Q3's third shuffle: (lang, author). Hashing the two parts separately and mixing (the
/// original's `hash(lang) ^ hash(author)`) would send (a, b) and (b, a) together; the rotation
/// keeps them apart.
pub fn pair_target(seed: u64, a: &str, b: &str, ranks: usize) -> usize {
    let h = hash_bytes(seed, a.as_bytes()) ^ hash_bytes(seed, b.as_bytes()).rotate_left(29);
    (h % ranks as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_in_range_depend_on_the_seed_and_spread() {
        let m = 7;
        let mut hits = vec![0usize; m];
        let mut moved = 0;
        for i in 0..7000u32 {
            let t = ip_target(1, i, m);
            hits[t] += 1;
            if t != ip_target(2, i, m) {
                moved += 1;
            }
        }
        assert!(hits.iter().all(|&h| (800..1200).contains(&h)), "{hits:?}");
        assert!(moved > 5000, "a new seed moved only {moved} of 7000 keys");
        assert_ne!(
            (0..64)
                .map(|i| pair_target(3, "x", &i.to_string(), 64))
                .collect::<Vec<_>>(),
            (0..64)
                .map(|i| pair_target(3, &i.to_string(), "x", 64))
                .collect::<Vec<_>>()
        );
    }
}
