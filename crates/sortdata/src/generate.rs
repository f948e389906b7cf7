//! Filling buffers with gensort records, sequentially or on rayon's pool.

use rayon::prelude::*;

use crate::{ascii, binary, lcg, skew, RecordKind, RECORD_LEN};

/// Records made per window of generator numbers in the binary loop (the window carries the nine
/// numbers each record shares with the next).
const WINDOW: usize = 64;
/// Records per task in [`par_generate_into`]: large enough that the O(log n) skip-ahead of each
/// task is noise, small enough to spread over the cores.
const PAR_RECORDS: usize = 16 * 1024;

/// Fills `out` with gensort records `first, first + 1, ...` (gensort `-b first`), one per 100
/// bytes, byte-identical to gensort 1.5. Record numbers wrap at 2^128 as gensort's do.
///
/// # Panics
/// If `out.len()` is not a multiple of [`RECORD_LEN`]: a caller sizes its own buffer.
pub fn generate_into(first: u128, kind: RecordKind, out: &mut [u8]) {
    assert!(
        out.len().is_multiple_of(RECORD_LEN),
        "generate_into: {} bytes is not a whole number of {RECORD_LEN}-byte records",
        out.len()
    );
    if out.is_empty() {
        return;
    }
    match kind {
        RecordKind::Binary => binary_into(first, false, out),
        RecordKind::Skewed => binary_into(first, true, out),
        RecordKind::Ascii => ascii_into(first, false, out),
        RecordKind::AsciiSkewed => ascii_into(first, true, out),
    }
}

/// `count` records from record `first`, in a new buffer.
pub fn generate(first: u128, count: usize, kind: RecordKind) -> Vec<u8> {
    let mut out = vec![0u8; count * RECORD_LEN];
    generate_into(first, kind, &mut out);
    out
}

/// Record `r` alone.
pub fn record(r: u128, kind: RecordKind) -> [u8; RECORD_LEN] {
    let mut out = [0u8; RECORD_LEN];
    generate_into(r, kind, &mut out);
    out
}

/// [`generate_into`] split over rayon's pool; the same bytes.
///
/// # Panics
/// As [`generate_into`].
pub fn par_generate_into(first: u128, kind: RecordKind, out: &mut [u8]) {
    assert!(
        out.len().is_multiple_of(RECORD_LEN),
        "par_generate_into: {} bytes is not a whole number of {RECORD_LEN}-byte records",
        out.len()
    );
    out.par_chunks_mut(PAR_RECORDS * RECORD_LEN)
        .enumerate()
        .for_each(|(i, chunk)| {
            let start = first.wrapping_add((i * PAR_RECORDS) as u128);
            generate_into(start, kind, chunk);
        });
}

fn binary_into(first: u128, skewed: bool, out: &mut [u8]) {
    // numbers[j..j + 10] are the ten numbers of the j-th record of the current window.
    let mut numbers = [0u128; WINDOW + 9];
    let mut x = lcg::nth(first.wrapping_add(1));
    numbers[0] = x;
    for slot in numbers.iter_mut().take(9).skip(1) {
        x = lcg::step(x);
        *slot = x;
    }
    let mut r = first;
    for window in out.chunks_mut(WINDOW * RECORD_LEN) {
        let n = window.len() / RECORD_LEN;
        for slot in &mut numbers[9..9 + n] {
            x = lcg::step(x);
            *slot = x;
        }
        for (j, rec) in window.chunks_exact_mut(RECORD_LEN).enumerate() {
            binary::write(&numbers[j..j + 10], rec);
            if skewed {
                skew::binary_key(r, numbers[j], rec);
            }
            r = r.wrapping_add(1);
        }
        numbers.copy_within(n..n + 9, 0);
    }
}

fn ascii_into(first: u128, skewed: bool, out: &mut [u8]) {
    let mut x = lcg::nth(first.wrapping_add(1));
    let mut r = first;
    for rec in out.chunks_exact_mut(RECORD_LEN) {
        ascii::write(r, x, rec);
        if skewed {
            skew::ascii_key(r, x, rec);
        }
        x = lcg::step(x);
        r = r.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_join_seamlessly() {
        // Generated in one call or one record at a time: the same bytes, across window edges.
        for kind in [RecordKind::Binary, RecordKind::Skewed, RecordKind::Ascii] {
            let all = generate(5, 3 * WINDOW + 7, kind);
            for (j, rec) in all.chunks_exact(RECORD_LEN).enumerate() {
                assert_eq!(rec, record(5 + j as u128, kind), "{kind:?} record {j}");
            }
        }
    }

    #[test]
    fn parallel_matches_sequential() {
        let n = PAR_RECORDS + 123;
        let seq = generate(1 << 40, n, RecordKind::Skewed);
        let mut par = vec![0u8; n * RECORD_LEN];
        par_generate_into(1 << 40, RecordKind::Skewed, &mut par);
        assert!(seq == par);
    }
}
