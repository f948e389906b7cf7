//! A rank's data as the sort holds it (spec §2.1): one block of composite keys and one of
//! 90-byte values in the same order, from and back to 100-byte Sort Benchmark records.

use coflowkit_sortdata::{KEY_LEN, RECORD_LEN, VALUE_LEN};

use crate::key::{compose, key_bytes};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    pub keys: Vec<u128>,
    /// `keys.len() * VALUE_LEN` bytes.
    pub values: Vec<u8>,
}

impl Block {
    /// Records held at rank `origin`, numbered from 0 there.
    pub fn from_records(records: &[u8], origin: u16) -> Block {
        let n = records.len() / RECORD_LEN;
        let mut keys = Vec::with_capacity(n);
        let mut values = Vec::with_capacity(n * VALUE_LEN);
        for (i, r) in records.chunks_exact(RECORD_LEN).enumerate() {
            keys.push(compose(
                r[..KEY_LEN].try_into().expect("10"),
                origin,
                i as u32,
            ));
            values.extend_from_slice(&r[KEY_LEN..]);
        }
        Block { keys, values }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn value(&self, i: usize) -> &[u8] {
        &self.values[i * VALUE_LEN..(i + 1) * VALUE_LEN]
    }

    /// The records again: key bytes then value, in block order.
    pub fn to_records(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() * RECORD_LEN);
        for (i, &k) in self.keys.iter().enumerate() {
            out.extend_from_slice(&key_bytes(k));
            out.extend_from_slice(self.value(i));
        }
        out
    }
}

/// Values moved into the order of `keys` by the index each key carries (spec §2.7: the
/// record's position before the local sort).
pub fn rearrange_by_index(keys: &[u128], values: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(keys.len() * VALUE_LEN);
    for &k in keys {
        let i = crate::key::index(k) as usize;
        out.extend_from_slice(&values[i * VALUE_LEN..(i + 1) * VALUE_LEN]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_values_follow_their_keys_through_a_sort() {
        let recs = coflowkit_sortdata::generate(40, 50, coflowkit_sortdata::RecordKind::Binary);
        let b = Block::from_records(&recs, 3);
        assert_eq!(b.to_records(), recs);
        let mut keys = b.keys.clone();
        keys.sort_unstable();
        let sorted = Block {
            values: rearrange_by_index(&keys, &b.values),
            keys,
        };
        let out = sorted.to_records();
        let mut want: Vec<&[u8]> = recs.chunks(RECORD_LEN).collect();
        want.sort();
        assert_eq!(out, want.concat());
    }
}
