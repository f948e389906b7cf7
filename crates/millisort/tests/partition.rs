//! Spec §9 oracles for the partitioning alone, as pure functions: the same splitters from one
//! and two levels (§9.1.6), the global rank of a pivot sorter (§9.1.6), pivot counts (§9.1.7),
//! bucket semantics (§9.1.5), the worst-case bound (§9.2.10).

use coflowkit_millisort::bucket::{bucket_of, ranges};
use coflowkit_millisort::key::compose_u64;
use coflowkit_millisort::merge::merge_all;
use coflowkit_millisort::sample::regular_pivots;
use coflowkit_millisort::two_level::{self, Roles};
use coflowkit_millisort::{one_level, Pivot, Rule, Totals};
use proptest::prelude::*;

/// Sorted composite keys per rank from raw values (few distinct values: many ties).
fn keys_of(raw: &[Vec<u64>]) -> Vec<Vec<u128>> {
    raw.iter()
        .enumerate()
        .map(|(src, v)| {
            let mut k: Vec<u128> = v
                .iter()
                .enumerate()
                .map(|(i, &x)| compose_u64(x, src as u16, i as u32))
                .collect();
            k.sort_unstable();
            k
        })
        .collect()
}

fn pivots_of(keys: &[Vec<u128>], p: usize, rule: Rule) -> Vec<Vec<Pivot>> {
    keys.iter()
        .enumerate()
        .map(|(src, k)| regular_pivots(k, p, rule, src as u32))
        .collect()
}

fn rule_strategy() -> impl Strategy<Value = Rule> {
    prop_oneof![Just(Rule::Naive), Just(Rule::Weighted)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn two_levels_give_the_one_level_splitters(
        raw in proptest::collection::vec(proptest::collection::vec(0u64..40, 1..60), 1..45),
        r in 2usize..12,
        s in 1usize..3,
        rule in rule_strategy(),
    ) {
        let m = raw.len();
        let keys = keys_of(&raw);
        let lists = pivots_of(&keys, s * m, rule);
        let one = one_level::splitters(&lists, rule).unwrap();
        let two = two_level::splitters(&lists, r, rule).unwrap();
        prop_assert_eq!(one.len(), m - 1);
        prop_assert_eq!(&one, &two);
        // Splitters are non-decreasing, so buckets are key ranges.
        prop_assert!(one.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_sorters_global_rank_is_the_pivots_on_lower_sorters(
        raw in proptest::collection::vec(proptest::collection::vec(0u64..1000, 1..30), 2..40),
        r in 2usize..8,
    ) {
        let m = raw.len();
        let lists = pivots_of(&keys_of(&raw), m, Rule::Weighted);
        let roles = Roles::new(m, r).unwrap();
        let k = roles.sorters();
        let merged: Vec<Vec<Pivot>> = (0..k).map(|s| merge_all(&lists[roles.group(s)])).collect();
        // A pivot sorter receives r·(sM+1) pivots, fewer for a partial last group.
        for (s, list) in merged.iter().enumerate() {
            prop_assert_eq!(list.len(), roles.group(s).len() * (m + 1));
        }
        let level2: Vec<Vec<Pivot>> = merged.iter().map(|x| two_level::level2_pivots(x, k)).collect();
        prop_assert!(level2.iter().all(|l| l.len() == k));
        let bounds = two_level::bucket_bounds(&merge_all(&level2), k);
        let sent: Vec<_> = merged.iter().map(|x| two_level::split(x, &bounds)).collect();
        let mut lower = Totals::default();
        let mut all = Vec::new();
        for dst in 0..k {
            let pieces: Vec<_> = sent.iter().map(|row| row[dst].clone()).collect();
            let (below, mine) = two_level::receive(&pieces);
            prop_assert_eq!(below, lower);
            lower = lower.plus(Totals::of(&mine));
            all.extend(mine);
        }
        // Concatenated in sorter order, the shuffled pivots are the global sorted order.
        prop_assert_eq!(all, merge_all(&lists));
    }

    #[test]
    fn each_bucket_holds_exactly_its_key_range_and_at_most_twice_the_ideal(
        raw in proptest::collection::vec(proptest::collection::vec(0u64..u64::MAX, 200..201), 2..12),
        rule in rule_strategy(),
    ) {
        let m = raw.len();
        let keys = keys_of(&raw);
        let lists = pivots_of(&keys, m, rule);
        let spl = one_level::splitters(&lists, rule).unwrap();
        let mut sizes = vec![0usize; m];
        for k in &keys {
            for (j, rg) in ranges(k, &spl).into_iter().enumerate() {
                prop_assert!(k[rg.clone()].iter().all(|&x| bucket_of(x, &spl) == j));
                sizes[j] += rg.len();
            }
        }
        // Regular sampling with s = 1: every partition <= (1 + 1/s) N/M (+ one group's
        // rounding per rank; the weighted rule's half groups can add one more).
        let ideal = 200 * m;
        let bound = 2 * ideal / m + 2 * m;
        prop_assert!(sizes.iter().all(|&x| x <= bound), "{:?} > {}", sizes, bound);
    }
}

#[test]
fn one_rank_has_no_splitters_and_no_ranks_at_all_is_refused() {
    let lists = pivots_of(&keys_of(&[vec![5, 1, 3]]), 1, Rule::Weighted);
    assert!(one_level::splitters(&lists, Rule::Weighted)
        .unwrap()
        .is_empty());
    assert!(two_level::splitters(&lists, 10, Rule::Weighted)
        .unwrap()
        .is_empty());
    let empty: Vec<Vec<Pivot>> = vec![vec![], vec![]];
    assert!(one_level::splitters(&empty, Rule::Naive).is_err());
    assert!(two_level::splitters(&empty, 10, Rule::Naive).is_err());
}
