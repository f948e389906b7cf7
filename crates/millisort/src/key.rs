//! The composite key ([code]'s 16-byte `PivotKey`, spec §8.3.2): the 10 key bytes as the most
//! significant 80 bits, then the origin rank (16 bits) and the record's index there (32 bits).
//! Compared as one u128, so ties break by (origin, index), every key is unique, and the low 32
//! bits say where the record's value is before the local sort.

/// Key bytes of a Sort Benchmark record.
pub const KEY_BYTES: usize = 10;

/// Largest number of ranks the origin field holds.
pub const MAX_RANKS: usize = 1 << 16;

pub fn compose(key: &[u8; KEY_BYTES], origin: u16, index: u32) -> u128 {
    let mut b = [0u8; 16];
    b[..KEY_BYTES].copy_from_slice(key);
    u128::from_be_bytes(b) | (origin as u128) << 32 | index as u128
}

/// A composite key from an ordered 64-bit value (simulations), origin and index.
pub fn compose_u64(value: u64, origin: u16, index: u32) -> u128 {
    (value as u128) << 48 | (origin as u128) << 32 | index as u128
}

pub fn key_bytes(k: u128) -> [u8; KEY_BYTES] {
    k.to_be_bytes()[..KEY_BYTES].try_into().expect("10 bytes")
}

pub fn origin(k: u128) -> u16 {
    (k >> 32) as u16
}

pub fn index(k: u128) -> u32 {
    k as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_key_bytes_dominate_the_order() {
        let a = compose(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 513, 70_000);
        assert_eq!(key_bytes(a), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!((origin(a), index(a)), (513, 70_000));
        let b = compose(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 11], 0, 0);
        assert!(a < b);
        let c = compose(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 514, 0);
        assert!(a < c);
    }
}
