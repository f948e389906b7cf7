//! gensort's and valsort's checksum: the sum over records of each record's CRC-32 (zlib's, the
//! common IEEE polynomial), in 128 bits. Being a sum, it does not depend on the order of records,
//! so it survives sorting.

use rayon::prelude::*;

use crate::RECORD_LEN;

/// The CRC-32 of one record.
#[inline]
pub fn record_crc(record: &[u8]) -> u32 {
    crc32fast::hash(record)
}

/// The sum of the CRC-32 of every whole record in `records` (a trailing partial record is
/// ignored; callers that care check the length first).
pub fn checksum(records: &[u8]) -> u128 {
    records
        .chunks_exact(RECORD_LEN)
        .map(|r| record_crc(r) as u128)
        .sum()
}

/// [`checksum`] over rayon's pool.
pub fn par_checksum(records: &[u8]) -> u128 {
    let whole = records.len() - records.len() % RECORD_LEN;
    records[..whole]
        .par_chunks(RECORD_LEN * 4096)
        .map(checksum)
        .sum()
}

/// The checksum as gensort `-c` and valsort print it: lower-case hex without leading zeros.
pub fn checksum_hex(sum: u128) -> String {
    format!("{sum:x}")
}
