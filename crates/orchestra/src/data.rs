//! The broadcast's data: a ChaCha8 stream from a seed (any receiver's copy can be checked
//! against it byte for byte), and the one integrity check over the whole data (spec §2.3
//! item 3): SHA-256, hex.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

pub fn make(seed: u64, bytes: u64) -> Vec<u8> {
    let mut v = vec![0u8; bytes as usize];
    ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut v);
    v
}

/// SHA-256 of the concatenation of `parts`, hex.
pub fn digest<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    hex(&h.finalize())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_the_seeds_and_the_digest_is_sha256() {
        assert_eq!(make(1, 100), make(1, 100));
        assert_ne!(make(1, 100), make(2, 100));
        assert_eq!(&make(1, 1000)[..100], &make(1, 100)[..]);
        assert_eq!(
            digest([&b"ab"[..], &b"c"[..]]),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
