//! Splitter selection over the globally sorted pivots (spec §2.4, §2.6). Splitters are in the
//! code's form (spec §10.7): `m - 1` right-inclusive upper bounds, bucket j holds the keys in
//! (s_{j-1}, s_j] and the last bucket everything above s_{m-2}.
//!
//! Both rules are written for a *slice* of the sorted pivots that starts after `before` (the
//! count and weight of all smaller pivots), so a pivot sorter of the two-level scheme chooses
//! the splitters in its range alone, and the one-level scheme is the slice that is everything.

use crate::pivot::{Pivot, Totals};
use crate::MilliSortError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Splitter j is the ((j+1)·count/m)-th smallest pivot (1-based): s·m pivots per rank give
    /// the paper's "every sM-th pivot".
    Naive,
    /// Splitter j is the first pivot whose running weight reaches (j+1)·W/m, with BEGIN and END
    /// pivots weighing half (spec §2.6, the paper's rule and the authors' simulation script).
    Weighted,
}

impl Rule {
    pub fn parse(s: &str) -> Result<Rule, MilliSortError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "naive" => Ok(Rule::Naive),
            "weighted" | "improved" => Ok(Rule::Weighted),
            _ => Err(MilliSortError::BadOption(format!(
                "unknown splitter rule `{s}` (expected naive or weighted)"
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Rule::Naive => "naive",
            Rule::Weighted => "weighted",
        }
    }
}

/// Global index of naive splitter j among `count` sorted pivots (clamped to the first pivot
/// when there are fewer pivots than buckets).
fn naive_index(j: usize, count: u64, m: usize) -> u64 {
    ((j as u128 + 1) * count as u128 / m as u128).max(1) as u64 - 1
}

/// The splitters (index j in 0..m-1, key) that fall in `slice`, the sorted pivots that follow
/// `before` in the global order of `total` pivots.
pub fn select_in_range(
    slice: &[Pivot],
    before: Totals,
    total: Totals,
    m: usize,
    rule: Rule,
) -> Vec<(usize, u128)> {
    let mut out = Vec::new();
    if m < 2 || total.count == 0 {
        return out;
    }
    match rule {
        Rule::Naive => {
            let end = before.count + slice.len() as u64;
            for j in 0..m - 1 {
                let i = naive_index(j, total.count, m);
                if i >= before.count && i < end {
                    out.push((j, slice[(i - before.count) as usize].key));
                }
            }
        }
        Rule::Weighted => {
            // Threshold j is reached when running·m >= (j+1)·W (exact in integers).
            let (mm, w) = (m as u128, total.weight as u128);
            let reached = |run: u64, j: usize| run as u128 * mm >= (j as u128 + 1) * w;
            let mut j = 0;
            while j < m - 1 && reached(before.weight, j) {
                j += 1;
            }
            let mut run = before.weight;
            for p in slice {
                run += p.weight();
                while j < m - 1 && reached(run, j) {
                    out.push((j, p.key));
                    j += 1;
                }
            }
        }
    }
    out
}

/// The `m - 1` splitters from the parts chosen by the pivot sorters; every index exactly once.
pub fn assemble(m: usize, parts: &[(usize, u128)]) -> Result<Vec<u128>, MilliSortError> {
    let n = m.saturating_sub(1);
    let mut out: Vec<Option<u128>> = vec![None; n];
    for &(j, key) in parts {
        let slot = out.get_mut(j).ok_or(MilliSortError::SplitterGap(j))?;
        if slot.replace(key).is_some() {
            return Err(MilliSortError::SplitterGap(j));
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(j, s)| s.ok_or(MilliSortError::SplitterGap(j)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pivot::Tag;

    fn normal(keys: &[u128]) -> Vec<Pivot> {
        keys.iter()
            .enumerate()
            .map(|(i, &key)| Pivot {
                key,
                src: 0,
                pos: i as u32,
                tag: Tag::Normal,
            })
            .collect()
    }

    #[test]
    fn naive_takes_every_count_over_m_th_pivot() {
        // 12 pivots, 4 buckets: the 3rd, 6th and 9th smallest (1-based).
        let ps = normal(&(10..22).collect::<Vec<_>>());
        let t = Totals::of(&ps);
        let s = select_in_range(&ps, Totals::default(), t, 4, Rule::Naive);
        assert_eq!(s, vec![(0, 12), (1, 15), (2, 18)]);
        // The same from two slices.
        let (a, b) = ps.split_at(5);
        let mut parts = select_in_range(a, Totals::default(), t, 4, Rule::Naive);
        parts.extend(select_in_range(b, Totals::of(a), t, 4, Rule::Naive));
        assert_eq!(assemble(4, &parts).unwrap(), vec![12, 15, 18]);
    }

    #[test]
    fn weighted_counts_begin_and_end_as_half() {
        // Two ranks of 2 groups each: B(0.5) N(1) E(0.5) twice, interleaved; W = 4 groups,
        // m = 2: the splitter is the first pivot whose running weight reaches 2 groups.
        let tags = [
            Tag::Begin,
            Tag::Begin,
            Tag::Normal,
            Tag::Normal,
            Tag::End,
            Tag::End,
        ];
        let ps: Vec<Pivot> = tags
            .iter()
            .enumerate()
            .map(|(i, &tag)| Pivot {
                key: i as u128,
                src: 0,
                pos: i as u32,
                tag,
            })
            .collect();
        let t = Totals::of(&ps);
        assert_eq!(t.weight, 8);
        // Running (half-units): 1, 2, 4, 6, ... -> the third pivot reaches 4 = 8 / 2.
        let s = select_in_range(&ps, Totals::default(), t, 2, Rule::Weighted);
        assert_eq!(s, vec![(0, 2)]);
    }

    #[test]
    fn assemble_names_a_missing_or_doubled_splitter() {
        assert!(matches!(
            assemble(3, &[(0, 1)]),
            Err(MilliSortError::SplitterGap(1))
        ));
        assert!(matches!(
            assemble(2, &[(0, 1), (0, 2)]),
            Err(MilliSortError::SplitterGap(0))
        ));
        assert!(Rule::parse("median")
            .unwrap_err()
            .to_string()
            .contains("median"));
    }
}
