//! Two-level (hierarchical) partitioning (spec §2.5): the pure steps that the distributed sort
//! runs in order, and `splitters`, which runs them all in one process (the oracle that they
//! give the one-level splitters).
//!
//! Roles: rank i's pivot sorter is rank r·⌊i/r⌋; there are ⌈m/r⌉ of them. Each merges its
//! group's pivots, samples as many level-2 pivots as there are pivot sorters ([code]), and a
//! coordinator (pivot sorter 0) cuts the merged level-2 pivots into one right-inclusive range
//! per pivot sorter ("bucket bounds"). The pivot shuffle sends each range to its sorter with
//! the count and weight of the sender's pivots below it (the local rank); a sorter's global
//! rank is the sum of what it receives, and it chooses the splitters in its range alone.

use std::ops::Range;

use crate::merge::merge_all;
use crate::pivot::{self, Pivot, Totals};
use crate::rule::{assemble, select_in_range, Rule};
use crate::sample::sample_sorted;
use crate::MilliSortError;

/// Who serves whom, for `m` ranks and reduction factor `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roles {
    pub m: usize,
    pub r: usize,
}

impl Roles {
    pub fn new(m: usize, r: usize) -> Result<Roles, MilliSortError> {
        if m == 0 || r < 2 {
            return Err(MilliSortError::BadOption(format!(
                "two-level partitioning needs at least one rank and a reduction factor of at least 2 (got {m} ranks, r = {r})"
            )));
        }
        Ok(Roles { m, r })
    }

    pub fn sorters(&self) -> usize {
        self.m.div_ceil(self.r)
    }

    /// Index of the pivot sorter serving `rank` (its rank is `index · r`).
    pub fn sorter_of(&self, rank: usize) -> usize {
        rank / self.r
    }

    pub fn is_sorter(&self, rank: usize) -> bool {
        rank.is_multiple_of(self.r)
    }

    /// World ranks of all pivot sorters.
    pub fn sorter_ranks(&self) -> Vec<usize> {
        (0..self.sorters()).map(|s| s * self.r).collect()
    }

    /// World ranks served by pivot sorter `s` (itself first).
    pub fn group(&self, s: usize) -> Range<usize> {
        s * self.r..((s + 1) * self.r).min(self.m)
    }
}

/// Level-2 pivots of one pivot sorter: as many as there are pivot sorters, end of group.
pub fn level2_pivots(merged: &[Pivot], sorters: usize) -> Vec<Pivot> {
    sample_sorted(merged, sorters)
}

/// At the coordinator: `sorters - 1` right-inclusive bounds cutting the merged level-2 pivots
/// into `sorters` ranges (the naive rule on pivots).
pub fn bucket_bounds(level2: &[Pivot], sorters: usize) -> Vec<Pivot> {
    if level2.is_empty() {
        return Vec::new();
    }
    let n = level2.len() as u128;
    (0..sorters.saturating_sub(1))
        .map(|j| {
            let i = ((j as u128 + 1) * n / sorters as u128).max(1) - 1;
            level2[i as usize]
        })
        .collect()
}

/// One message of the pivot shuffle: the sender's pivots in one range and the count and
/// weight of the sender's pivots below that range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub below: Totals,
    pub pivots: Vec<Pivot>,
}

/// A pivot sorter's merged pivots cut by the bounds: one piece per pivot sorter.
pub fn split(merged: &[Pivot], bounds: &[Pivot]) -> Vec<Piece> {
    let mut out = Vec::with_capacity(bounds.len() + 1);
    let mut start = 0;
    let mut below = Totals::default();
    for j in 0..=bounds.len() {
        let end = match bounds.get(j) {
            Some(b) => start + merged[start..].partition_point(|p| p <= b),
            None => merged.len(),
        };
        let pivots = merged[start..end].to_vec();
        let t = Totals::of(&pivots);
        out.push(Piece { below, pivots });
        below = below.plus(t);
        start = end;
    }
    out
}

/// A receiving pivot sorter: its global rank (count and weight of all pivots held by lower
/// sorters: the sum of the local ranks) and its merged pivots.
pub fn receive(pieces: &[Piece]) -> (Totals, Vec<Pivot>) {
    let below = pieces
        .iter()
        .fold(Totals::default(), |acc, p| acc.plus(p.below));
    let lists: Vec<Vec<Pivot>> = pieces.iter().map(|p| p.pivots.clone()).collect();
    (below, merge_all(&lists))
}

/// `below.count u64 | below.weight u64 | pivots`.
pub fn encode_piece(p: &Piece) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + p.pivots.len() * pivot::PIVOT_BYTES);
    out.extend_from_slice(&p.below.count.to_le_bytes());
    out.extend_from_slice(&p.below.weight.to_le_bytes());
    pivot::encode(&p.pivots, &mut out);
    out
}

pub fn decode_piece(b: &[u8]) -> Option<Piece> {
    if b.len() < 16 {
        return None;
    }
    Some(Piece {
        below: Totals {
            count: u64::from_le_bytes(b[0..8].try_into().ok()?),
            weight: u64::from_le_bytes(b[8..16].try_into().ok()?),
        },
        pivots: pivot::decode(&b[16..])?,
    })
}

/// The whole two-level scheme in one process, for `lists.len()` ranks' sorted pivots.
pub fn splitters(lists: &[Vec<Pivot>], r: usize, rule: Rule) -> Result<Vec<u128>, MilliSortError> {
    let roles = Roles::new(lists.len(), r)?;
    let k = roles.sorters();
    // Step 2: each pivot sorter merges its group's pivots.
    let merged: Vec<Vec<Pivot>> = (0..k).map(|s| merge_all(&lists[roles.group(s)])).collect();
    let total = merged
        .iter()
        .fold(Totals::default(), |acc, m| acc.plus(Totals::of(m)));
    if total.count == 0 {
        return Err(MilliSortError::NoPivots);
    }
    // Steps 3-5: level-2 pivots, merged at the coordinator, cut into bounds.
    let level2: Vec<Vec<Pivot>> = merged.iter().map(|m| level2_pivots(m, k)).collect();
    let bounds = bucket_bounds(&merge_all(&level2), k);
    // Step 6: the pivot shuffle.
    let sent: Vec<Vec<Piece>> = merged.iter().map(|m| split(m, &bounds)).collect();
    // Step 7: each sorter chooses its splitters alone; step 8 gathers them.
    let mut parts = Vec::new();
    for dst in 0..k {
        let pieces: Vec<Piece> = sent.iter().map(|row| row[dst].clone()).collect();
        let (below, mine) = receive(&pieces);
        parts.extend(select_in_range(&mine, below, total, roles.m, rule));
    }
    assemble(roles.m, &parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_cover_every_rank_once_with_a_partial_last_group() {
        let r = Roles::new(23, 10).unwrap();
        assert_eq!(r.sorters(), 3);
        assert_eq!(r.sorter_ranks(), vec![0, 10, 20]);
        assert_eq!(r.group(2), 20..23);
        assert_eq!(r.sorter_of(19), 1);
        assert!(Roles::new(4, 1).is_err());
    }

    #[test]
    fn piece_encoding_round_trips() {
        let p = Piece {
            below: Totals {
                count: 3,
                weight: 5,
            },
            pivots: vec![Pivot {
                key: 9,
                src: 1,
                pos: 2,
                tag: crate::pivot::Tag::End,
            }],
        };
        assert_eq!(decode_piece(&encode_piece(&p)).unwrap(), p);
        assert!(decode_piece(&[0; 15]).is_none());
    }
}
