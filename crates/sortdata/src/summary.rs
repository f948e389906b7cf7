//! What valsort learns about a run of records: count, checksum, duplicate and out-of-order keys,
//! the first and last records. Summaries of consecutive parts combine into the summary of the
//! whole, which is how partitioned (or distributed) sort output is checked.

use crate::{checksum::record_crc, Error, KEY_LEN, RECORD_LEN, VALUE_LEN};

/// A summary of a run of records, valsort's `struct summary` in Rust.
///
/// Record numbers are 0-based positions in the run. A record is *unordered* when its key is
/// smaller than the previous record's, a *duplicate* when equal; keys compare as 10 unsigned
/// bytes (valsort's `memcmp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Records in the run.
    pub records: u64,
    /// Sum of each record's CRC-32 (see [`crate::checksum`]).
    pub checksum: u128,
    /// Records whose key equals the previous record's.
    pub duplicates: u64,
    /// Records whose key is smaller than the previous record's.
    pub unordered: u64,
    /// The position of the first unordered record (never 0: the first record has no predecessor).
    pub first_unordered: Option<u64>,
    /// The first record (None for an empty run).
    pub first_record: Option<[u8; RECORD_LEN]>,
    /// The last record (None for an empty run).
    pub last_record: Option<[u8; RECORD_LEN]>,
}

impl Summary {
    /// The summary of `records`, whole 100-byte records.
    ///
    /// # Panics
    /// If `records.len()` is not a multiple of [`RECORD_LEN`]; [`Summary::try_of`] returns an
    /// error instead, for input read from outside.
    pub fn of(records: &[u8]) -> Summary {
        Summary::try_of(records).unwrap_or_else(|e| panic!("Summary::of: {e}"))
    }

    /// The summary of `records`, or an error naming the partial record at the end.
    pub fn try_of(records: &[u8]) -> Result<Summary, Error> {
        let mut s = Summary::default();
        s.push_records(records)?;
        Ok(s)
    }

    /// Appends whole records to the run summarised so far.
    pub fn push_records(&mut self, records: &[u8]) -> Result<(), Error> {
        let partial = records.len() % RECORD_LEN;
        if partial != 0 {
            return Err(Error::PartialRecord {
                record: self.records + (records.len() / RECORD_LEN) as u64,
                bytes: partial,
            });
        }
        let Some(first) = records.get(..RECORD_LEN) else {
            return Ok(());
        };
        match self.last_key() {
            None => self.first_record = Some(first.try_into().expect("one record")),
            Some(prev) => self.note_order(self.records, &prev, &first[..KEY_LEN]),
        }
        let mut sum = record_crc(first) as u128;
        let mut prev = first;
        for (j, rec) in records.chunks_exact(RECORD_LEN).enumerate().skip(1) {
            sum += record_crc(rec) as u128;
            self.note_order(self.records + j as u64, &prev[..KEY_LEN], &rec[..KEY_LEN]);
            prev = rec;
        }
        self.checksum = self.checksum.wrapping_add(sum);
        self.records += (records.len() / RECORD_LEN) as u64;
        self.last_record = Some(prev.try_into().expect("one record"));
        Ok(())
    }

    /// Appends one record.
    pub fn push(&mut self, record: &[u8; RECORD_LEN]) {
        self.push_records(record)
            .expect("one whole record is never partial");
    }

    /// Appends one record held as a key and a separate value (MilliSort keeps them apart).
    pub fn push_parts(&mut self, key: &[u8; KEY_LEN], value: &[u8; VALUE_LEN]) {
        let mut record = [0u8; RECORD_LEN];
        record[..KEY_LEN].copy_from_slice(key);
        record[KEY_LEN..].copy_from_slice(value);
        self.push(&record);
    }

