//! Spec D2 (P1-P8): source selection on the worked examples of Tables 2-5.

use super::*;
use crate::select::Heaviest;

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;

fn state(caps: [f64; 3], pattern: &[(u32, u32)], seed: u64) -> ClusterState {
    let fabric = Fabric {
        up_bytes_per_s: caps.to_vec(),
        down_bytes_per_s: caps.to_vec(),
    };
    let mut st = ClusterState::new(fabric, seed, SelectOptions::default());
    for &(s, d) in pattern {
        st.add_flow(s, d).unwrap();
    }
    st
}

const HOMO: [f64; 3] = [6.0, 6.0, 6.0];
const HETERO: [f64; 3] = [6.0, 6.0, 12.0];
const M4: [(u32, u32); 4] = [(A, C), (B, C), (B, C), (C, A)];
const M10: [(u32, u32); 6] = [(B, A), (C, A), (A, B), (C, B), (A, C), (B, C)];

/// Every greedy policy on every seed and both source orders picks `want`, giving `util`.
fn picks(caps: [f64; 3], pattern: &[(u32, u32)], want: u32, util: f64) {
    for policy in [Policy::Gss, Policy::Pgss, Policy::Opt] {
        for seed in 0..20 {
            for order in [[A, C], [C, A]] {
                let mut st = state(caps, pattern, seed);
                let got = st.select(policy, B, &Source::each(&order), 1).unwrap();
                assert_eq!(got, vec![want], "{policy} seed {seed} order {order:?}");
                assert!((st.utilization() - util).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn p1_sparse_homogeneous_selects_c() {
    picks(HOMO, &[(A, C), (B, C)], C, 12.0);
}

#[test]
fn p2_intensive_homogeneous_selects_a() {
    picks(HOMO, &M4, A, 16.0);
}

#[test]
fn p3_sparse_heterogeneous_selects_c() {
    picks(HETERO, &[(A, C), (B, C)], C, 18.0);
}

#[test]
fn p4_even_heterogeneous_selects_c() {
    picks(HETERO, &M10, C, 19.0);
}

#[test]
fn p5_pgss_follows_the_heaviest_load_gss_does_not() {
    let mut st = state(HOMO, &[(A, C), (B, C)], 7);
    st.on_shuffle_start(&[
        Source {
            node: A,
            outputs: 2,
        },
        Source {
            node: C,
            outputs: 1,
        },
    ])
    .unwrap();
    let pending = Source::each(&[A, C]);
    let mut gss = st.clone();
    assert_eq!(st.select(Policy::Pgss, B, &pending, 1).unwrap(), vec![A]);
    assert!((st.utilization() - 9.0).abs() < 1e-9);
    assert_eq!(st.load(A), 1);
    assert_eq!(st.load(C), 1);
    assert_eq!(gss.select(Policy::Gss, B, &pending, 1).unwrap(), vec![C]);
    assert!((gss.utilization() - 12.0).abs() < 1e-9);
}

#[test]
fn p6_ties_are_broken_at_random_but_reproducibly() {
    let pending = Source::each(&[A, C]);
    let mut a_count = 0;
    for seed in 0..1000 {
        let pick = state(HOMO, &[], seed)
            .select(Policy::Pgss, B, &pending, 1)
            .unwrap()[0];
        assert!(pick == A || pick == C);
        a_count += usize::from(pick == A);
        let again = state(HOMO, &[], seed)
            .select(Policy::Pgss, B, &pending, 1)
            .unwrap()[0];
        assert_eq!(pick, again, "same seed, same pick");
    }
    // Binomial(1000, 0.5): sd 15.8; 440..=560 is beyond 3.7 sd either way.
    assert!((440..=560).contains(&a_count), "A picked {a_count} times");
}

#[test]
fn p7_load_counts_grow_per_shuffle_and_shrink_per_pick() {
    let mut st = state(HOMO, &[], 1);
    let maps = [
        Source {
            node: A,
            outputs: 3,
        },
        Source {
            node: C,
            outputs: 1,
        },
    ];
    st.on_shuffle_start(&maps).unwrap();
    assert_eq!((st.load(A), st.load(C)), (3, 1));
    st.on_shuffle_start(&maps).unwrap();
    assert_eq!((st.load(A), st.load(C)), (6, 2));
    // A is the only heaviest node, so PGSS must take it; each pick lowers it by one.
    for expect in [5, 4, 3] {
        assert_eq!(st.select(Policy::Pgss, B, &maps, 1).unwrap(), vec![A]);
        assert_eq!(st.load(A), expect);
    }
    assert_eq!(st.load(C), 2);
}

#[test]
fn p8_pattern_bookkeeping_and_deregistration() {
    let mut st = state(HOMO, &[(A, C), (B, C)], 1);
    let before = st.pattern().to_vec();
    let src = st
        .select(Policy::Pgss, B, &Source::each(&[A, C]), 1)
        .unwrap()[0];
    assert!(st.pattern().contains(&(src, B)));
    st.release(src, B).unwrap();
    let mut after = st.pattern().to_vec();
    after.sort_unstable();
    let mut before_sorted = before.clone();
    before_sorted.sort_unstable();
    assert_eq!(after, before_sorted);
    assert_eq!(
        st.release(src, B),
        Err(SelectError::NoSuchFlow { src, dst: B })
    );
    st.add_flow(C, A).unwrap();
    st.add_flow(A, B).unwrap();
    st.deregister_node(C).unwrap();
    assert_eq!(st.pattern(), &[(A, B)]);
    assert_eq!(
        st.select(Policy::Gss, B, &Source::each(&[C]), 1),
        Err(SelectError::Absent(C))
    );
    st.register_node(C, 6.0, 6.0).unwrap();
    assert_eq!(
        st.select(Policy::Gss, B, &Source::each(&[C]), 1).unwrap(),
        vec![C]
    );
}

#[test]
fn several_picks_respect_each_nodes_outputs() {
    let mut st = state(HETERO, &[], 3);
    let pending = [
        Source {
            node: A,
            outputs: 1,
        },
        Source {
            node: C,
            outputs: 2,
        },
    ];
    for policy in Policy::ALL {
        let mut s = st.clone();
        let mut got = s.select(policy, B, &pending, 5).unwrap();
        got.sort_unstable();
        assert_eq!(got, vec![A, C, C], "{policy}");
        assert_eq!(s.pattern().len(), 3);
    }
    // B's downlink (6) is the bottleneck: any two flows into B total 6.
    let two = st.select(Policy::Opt, B, &pending, 2).unwrap();
    assert_eq!(two.len(), 2);
    assert!((st.utilization() - 6.0).abs() < 1e-9);
}

#[test]
fn opt_finds_the_best_pair_and_refuses_huge_searches() {
    // Table 4's setup with two fetchers on B: {C, C} keeps A->C and B->C at 6 and fills B's
    // downlink from C (total 18); any pick from A shares A's uplink with A->C.
    let mut st = state(HETERO, &[(A, C), (B, C)], 2);
    let pending = [
        Source {
            node: A,
            outputs: 2,
        },
        Source {
            node: C,
            outputs: 2,
        },
    ];
    let got = st.select(Policy::Opt, B, &pending, 2).unwrap();
    assert_eq!(got, vec![C, C]);
    let util = st.utilization();
    assert!((util - 18.0).abs() < 1e-9);
    // Check against every multiset by hand.
    for pair in [[A, A], [A, C], [C, C]] {
        let mut s = state(HETERO, &[(A, C), (B, C)], 2);
        for src in pair {
            s.add_flow(src, B).unwrap();
        }
        assert!(
            s.utilization() <= util + 1e-9,
            "{pair:?} beats opt's {got:?}"
        );
    }
    let mut tight = ClusterState::new(
        Fabric::uniform(30, 1.0),
        1,
        SelectOptions {
            max_combinations: 1000,
            ..SelectOptions::default()
        },
    );
    let nodes: Vec<u32> = (1..20).collect();
    let many: Vec<Source> = nodes
        .iter()
        .map(|&node| Source { node, outputs: 5 })
        .collect();
    assert_eq!(
        tight.select(Policy::Opt, 0, &many, 5),
        Err(SelectError::TooManyCombinations {
            combinations: 33_649,
            limit: 1000
        })
    );
}

#[test]
fn bad_requests_are_refused() {
    let mut st = state(HOMO, &[], 1);
    assert_eq!(
        st.select(Policy::Random, 9, &Source::each(&[A]), 1),
        Err(SelectError::UnknownNode { node: 9, nodes: 3 })
    );
    assert_eq!(
        st.select(Policy::Random, B, &Source::each(&[A, A]), 1),
        Err(SelectError::DuplicateSource(A))
    );
    assert_eq!(
        st.select(
            Policy::Random,
            B,
            &[Source {
                node: A,
                outputs: 0
            }],
            1
        ),
        Err(SelectError::EmptySource(A))
    );
    // The failed requests left no trace.
    assert!(st.pattern().is_empty());
    assert_eq!(
        st.select(Policy::Random, B, &Source::each(&[A]), 1)
            .unwrap(),
        vec![A]
    );
    assert!(st.register_node(5, 0.0, 1.0).is_err());
}

#[test]
fn heaviest_by_time_weighs_load_counts_by_uplink_capacity() {
    // Load A=2 on a 6 uplink drains in 1/3, C=3 on a 12 uplink in 1/4: by count C is the
    // heaviest, by time A is.
    for (rule, want) in [(Heaviest::Count, C), (Heaviest::Time, A)] {
        let fabric = Fabric {
            up_bytes_per_s: HETERO.to_vec(),
            down_bytes_per_s: HETERO.to_vec(),
        };
        let opts = SelectOptions {
            heaviest: rule,
            ..SelectOptions::default()
        };
        let mut st = ClusterState::new(fabric, 1, opts);
        st.on_shuffle_start(&[
            Source {
                node: A,
                outputs: 2,
            },
            Source {
                node: C,
                outputs: 3,
            },
        ])
        .unwrap();
        let got = st
            .select(Policy::Pgss, B, &Source::each(&[A, C]), 1)
            .unwrap();
        assert_eq!(got, vec![want], "{rule:?}");
    }
}
