//! Every collective against a naive reference, for sizes 1..=17, every root, several radixes,
//! on the in-memory exchange.

use std::sync::atomic::Ordering;

use proptest::prelude::*;

use crate::mem::run;
use crate::schedule::allgather;
use crate::{GroupError, HighEntropyOptions, ShuffleProto, WireProto};

/// Distinct, rank- and size-dependent bytes (lengths vary, zero included).
fn payload(rank: usize, salt: usize) -> Vec<u8> {
    let len = (rank * 37 + salt * 11) % 23;
    (0..len).map(|i| (rank * 31 + salt * 7 + i) as u8).collect()
}

fn sum_u64(a: Vec<u8>, b: Vec<u8>) -> Vec<u8> {
    let x = u64::from_le_bytes(a.try_into().unwrap());
    let y = u64::from_le_bytes(b.try_into().unwrap());
    (x + y).to_le_bytes().to_vec()
}

#[test]
fn bcast_delivers_the_roots_bytes_for_every_size_root_and_radix() {
    for m in 1..=17usize {
        let (res, hub) = run(m, |mut g| {
            let mut got = Vec::new();
            for k in [2, 3, 6, 10] {
                for root in 0..m {
                    let mine = if g.rank() == root {
                        payload(root, k as usize)
                    } else {
                        vec![]
                    };
                    got.push(g.bcast(root, mine, k).unwrap());
                }
            }
            got
        });
        for got in res {
            let want: Vec<Vec<u8>> = [2usize, 3, 6, 10]
                .iter()
                .flat_map(|&k| (0..m).map(move |root| payload(root, k)))
                .collect();
            assert_eq!(got, want, "m = {m}");
        }
        // A tree: M - 1 messages per broadcast.
        assert_eq!(
            hub.messages.load(Ordering::Relaxed),
            (4 * m * (m - 1)) as u64
        );
        assert_eq!(hub.left_over(), 0);
    }
}

#[test]
fn gather_with_a_summing_combine_is_the_sum_and_with_concatenation_the_rank_order() {
    for m in 1..=17usize {
        let (res, hub) = run(m, |mut g| {
            let me = g.rank();
            let mut sums = Vec::new();
            let mut cats = Vec::new();
            for k in [2, 6, 9] {
                for root in 0..m {
                    let v = ((me + 1) as u64 * 1000 + k as u64).to_le_bytes().to_vec();
                    sums.push(g.gather(root, v, k, sum_u64).unwrap());
                    let cat = g
                        .gather(root, payload(me, root), k, |mut a, b| {
                            a.extend(b);
                            a
                        })
                        .unwrap();
                    cats.push(cat);
                }
            }
            (sums, cats)
        });
        let mut i = 0;
        for k in [2u64, 6, 9] {
            for root in 0..m {
                for (rank, (sums, cats)) in res.iter().enumerate() {
                    if rank == root {
                        let want: u64 = (1..=m as u64).map(|r| r * 1000 + k).sum();
                        assert_eq!(sums[i], Some(want.to_le_bytes().to_vec()), "m {m} k {k}");
                        // Concatenation in rank order starting at the root.
                        let want: Vec<u8> =
                            (0..m).flat_map(|v| payload((v + root) % m, root)).collect();
                        assert_eq!(cats[i], Some(want), "m {m} k {k} root {root}");
                    } else {
                        assert_eq!(sums[i], None);
                        assert_eq!(cats[i], None);
                    }
                }
                i += 1;
            }
        }
        assert_eq!(
            hub.messages.load(Ordering::Relaxed),
            (2 * 3 * m * (m - 1)) as u64
        );
        assert_eq!(hub.left_over(), 0);
    }
}