    /// Counts the record at position `at` against its predecessor.
    #[inline]
    fn note_order(&mut self, at: u64, prev_key: &[u8], key: &[u8]) {
        match prev_key.cmp(key) {
            std::cmp::Ordering::Equal => self.duplicates += 1,
            std::cmp::Ordering::Greater => {
                self.unordered += 1;
                self.first_unordered.get_or_insert(at);
            }
            std::cmp::Ordering::Less => {}
        }
    }

    /// Appends the summary of the run that follows this one, as valsort `-s` does: the boundary
    /// pair (this run's last key, `next`'s first) counts as one more duplicate or unordered
    /// record, positions in `next` shift by this run's length. An empty `next` changes nothing.
    ///
    /// # Panics
    /// If a combined count passes 2^64 - 1, which only summaries read from outside can do;
    /// [`Summary::try_append`] returns an error instead.
    pub fn append(&mut self, next: &Summary) {
        self.try_append(next)
            .unwrap_or_else(|e| panic!("Summary::append: {e}"));
    }

    /// [`Summary::append`], or an error (leaving `self` unchanged) when a count would pass
    /// 2^64 - 1: summary files are read from outside and may claim any counts.
    pub fn try_append(&mut self, next: &Summary) -> Result<(), Error> {
        let (Some(next_first), Some(next_last)) = (&next.first_record, &next.last_record) else {
            return Ok(());
        };
        let over = |field| Error::CountOverflow { field };
        let (mut duplicates, mut unordered) = (next.duplicates, next.unordered);
        let mut first_unordered = self.first_unordered;
        if let Some(prev) = self.last_key() {
            match prev[..].cmp(&next_first[..KEY_LEN]) {
                std::cmp::Ordering::Equal => {
                    duplicates = duplicates.checked_add(1).ok_or(over("duplicate keys"))?;
                }
                std::cmp::Ordering::Greater => {
                    unordered = unordered.checked_add(1).ok_or(over("unordered records"))?;
                    first_unordered.get_or_insert(self.records);
                }
                std::cmp::Ordering::Less => {}
            }
        }
        if first_unordered.is_none() {
            first_unordered = match next.first_unordered {
                Some(i) => Some(
                    self.records
                        .checked_add(i)
                        .ok_or(over("first unordered record"))?,
                ),
                None => None,
            };
        }
        let records = self
            .records
            .checked_add(next.records)
            .ok_or(over("records"))?;
        let duplicates = self
            .duplicates
            .checked_add(duplicates)
            .ok_or(over("duplicate keys"))?;
        let unordered = self
            .unordered
            .checked_add(unordered)
            .ok_or(over("unordered records"))?;
        if self.first_record.is_none() {
            self.first_record = Some(*next_first);
        }
        self.first_unordered = first_unordered;
        self.records = records;
        self.checksum = self.checksum.wrapping_add(next.checksum);
        self.duplicates = duplicates;
        self.unordered = unordered;
        self.last_record = Some(*next_last);
        Ok(())
    }

    /// The summary of the concatenation of runs summarised by `parts`, in order.
    ///
    /// # Panics
    /// As [`Summary::append`]; [`Summary::try_combine`] returns an error instead.
    pub fn combine(parts: &[Summary]) -> Summary {
        Summary::try_combine(parts).unwrap_or_else(|(_, e)| panic!("Summary::combine: {e}"))
    }

    /// [`Summary::combine`], or the index of the part whose counts overflow, with the error.
    pub fn try_combine(parts: &[Summary]) -> Result<Summary, (usize, Error)> {
        let mut whole = Summary::default();
        for (i, part) in parts.iter().enumerate() {
            whole.try_append(part).map_err(|e| (i, e))?;
        }
        Ok(whole)
    }

    /// The key of the first record.
    pub fn first_key(&self) -> Option<[u8; KEY_LEN]> {
        self.first_record.map(|r| key_of(&r))
    }

    /// The key of the last record.
    pub fn last_key(&self) -> Option<[u8; KEY_LEN]> {
        self.last_record.map(|r| key_of(&r))
    }

    /// True when every record's key is at least its predecessor's.
    pub fn is_sorted(&self) -> bool {
        self.unordered == 0
    }
}

