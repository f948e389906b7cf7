//! Global validation of a sort's output, outside the timed region (spec §8.3.8, §9.1): each
//! rank summarises its input and output (sortdata's valsort `Summary`: count, sum of per-record
//! CRC-32, duplicates, unordered), checks its composite keys strictly increase and, fully, that
//! every output record is the generator's record at the origin its key carries (so keys are
//! still paired with their values); rank 0 combines the parts in rank order, which also checks
//! the boundaries between neighbours.

use coflowkit_sortdata::{record, RecordKind, Summary, SUMMARY_LEN};
use serde::Serialize;

use crate::key::{index, key_bytes, origin};
use crate::records::Block;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Order, boundaries, count and checksum.
    Sums,
    /// Also regenerate every output record from the origin its key carries.
    Full,
}

/// One rank's part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub input: Summary,
    pub output: Summary,
    /// Output positions whose composite key is not above the previous one.
    pub composite_unordered: u64,
    /// Output records that are not the generator's record at their key's origin.
    pub unpaired: u64,
    pub first: Option<u128>,
    pub last: Option<u128>,
}

/// Check this rank's output; rank `o` generated records `[o·per_rank, (o+1)·per_rank)`.
pub fn check(input: &Summary, out: &Block, per_rank: u64, kind: RecordKind, depth: Depth) -> Part {
    let records = out.to_records();
    let output = Summary::of(&records);
    let composite_unordered = out.keys.windows(2).filter(|w| w[0] >= w[1]).count() as u64;
    let mut unpaired = 0;
    if depth == Depth::Full {
        for (i, &k) in out.keys.iter().enumerate() {
            let r = origin(k) as u128 * per_rank as u128 + index(k) as u128;
            let want = record(r, kind);
            if want[..10] != key_bytes(k) || &want[10..] != out.value(i) {
                unpaired += 1;
            }
        }
    }
    Part {
        input: input.clone(),
        output,
        composite_unordered,
        unpaired,
        first: out.keys.first().copied(),
        last: out.keys.last().copied(),
    }
}

const PART_LEN: usize = 2 * SUMMARY_LEN + 16 + 2 * 17;

impl Part {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(PART_LEN);
        b.extend_from_slice(&self.input.to_valsort_bytes());
        b.extend_from_slice(&self.output.to_valsort_bytes());
        b.extend_from_slice(&self.composite_unordered.to_le_bytes());
        b.extend_from_slice(&self.unpaired.to_le_bytes());
        for k in [self.first, self.last] {
            b.push(k.is_some() as u8);
            b.extend_from_slice(&k.unwrap_or(0).to_le_bytes());
        }
        b
    }

    pub fn decode(b: &[u8]) -> Option<Part> {
        if b.len() != PART_LEN {
            return None;
        }
        let summary =
            |at: usize| Summary::from_valsort_bytes(b[at..at + SUMMARY_LEN].try_into().ok()?).ok();
        let u = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8"));
        let key = |at: usize| {
            (b[at] == 1).then(|| u128::from_le_bytes(b[at + 1..at + 17].try_into().expect("16")))
        };
        let o = 2 * SUMMARY_LEN;
        Some(Part {
            input: summary(0)?,
            output: summary(SUMMARY_LEN)?,
            composite_unordered: u(o),
            unpaired: u(o + 8),
            first: key(o + 16),
            last: key(o + 33),
        })
    }
}

/// The verdict over all ranks (issue 20's `validation` object, with the details).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Validation {
    pub ok: bool,
    pub records: u64,
    /// Sum of per-record CRC-32 of the output, hex as valsort prints it.
    pub checksum: String,
    pub input_records: u64,
    pub input_checksum: String,
    pub duplicates: u64,
    /// 10-byte keys out of order, within ranks and across boundaries (valsort's count).
    pub unordered: u64,
    /// Composite keys (key, origin, index) not strictly increasing, within and across ranks.
    pub composite_unordered: u64,
    /// Records not paired with their own value (only with full validation).
    pub unpaired: u64,
    pub full: bool,
}