#[test]
fn allgather_is_everyones_input_in_rank_order_with_m_log_m_messages() {
    for m in 1..=17usize {
        let (res, hub) = run(m, |mut g| {
            let me = g.rank();
            (0..3)
                .map(|s| g.allgather(payload(me, s)).unwrap())
                .collect::<Vec<_>>()
        });
        for got in res {
            for (s, all) in got.into_iter().enumerate() {
                assert_eq!(all, (0..m).map(|r| payload(r, s)).collect::<Vec<_>>());
            }
        }
        assert_eq!(
            hub.messages.load(Ordering::Relaxed),
            3 * allgather::messages(m) as u64
        );
        assert_eq!(hub.left_over(), 0);
    }
}

#[test]
fn nobody_leaves_a_barrier_before_everyone_entered() {
    use std::sync::atomic::AtomicUsize;
    for m in [1usize, 2, 3, 5, 8, 13, 17] {
        let entered = AtomicUsize::new(0);
        let (res, _) = run(m, |mut g| {
            let mut ok = true;
            for round in 1..=5 {
                // Stagger arrivals so a broken barrier would let someone through early.
                std::thread::sleep(std::time::Duration::from_millis((g.rank() * 3 % 7) as u64));
                entered.fetch_add(1, Ordering::SeqCst);
                g.barrier().unwrap();
                ok &= entered.load(Ordering::SeqCst) >= round * m;
                // A second barrier so nobody races into the next round's count before all read.
                g.barrier().unwrap();
            }
            ok
        });
        assert!(res.into_iter().all(|x| x), "m = {m}");
    }
}

fn protocols() -> Vec<ShuffleProto> {
    vec![
        ShuffleProto::parse("grpf").unwrap(),
        ShuffleProto::parse("hadoop-2").unwrap(),
        ShuffleProto::parse("madd").unwrap(),
        ShuffleProto::Lockstep,
        ShuffleProto::HighEntropy(HighEntropyOptions {
            chunk_bytes: 7,
            max_outstanding: 3,
            seed: 5,
        }),
        ShuffleProto::parse("high-entropy").unwrap(),
    ]
}

fn cell(src: usize, dst: usize, salt: usize) -> Vec<u8> {
    let len = (src * 13 + dst * 7 + salt) % 41;
    (0..len).map(|i| (src * 3 + dst * 5 + i) as u8).collect()
}

#[test]
fn alltoallv_transposes_under_every_protocol() {
    for m in 1..=17usize {
        let (res, hub) = run(m, |mut g| {
            let me = g.rank();
            protocols()
                .iter()
                .enumerate()
                .map(|(salt, p)| {
                    let data = (0..m).map(|d| cell(me, d, salt)).collect();
                    g.alltoallv(data, p).unwrap()
                })
                .collect::<Vec<_>>()
        });
        for (me, got) in res.into_iter().enumerate() {
            for (salt, recv) in got.into_iter().enumerate() {
                let want: Vec<Vec<u8>> = (0..m).map(|s| cell(s, me, salt)).collect();
                assert_eq!(recv, want, "m {m} protocol {salt} rank {me}");
            }
        }
        assert_eq!(hub.left_over(), 0);
    }
}

#[test]
fn wire_alltoallv_sends_one_message_per_ordered_pair_even_empty() {
    let (_, hub) = run(6, |mut g| {
        g.alltoallv(vec![vec![]; 6], &ShuffleProto::Wire(WireProto::default()))
            .unwrap()
    });
    assert_eq!(hub.messages.load(Ordering::Relaxed), 30);
}