fn key_of(record: &[u8; RECORD_LEN]) -> [u8; KEY_LEN] {
    record[..KEY_LEN]
        .try_into()
        .expect("a record starts with its key")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: u8, fill: u8) -> [u8; RECORD_LEN] {
        let mut r = [fill; RECORD_LEN];
        r[..KEY_LEN].fill(key);
        r
    }

    fn run(keys: &[u8]) -> Vec<u8> {
        keys.iter().flat_map(|&k| rec(k, k ^ 0x55)).collect()
    }

    #[test]
    fn counts_duplicates_and_first_unordered() {
        let s = Summary::of(&run(&[1, 2, 2, 5, 3, 4, 1]));
        assert_eq!(s.records, 7);
        assert_eq!(s.duplicates, 1);
        assert_eq!(s.unordered, 2);
        assert_eq!(s.first_unordered, Some(4));
        assert_eq!(s.first_key(), Some([1; KEY_LEN]));
        assert_eq!(s.last_key(), Some([1; KEY_LEN]));
        assert!(!s.is_sorted());
    }

    #[test]
    fn boundaries_count_when_combined() {
        let parts = [run(&[1, 2]), run(&[2, 3]), run(&[]), run(&[0, 4])];
        let sums: Vec<Summary> = parts.iter().map(|p| Summary::of(p)).collect();
        let whole = Summary::combine(&sums);
        assert_eq!(whole, Summary::of(&parts.concat()));
        assert_eq!(whole.duplicates, 1);
        assert_eq!(whole.first_unordered, Some(4));
    }

    /// Summary files may claim any counts: sums past 2^64 - 1 are errors naming the count,
    /// and the summary is left as it was (session 29 panicked with an add overflow).
    #[test]
    fn counts_that_overflow_when_combined_are_errors() {
        let huge = |records: u64, duplicates: u64, key: u8| Summary {
            records,
            duplicates,
            first_record: Some(rec(key, 0)),
            last_record: Some(rec(key, 0)),
            ..Summary::default()
        };
        let half = huge(1 << 63, 0, 1);
        assert_eq!(
            Summary::try_combine(&[half.clone(), half.clone()]),
            Err((1, Error::CountOverflow { field: "records" }))
        );
        // The boundary pair is one more duplicate on top of u64::MAX.
        let dups = huge(5, u64::MAX, 1);
        let mut whole = huge(1, 0, 1);
        let before = whole.clone();
        assert_eq!(
            whole.try_append(&dups),
            Err(Error::CountOverflow {
                field: "duplicate keys"
            })
        );
        assert_eq!(whole, before);
        // Positions shift by the records before them.
        let mut late = huge(10, 0, 0);
        late.first_unordered = Some(u64::MAX - 1);
        let mut first = huge(5, 0, 0);
        assert_eq!(
            first.try_append(&late),
            Err(Error::CountOverflow {
                field: "first unordered record"
            })
        );
        // Within range, the checked sum equals the plain one.
        let ok = Summary::try_combine(&[huge(3, 1, 1), huge(4, 2, 1)]).unwrap();
        assert_eq!((ok.records, ok.duplicates), (7, 4));
    }

    #[test]
    fn partial_record_is_named() {
        let mut bytes = run(&[1, 2, 3]);
        bytes.truncate(250);
        match Summary::try_of(&bytes) {
            Err(Error::PartialRecord { record, bytes }) => {
                assert_eq!((record, bytes), (2, 50));
            }
            other => panic!("expected a partial record error, got {other:?}"),
        }
    }

    #[test]
    fn parts_are_key_and_value() {
        let r = rec(7, 9);
        let mut a = Summary::default();
        a.push(&r);
        let mut b = Summary::default();
        b.push_parts(
            r[..KEY_LEN].try_into().unwrap(),
            r[KEY_LEN..].try_into().unwrap(),
        );
        assert_eq!(a, b);
    }
}
