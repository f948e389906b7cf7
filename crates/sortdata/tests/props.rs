//! Properties: skip-ahead lands where stepping does; summaries of parts combine into the summary
//! of the whole, for random splits of random (sorted, shuffled, duplicated) runs.

use coflowkit_sortdata::{generate, lcg, RecordKind, Summary, KEY_LEN, RECORD_LEN};
use proptest::prelude::*;

proptest! {
    #[test]
    fn skip_ahead_equals_stepping(start in any::<u128>(), steps in 0usize..300) {
        let mut x = lcg::nth(start);
        for _ in 0..steps {
            x = lcg::step(x);
        }
        prop_assert_eq!(x, lcg::nth(start.wrapping_add(steps as u128)));
    }

    #[test]
    fn skip_ahead_composes(a in any::<u128>(), b in any::<u128>()) {
        // nth(a + b) = f^b(nth(a)).
        let x = lcg::Affine::STEP.pow(b).apply(lcg::nth(a));
        prop_assert_eq!(x, lcg::nth(a.wrapping_add(b)));
    }

    #[test]
    fn records_from_any_offset_continue_a_run(
        start in any::<u128>(), len in 1usize..80, cut in 0usize..80,
        kind in prop_oneof![
            Just(RecordKind::Binary), Just(RecordKind::Ascii),
            Just(RecordKind::Skewed), Just(RecordKind::AsciiSkewed)
        ],
    ) {
        let cut = cut % len;
        let whole = generate(start, len, kind);
        let tail = generate(start.wrapping_add(cut as u128), len - cut, kind);
        prop_assert_eq!(&whole[cut * RECORD_LEN..], &tail[..]);
    }

    #[test]
    fn combine_of_parts_is_summary_of_whole(
        keys in prop::collection::vec(0u8..6, 0..60),
        cuts in prop::collection::vec(0usize..60, 0..6),
        sort in any::<bool>(),
    ) {
        // Few distinct key bytes give duplicates and disorder in every mix; values differ.
        let mut keys = keys;
        if sort {
            keys.sort_unstable();
        }
        let records: Vec<u8> = keys
            .iter()
            .enumerate()
            .flat_map(|(i, &k)| {
                let mut r = [i as u8; RECORD_LEN];
                r[..KEY_LEN].fill(k);
                r
            })
            .collect();
        let n = keys.len();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(n)).collect();
        cuts.push(0);
        cuts.push(n);
        cuts.sort_unstable();
        let parts: Vec<Summary> = cuts
            .windows(2)
            .map(|w| Summary::of(&records[w[0] * RECORD_LEN..w[1] * RECORD_LEN]))
            .collect();
        let whole = Summary::of(&records);
        prop_assert_eq!(Summary::combine(&parts), whole.clone());
        // And through valsort's summary file, as partitions are checked in practice.
        let file: Vec<u8> = parts.iter().flat_map(|p| p.to_valsort_bytes()).collect();
        let read = Summary::parse_valsort_file(&file).unwrap();
        prop_assert_eq!(Summary::combine(&read), whole.clone());
        prop_assert_eq!(whole.is_sorted(), sort || keys.windows(2).all(|w| w[0] <= w[1]));
    }
}