#[test]
fn subgroups_and_the_world_run_concurrently_without_mixing() {
    // Even and odd ranks form two sub-groups; each thread alternates sub-group and world
    // operations from two threads of its own at once.
    let m = 9usize;
    let (res, hub) = run(m, |world| {
        let me = world.rank();
        let mine: Vec<usize> = (0..m).filter(|r| r % 2 == me % 2).collect();
        let mut sub = world.subgroup(&mine).unwrap();
        let mut world = world;
        std::thread::scope(|s| {
            let t = s.spawn(move || {
                (0..20)
                    .map(|i| sub.allgather(payload(me, i)).unwrap())
                    .collect::<Vec<_>>()
            });
            let w: Vec<Vec<Vec<u8>>> = (0..20)
                .map(|i| world.allgather(payload(me, 100 + i)).unwrap())
                .collect();
            (t.join().unwrap(), w)
        })
    });
    for (me, (sub, world)) in res.into_iter().enumerate() {
        let mine: Vec<usize> = (0..m).filter(|r| r % 2 == me % 2).collect();
        for (i, got) in sub.into_iter().enumerate() {
            let want: Vec<Vec<u8>> = mine.iter().map(|&r| payload(r, i)).collect();
            assert_eq!(got, want);
        }
        for (i, got) in world.into_iter().enumerate() {
            let want: Vec<Vec<u8>> = (0..m).map(|r| payload(r, 100 + i)).collect();
            assert_eq!(got, want);
        }
    }
    assert_eq!(hub.left_over(), 0);
}

#[test]
fn subgroup_ranks_follow_the_member_list() {
    let (res, _) = run(6, |world| match world.subgroup(&[4, 1, 3]) {
        Ok(mut g) => {
            let all = g.allgather(vec![world.rank() as u8]).unwrap();
            Some((g.rank(), g.size(), g.members().to_vec(), all))
        }
        Err(GroupError::NotMember(_)) => None,
        Err(e) => panic!("{e}"),
    });
    assert_eq!(
        res[4],
        Some((0, 3, vec![4, 1, 3], vec![vec![4], vec![1], vec![3]]))
    );
    assert_eq!(res[1].as_ref().unwrap().0, 1);
    assert!(res[0].is_none() && res[2].is_none() && res[5].is_none());
}

#[test]
fn bad_arguments_are_errors_that_say_what() {
    let (res, _) = run(3, |mut g| {
        let e1 = g.bcast(3, vec![], 2).unwrap_err().to_string();
        let e2 = g.gather(0, vec![], 1, |a, _| a).unwrap_err().to_string();
        let e3 = g
            .alltoallv(vec![vec![]; 2], &ShuffleProto::Lockstep)
            .unwrap_err()
            .to_string();
        let e4 = g.subgroup(&[0, 0]).err().unwrap().to_string();
        let e5 = g.subgroup(&[7]).err().unwrap().to_string();
        [e1, e2, e3, e4, e5]
    });
    let [e1, e2, e3, e4, e5] = &res[0];
    assert!(e1.contains("root 3"), "{e1}");
    assert!(e2.contains("radix"), "{e2}");
    assert!(
        e3.contains("2 buffers") && e3.contains("group of 3"),
        "{e3}"
    );
    assert!(e4.contains("twice"), "{e4}");
    assert!(e5.contains("rank 7"), "{e5}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Random sizes (zero included) and random high-entropy limits: still a transpose.
    #[test]
    fn high_entropy_transposes_random_matrices(
        m in 1usize..8,
        lens in proptest::collection::vec(0usize..300, 64),
        chunk in 1u64..100,
        cap in 1usize..5,
        seed in any::<u64>(),
    ) {
        let proto = ShuffleProto::HighEntropy(HighEntropyOptions { chunk_bytes: chunk, max_outstanding: cap, seed });
        let msg = |s: usize, d: usize| -> Vec<u8> { (0..lens[s * 8 + d]).map(|i| (s ^ d ^ i) as u8).collect() };
        let (res, hub) = run(m, |mut g| {
            let me = g.rank();
            g.alltoallv((0..m).map(|d| msg(me, d)).collect(), &proto).unwrap()
        });
        for (me, recv) in res.into_iter().enumerate() {
            prop_assert_eq!(recv, (0..m).map(|s| msg(s, me)).collect::<Vec<_>>());
        }
        prop_assert_eq!(hub.left_over(), 0);
    }
}
