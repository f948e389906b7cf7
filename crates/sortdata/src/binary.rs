//! Binary records: ten 10-byte parts, part i taken from the (i+1)-th of ten consecutive
//! generator numbers, each masked by a constant of its own.
//!
//! Record r uses numbers `nth(r+1) ..= nth(r+10)`, so consecutive records share nine numbers and
//! each new record costs one generator step. Part 0 (the key) is unmasked; the masks of parts 1–9
//! only keep the value bytes from repeating the key bytes of later records verbatim.

use crate::RECORD_LEN;

/// The 80-bit masks of the ten parts, as gensort 1.5 defines them (part 0, the key, has none).
const MASKS: [u128; 10] = [
    0,
    0xF0E8_E4E2_E1D8_D4D2_D1CC,
    0xCAC9_C6C5_C3B8_B4B2_B1AC,
    0xAAA9_A6A5_A39C_9A99_9695,
    0x938E_8D8B_8778_7472_716C,
    0x6A69_6665_635C_5A59_5655,
    0x534E_4D4B_473C_3A39_3635,
    0x332E_2D2B_271E_1D1B_170F,
    0xC8C4_C2C1_9894_9291_8CE0,
    0x170F_332E_2D2B_271E_1D1B,
];

/// Writes the binary record built from `numbers[0..10]` into `out[0..100]`.
#[inline(always)]
pub(crate) fn write(numbers: &[u128], out: &mut [u8]) {
    debug_assert!(numbers.len() >= 10 && out.len() >= RECORD_LEN);
    for i in 0..10 {
        // The top 80 bits, most significant byte first.
        let part = numbers[i] ^ (MASKS[i] << 48);
        out[10 * i..10 * i + 10].copy_from_slice(&part.to_be_bytes()[..10]);
    }
}

/// The key of the binary record whose first number is `x`.
#[inline(always)]
pub(crate) const fn key_prefix(x: u128) -> [u8; 6] {
    let b = x.to_be_bytes();
    [b[0], b[1], b[2], b[3], b[4], b[5]]
}
