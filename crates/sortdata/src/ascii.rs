//! ASCII records (`gensort -a`), each from one generator number `x = nth(r+1)`:
//!
//! | bytes  | content                                                                    |
//! |--------|----------------------------------------------------------------------------|
//! | 0–9    | key: 8 base-95 digits of x's high 64 bits then 2 of its low 64, as ' '+d    |
//! | 10–11  | two spaces                                                                 |
//! | 12–43  | the record number r as 32 upper-case hex digits                            |
//! | 44–45  | two spaces                                                                 |
//! | 46–97  | the 13 hex digits of bits 48..0 of x's low 64 bits, each written 4 times    |
//! | 98–99  | CR LF                                                                      |

use crate::RECORD_LEN;

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// The 10-byte printable key of the number `x`, least significant base-95 digit first.
#[inline(always)]
pub(crate) const fn key(x: u128) -> [u8; 10] {
    let mut key = [0u8; 10];
    let mut hi = (x >> 64) as u64;
    let mut i = 0;
    while i < 8 {
        key[i] = b' ' + (hi % 95) as u8;
        hi /= 95;
        i += 1;
    }
    let mut lo = x as u64;
    while i < 10 {
        key[i] = b' ' + (lo % 95) as u8;
        lo /= 95;
        i += 1;
    }
    key
}

/// Writes ASCII record number `record` built from `x` into `out[0..100]`.
#[inline(always)]
pub(crate) fn write(record: u128, x: u128, out: &mut [u8]) {
    let out = &mut out[..RECORD_LEN];
    out[..10].copy_from_slice(&key(x));
    out[10] = b' ';
    out[11] = b' ';
    // 64-bit halves: cheaper shifts than on the 128-bit number.
    out[12..28].copy_from_slice(&hex16((record >> 64) as u64));
    out[28..44].copy_from_slice(&hex16(record as u64));
    out[44] = b' ';
    out[45] = b' ';
    let lo = x as u64;
    for (i, quad) in out[46..98].chunks_exact_mut(4).enumerate() {
        let digit = HEX[((lo >> (48 - 4 * i)) & 0xF) as usize];
        quad.copy_from_slice(&[digit; 4]);
    }
    out[98] = b'\r';
    out[99] = b'\n';
}

/// The 16 upper-case hex digits of `v`, most significant first.
#[inline(always)]
fn hex16(v: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = HEX[((v >> (60 - 4 * i)) & 0xF) as usize];
    }
    out
}
