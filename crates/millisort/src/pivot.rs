//! A pivot: a record's composite key plus where it came from, and its tag for the weighted
//! rule. Pivots are ordered by (key, source, position in the source's list), a total order that
//! every level of the partitioning uses, so one- and two-level partitioning see the same sorted
//! pivots even when keys repeat.

use std::cmp::Ordering;

/// Position of a pivot in its source's list, for the weighted rule (spec §2.6): the head and
/// the last pivot stand for half a group each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tag {
    Begin,
    Normal,
    End,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pivot {
    pub key: u128,
    pub src: u32,
    pub pos: u32,
    pub tag: Tag,
}

impl Pivot {
    /// Weight in half groups: 1 for a BEGIN or END pivot, 2 for a NORMAL one.
    pub fn weight(&self) -> u64 {
        match self.tag {
            Tag::Normal => 2,
            Tag::Begin | Tag::End => 1,
        }
    }
}

impl Ord for Pivot {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.key, self.src, self.pos).cmp(&(o.key, o.src, o.pos))
    }
}

impl PartialOrd for Pivot {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Count and weight of a set of pivots (the "local rank" of the pivot shuffle is the count of
/// the sender's pivots below a bucket; the weight is what the weighted rule needs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub count: u64,
    pub weight: u64,
}

impl Totals {
    pub fn of(ps: &[Pivot]) -> Totals {
        Totals {
            count: ps.len() as u64,
            weight: ps.iter().map(Pivot::weight).sum(),
        }
    }

    pub fn plus(self, o: Totals) -> Totals {
        Totals {
            count: self.count + o.count,
            weight: self.weight + o.weight,
        }
    }
}

/// Bytes of one encoded pivot: key u128, src u32, pos u32, tag u8 (little-endian).
pub const PIVOT_BYTES: usize = 25;

pub fn encode(ps: &[Pivot], out: &mut Vec<u8>) {
    out.reserve(ps.len() * PIVOT_BYTES);
    for p in ps {
        out.extend_from_slice(&p.key.to_le_bytes());
        out.extend_from_slice(&p.src.to_le_bytes());
        out.extend_from_slice(&p.pos.to_le_bytes());
        out.push(match p.tag {
            Tag::Begin => 0,
            Tag::Normal => 1,
            Tag::End => 2,
        });
    }
}

/// `None` if the length is not a whole number of pivots or a tag is unknown.
pub fn decode(b: &[u8]) -> Option<Vec<Pivot>> {
    if !b.len().is_multiple_of(PIVOT_BYTES) {
        return None;
    }
    b.chunks_exact(PIVOT_BYTES)
        .map(|c| {
            Some(Pivot {
                key: u128::from_le_bytes(c[0..16].try_into().ok()?),
                src: u32::from_le_bytes(c[16..20].try_into().ok()?),
                pos: u32::from_le_bytes(c[20..24].try_into().ok()?),
                tag: match c[24] {
                    0 => Tag::Begin,
                    1 => Tag::Normal,
                    2 => Tag::End,
                    _ => return None,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_rejects_bad_lengths_and_tags() {
        let ps = vec![
            Pivot {
                key: u128::MAX,
                src: 3,
                pos: 0,
                tag: Tag::Begin,
            },
            Pivot {
                key: 7,
                src: 0,
                pos: 9,
                tag: Tag::End,
            },
        ];
        let mut b = Vec::new();
        encode(&ps, &mut b);
        assert_eq!(decode(&b).unwrap(), ps);
        assert!(decode(&b[1..]).is_none());
        b[24] = 9;
        assert!(decode(&b).is_none());
    }

    #[test]
    fn order_breaks_key_ties_by_source_then_position() {
        let a = Pivot {
            key: 5,
            src: 1,
            pos: 0,
            tag: Tag::Normal,
        };
        let b = Pivot {
            key: 5,
            src: 0,
            pos: 7,
            tag: Tag::Normal,
        };
        let c = Pivot {
            key: 5,
            src: 0,
            pos: 8,
            tag: Tag::End,
        };
        assert!(b < c && c < a);
    }
}
