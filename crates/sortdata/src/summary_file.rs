//! valsort's partition summary file (`valsort -o FILE`, read back by `valsort -s`): valsort's
//! `struct summary` written as raw memory, 280 bytes per partition, summaries concatenated.
//!
//! | bytes   | field                                       |
//! |---------|---------------------------------------------|
//! | 0–15    | first unordered record (0 = none)           |
//! | 16–31   | unordered records                           |
//! | 32–47   | records                                     |
//! | 48–63   | duplicate keys                              |
//! | 64–79   | checksum                                    |
//! | 80–179  | first record                                |
//! | 180–279 | last record                                 |
//!
//! Each 128-bit number is two 64-bit halves, high half first, each half in the writer's native
//! byte order. We read and write little-endian halves: valsort's layout on x86-64 and AArch64,
//! checked byte for byte against valsort 1.5 (see docs/sortdata.md).

use crate::{Error, Summary, RECORD_LEN};

/// Bytes of one summary in the file.
pub const SUMMARY_LEN: usize = 5 * 16 + 2 * RECORD_LEN;

fn put(out: &mut [u8], at: usize, v: u128) {
    out[at..at + 8].copy_from_slice(&((v >> 64) as u64).to_le_bytes());
    out[at + 8..at + 16].copy_from_slice(&(v as u64).to_le_bytes());
}

fn get(bytes: &[u8], at: usize) -> u128 {
    let hi = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let lo = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().expect("8 bytes"));
    ((hi as u128) << 64) | lo as u128
}

impl Summary {
    /// This summary in valsort's file layout (an empty run writes zero records).
    pub fn to_valsort_bytes(&self) -> [u8; SUMMARY_LEN] {
        let mut out = [0u8; SUMMARY_LEN];
        put(&mut out, 0, self.first_unordered.unwrap_or(0) as u128);
        put(&mut out, 16, self.unordered as u128);
        put(&mut out, 32, self.records as u128);
        put(&mut out, 48, self.duplicates as u128);
        put(&mut out, 64, self.checksum);
        if let Some(first) = &self.first_record {
            out[80..180].copy_from_slice(first);
        }
        if let Some(last) = &self.last_record {
            out[180..280].copy_from_slice(last);
        }
        out
    }

    /// One summary from valsort's file layout.
    pub fn from_valsort_bytes(bytes: &[u8; SUMMARY_LEN]) -> Result<Summary, Error> {
        let count = |at: usize, field: &'static str| -> Result<u64, Error> {
            u64::try_from(get(bytes, at)).map_err(|_| Error::CountTooLarge { field })
        };
        let records = count(32, "records")?;
        let first_unordered = count(0, "first unordered record")?;
        let has_records = records > 0;
        let record_at = |at: usize| -> Option<[u8; RECORD_LEN]> {
            has_records.then(|| bytes[at..at + RECORD_LEN].try_into().expect("100 bytes"))
        };
        Ok(Summary {
            records,
            checksum: get(bytes, 64),
            duplicates: count(48, "duplicate keys")?,
            unordered: count(16, "unordered records")?,
            first_unordered: (first_unordered != 0).then_some(first_unordered),
            first_record: record_at(80),
            last_record: record_at(180),
        })
    }

    /// Every summary of a summary file (one or more concatenated), in order.
    pub fn parse_valsort_file(bytes: &[u8]) -> Result<Vec<Summary>, Error> {
        if !bytes.len().is_multiple_of(SUMMARY_LEN) {
            return Err(Error::PartialSummary {
                summary: (bytes.len() / SUMMARY_LEN) as u64,
                bytes: bytes.len() % SUMMARY_LEN,
            });
        }
        bytes
            .chunks_exact(SUMMARY_LEN)
            .map(|c| Summary::from_valsort_bytes(c.try_into().expect("whole summary")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate, RecordKind};

    #[test]
    fn round_trips() {
        let mut recs = generate(3, 50, RecordKind::Binary);
        recs.extend(generate(0, 10, RecordKind::Binary));
        let s = Summary::of(&recs);
        assert!(s.first_unordered.is_some());
        let bytes = s.to_valsort_bytes();
        assert_eq!(Summary::from_valsort_bytes(&bytes).unwrap(), s);
        let two = [bytes, bytes].concat();
        assert_eq!(
            Summary::parse_valsort_file(&two).unwrap(),
            vec![s.clone(), s]
        );
        assert!(matches!(
            Summary::parse_valsort_file(&two[..300]),
            Err(Error::PartialSummary {
                summary: 1,
                bytes: 20
            })
        ));
    }

    #[test]
    fn layout_puts_the_count_in_the_low_half() {
        let s = Summary::of(&generate(0, 1000, RecordKind::Binary));
        let b = s.to_valsort_bytes();
        // 1000 = 0x3e8 in the low half of the third field (bytes 40..48), high half zero.
        assert_eq!(&b[32..40], &[0; 8]);
        assert_eq!(&b[40..48], &1000u64.to_le_bytes());
        assert_eq!(&b[80..90], b"JimGrayRIP");
    }
}