/// Combine the ranks' parts, in rank order.
pub fn combine(parts: &[Part], depth: Depth) -> Validation {
    let input = Summary::combine(&parts.iter().map(|p| p.input.clone()).collect::<Vec<_>>());
    let output = Summary::combine(&parts.iter().map(|p| p.output.clone()).collect::<Vec<_>>());
    let mut composite_unordered: u64 = parts.iter().map(|p| p.composite_unordered).sum();
    let mut prev: Option<u128> = None;
    for p in parts {
        if let (Some(a), Some(b)) = (prev, p.first) {
            composite_unordered += (a >= b) as u64;
        }
        prev = p.last.or(prev);
    }
    let unpaired = parts.iter().map(|p| p.unpaired).sum();
    let ok = output.records == input.records
        && output.checksum == input.checksum
        && output.unordered == 0
        && composite_unordered == 0
        && unpaired == 0;
    Validation {
        ok,
        records: output.records,
        checksum: format!("{:x}", output.checksum),
        input_records: input.records,
        input_checksum: format!("{:x}", input.checksum),
        duplicates: output.duplicates,
        unordered: output.unordered,
        composite_unordered,
        unpaired,
        full: depth == Depth::Full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(first: u64, n: usize, origin: u16) -> (Summary, Block) {
        let recs = coflowkit_sortdata::generate(first as u128, n, RecordKind::Binary);
        (Summary::of(&recs), Block::from_records(&recs, origin))
    }

    #[test]
    fn a_correct_two_rank_sort_passes_and_every_kind_of_damage_fails() {
        let (s0, b0) = block(0, 30, 0);
        let (s1, b1) = block(30, 30, 1);
        let mut keys: Vec<u128> = b0.keys.iter().chain(&b1.keys).copied().collect();
        keys.sort_unstable();
        let value = |k: u128| {
            let b = if origin(k) == 0 { &b0 } else { &b1 };
            b.value(index(k) as usize).to_vec()
        };
        let mk = |ks: &[u128]| Block {
            keys: ks.to_vec(),
            values: ks.iter().flat_map(|&k| value(k)).collect(),
        };
        let (lo, hi) = keys.split_at(25);
        let parts = |a: &Block, b: &Block| {
            vec![
                check(&s0, a, 30, RecordKind::Binary, Depth::Full),
                check(&s1, b, 30, RecordKind::Binary, Depth::Full),
            ]
        };
        let good = combine(&parts(&mk(lo), &mk(hi)), Depth::Full);
        assert!(good.ok, "{good:?}");
        assert_eq!(
            (good.records, good.checksum.clone()),
            (60, good.input_checksum.clone())
        );
        // Neighbours swapped: each rank is sorted, the boundary is not.
        let bad = combine(&parts(&mk(hi), &mk(lo)), Depth::Full);
        assert!(
            !bad.ok && bad.unordered == 1 && bad.composite_unordered == 1,
            "{bad:?}"
        );
        // Two values swapped: order and count hold; pairing fails, checksum too.
        let mut swapped = mk(lo);
        let (a, b) = (swapped.value(0).to_vec(), swapped.value(1).to_vec());
        swapped.values[..90].copy_from_slice(&b);
        swapped.values[90..180].copy_from_slice(&a);
        let v = combine(&parts(&swapped, &mk(hi)), Depth::Full);
        assert!(!v.ok && v.unpaired == 2, "{v:?}");
        // A record lost.
        let v = combine(&parts(&mk(&lo[1..]), &mk(hi)), Depth::Sums);
        assert!(!v.ok && v.records == 59, "{v:?}");
        // Parts survive their encoding.
        let p = check(&s0, &mk(lo), 30, RecordKind::Binary, Depth::Full);
        assert_eq!(Part::decode(&p.encode()).unwrap(), p);
    }
}
