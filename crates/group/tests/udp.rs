//! Every collective over real UDP sockets on loopback: 8 endpoints in one process, one thread
//! each, against the same naive references as the in-memory tests; a sub-group and the world
//! at the same time.

use std::net::UdpSocket;
use std::sync::Arc;

use coflowkit_group::{Group, ShuffleProto};
use coflowkit_transport::{Endpoint, EndpointConfig};

const M: usize = 8;

fn world<T: Send>(f: impl Fn(Group) -> T + Sync) -> Vec<T> {
    world_with(|c| c, f)
}

fn world_with<T: Send>(
    tune: impl Fn(EndpointConfig) -> EndpointConfig,
    f: impl Fn(Group) -> T + Sync,
) -> Vec<T> {
    let socks: Vec<UdpSocket> = (0..M)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let peers: Vec<_> = socks.iter().map(|s| s.local_addr().unwrap()).collect();
    let eps: Vec<Endpoint> = socks
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            let cfg = tune(EndpointConfig::new(r as u32, peers.clone(), 0xC011));
            Endpoint::bind(s, cfg).unwrap()
        })
        .collect();
    std::thread::scope(|s| {
        let hs: Vec<_> = eps
            .into_iter()
            .map(|ep| {
                let f = &f;
                s.spawn(move || f(Group::world(Arc::new(ep)).unwrap()))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn payload(rank: usize, salt: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (rank * 31 + salt * 7 + i) as u8).collect()
}

#[test]
fn every_collective_over_udp_matches_the_reference() {
    let res = world(|mut g| {
        let me = g.rank();
        let b: Vec<Vec<u8>> = (0..M)
            .map(|root| {
                let mine = if me == root {
                    payload(root, 1, 3000 + root)
                } else {
                    vec![]
                };
                g.bcast(root, mine, 3).unwrap()
            })
            .collect();
        let sum = g
            .gather(2, ((me + 1) as u64).to_le_bytes().to_vec(), 6, |a, b| {
                let x = u64::from_le_bytes(a.try_into().unwrap());
                let y = u64::from_le_bytes(b.try_into().unwrap());
                (x + y).to_le_bytes().to_vec()
            })
            .unwrap();
        let all = g.allgather(payload(me, 2, 100 + me * 500)).unwrap();
        g.barrier().unwrap();
        let mut shuffles = Vec::new();
        for name in ["grpf", "hadoop-2", "madd", "lockstep", "high-entropy"] {
            let p = ShuffleProto::parse(name).unwrap();
            let data = (0..M)
                .map(|d| payload(me * M + d, 3, (me * 7 + d * 13) * 997 % 50_000))
                .collect();
            shuffles.push(g.alltoallv(data, &p).unwrap());
        }
        (b, sum, all, shuffles)
    });
    for (me, (b, sum, all, shuffles)) in res.into_iter().enumerate() {
        for (root, got) in b.iter().enumerate() {
            assert_eq!(*got, payload(root, 1, 3000 + root));
        }
        if me == 2 {
            assert_eq!(
                sum,
                Some(((1..=M as u64).sum::<u64>()).to_le_bytes().to_vec())
            );
        } else {
            assert_eq!(sum, None);
        }
        assert_eq!(
            all,
            (0..M)
                .map(|r| payload(r, 2, 100 + r * 500))
                .collect::<Vec<_>>()
        );
        for got in shuffles {
            let want: Vec<Vec<u8>> = (0..M)
                .map(|s| payload(s * M + me, 3, (s * 7 + me * 13) * 997 % 50_000))
                .collect();
            assert_eq!(got, want);
        }
    }
}

#[test]
fn a_subgroup_and_the_world_run_at_once_over_udp() {
    let res = world(|world| {
        let me = world.rank();
        let half: Vec<usize> = (0..M).filter(|r| r % 2 == me % 2).collect();
        let mut sub = world.subgroup(&half).unwrap();
        let mut world = world;
        std::thread::scope(|s| {
            let t = s.spawn(move || {
                (0..10)
                    .map(|i| sub.allgather(payload(me, i, 200)).unwrap())
                    .collect::<Vec<_>>()
            });
            let w: Vec<_> = (0..10)
                .map(|i| {
                    let root = i % M;
                    let mine = if me == root {
                        payload(root, 50 + i, 5000)
                    } else {
                        vec![]
                    };
                    world.bcast(root, mine, 2).unwrap()
                })
                .collect();
            (t.join().unwrap(), w)
        })
    });
    for (me, (sub, w)) in res.into_iter().enumerate() {
        let half: Vec<usize> = (0..M).filter(|r| r % 2 == me % 2).collect();
        for (i, got) in sub.into_iter().enumerate() {
            assert_eq!(
                got,
                half.iter().map(|&r| payload(r, i, 200)).collect::<Vec<_>>()
            );
        }
        for (i, got) in w.into_iter().enumerate() {
            assert_eq!(got, payload(i % M, 50 + i, 5000));
        }
    }
}

#[test]
fn a_dead_rank_ends_everyones_collective_with_an_error_not_a_hang() {
    use coflowkit_group::GroupError;
    use std::time::{Duration, Instant};
    let t0 = Instant::now();
    let res = world_with(
        |mut c| {
            c.resend_timeout = Duration::from_millis(5);
            c.dead_after = 20;
            c
        },
        |mut g| {
            if g.rank() == 3 {
                return None; // rank 3 leaves: its endpoint closes with its group
            }
            Some(g.allgather(vec![g.rank() as u8; 10]))
        },
    );
    assert!(t0.elapsed() < Duration::from_secs(30));
    // Rank 2 swaps with rank 3 in the first round: it names rank 3. The others fail later,
    // naming whichever partner stopped answering, but they fail.
    assert!(
        matches!(res[2], Some(Err(GroupError::PeerDead(3)))),
        "{:?}",
        res[2]
    );
    for r in res.iter().take(3) {
        assert!(matches!(r, Some(Err(_))), "{r:?}");
    }
}
