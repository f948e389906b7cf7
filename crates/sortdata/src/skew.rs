//! Skewed keys (`gensort -s`): many records share key prefixes, so that partitioning by sampled
//! splitters meets unevenly sized buckets.
//!
//! Record r gets a "skew index" s(r), about log2(r) + 1, and may have the front of its key
//! replaced by the front of the key of record s(r) (the first 129 records' keys are the
//! candidates). How much is replaced is drawn from bits 32.. of the record's first number:
//! binary keys lose their top 0–48 bits (6 bits drawn, values above 48 mean none: 1/4 of records
//! stay unskewed), ASCII keys their first 0–6 characters (3 bits drawn, 7 means none).

use crate::{ascii, binary, lcg};

/// Bytes of key prefix a skewed key may take from its model.
const SKEW_BYTES: usize = 6;
/// Skew indices run 0..=128.
const SKEWS: usize = 129;

/// The candidate prefixes: entry s is the key prefix of record s (made from `nth(s + 1)`).
const fn prefixes(ascii_keys: bool) -> [[u8; SKEW_BYTES]; SKEWS] {
    let mut table = [[0u8; SKEW_BYTES]; SKEWS];
    let mut x = 0u128;
    let mut s = 0;
    while s < SKEWS {
        x = lcg::step(x);
        table[s] = if ascii_keys {
            let k = ascii::key(x);
            [k[0], k[1], k[2], k[3], k[4], k[5]]
        } else {
            binary::key_prefix(x)
        };
        s += 1;
    }
    table
}

static BINARY_PREFIXES: [[u8; SKEW_BYTES]; SKEWS] = prefixes(false);
static ASCII_PREFIXES: [[u8; SKEW_BYTES]; SKEWS] = prefixes(true);

/// The skew index of record `r`, exactly as gensort 1.5 computes it: the bit length of r, except
/// that a number whose half (high or low 64 bits) has any of its top four bits set counts as the
/// full 64 bits of that half (gensort tests `& 0xF000…` where the top bit alone was likely meant;
/// reproduced so the bytes match).
#[inline]
pub(crate) fn index(r: u128) -> usize {
    let hi = (r >> 64) as u64;
    let lo = r as u64;
    const TOP_NIBBLE: u64 = 0xF000_0000_0000_0000;
    if hi == 0 {
        if lo & TOP_NIBBLE != 0 {
            64
        } else {
            (64 - lo.leading_zeros()) as usize
        }
    } else if hi & TOP_NIBBLE != 0 {
        128
    } else {
        64 + (64 - hi.leading_zeros()) as usize
    }
}

/// Skews the binary key `key` of record `r` whose first number is `x`.
#[inline]
pub(crate) fn binary_key(r: u128, x: u128, key: &mut [u8]) {
    let mut bits = ((x >> 32) & 0x3F) as usize;
    if bits > 8 * SKEW_BYTES {
        return;
    }
    let prefix = &BINARY_PREFIXES[index(r)];
    let whole = bits / 8;
    key[..whole].copy_from_slice(&prefix[..whole]);
    bits %= 8;
    if bits > 0 {
        let keep = 0xFFu8 >> bits;
        key[whole] = (prefix[whole] & !keep) | (key[whole] & keep);
    }
}

/// Skews the ASCII key `key` of record `r` whose number is `x`.
#[inline]
pub(crate) fn ascii_key(r: u128, x: u128, key: &mut [u8]) {
    let count = ((x >> 32) & 0x7) as usize;
    if count > SKEW_BYTES {
        return;
    }
    key[..count].copy_from_slice(&ASCII_PREFIXES[index(r)][..count]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_bit_length_with_gensorts_top_nibble_rule() {
        assert_eq!(index(0), 0);
        assert_eq!(index(1), 1);
        assert_eq!(index(3), 2);
        assert_eq!(index(4), 3);
        assert_eq!(index(16), 5);
        assert_eq!(index((1 << 60) - 1), 60);
        // gensort's table says 2^60..2^63 map to 64, not 61..63.
        assert_eq!(index(1 << 60), 64);
        assert_eq!(index(u64::MAX as u128), 64);
        assert_eq!(index(1 << 64), 65);
        assert_eq!(index((1 << 64) + 1), 65);
        assert_eq!(index(1 << 124), 128);
        assert_eq!(index(u128::MAX), 128);
    }

    #[test]
    fn prefixes_start_with_the_increment() {
        // Record 0's key is the top of nth(1) = C = 0x4a696d477261...
        assert_eq!(BINARY_PREFIXES[0], [0x4a, 0x69, 0x6d, 0x47, 0x72, 0x61]);
        assert_eq!(&ASCII_PREFIXES[0], b"AsfAGH");
    }
}
