//! The distributed sort end to end over real UDP endpoints on loopback, one thread per rank in
//! one process: one and two levels, both splitter rules, several shuffle protocols, uniform and
//! skewed keys, each run validated globally; and the same splitters from both levels.

use std::net::UdpSocket;
use std::sync::Arc;
use std::time::Duration;

use coflowkit_group::Counted;
use coflowkit_group::{Exchange, Group, ShuffleProto, BCAST_K, GATHER_K};
use coflowkit_millisort::burst::{self, BurstOptions, Report};
use coflowkit_millisort::sort::{Config, MilliSort};
use coflowkit_millisort::validate::Depth;
use coflowkit_millisort::Rule;
use coflowkit_sortdata::RecordKind;
use coflowkit_transport::{Endpoint, EndpointConfig};

fn world<T: Send>(m: usize, f: impl Fn(Arc<Counted>, Group) -> T + Sync) -> Vec<T> {
    let socks: Vec<UdpSocket> = (0..m)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let peers: Vec<_> = socks.iter().map(|s| s.local_addr().unwrap()).collect();
    let eps: Vec<Endpoint> = socks
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            Endpoint::bind(s, EndpointConfig::new(r as u32, peers.clone(), 0x5047)).unwrap()
        })
        .collect();
    std::thread::scope(|s| {
        let hs: Vec<_> = eps
            .into_iter()
            .map(|ep| {
                let f = &f;
                s.spawn(move || {
                    let c = Counted::new(Arc::new(ep));
                    let g = Group::world(c.clone() as Arc<dyn Exchange>).unwrap();
                    f(c, g)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn config(levels: u8, rule: Rule, proto: &str) -> Config {
    Config {
        levels,
        r: 2,
        rule,
        pivots: None,
        protocol: ShuffleProto::parse(proto).unwrap(),
        pivot_protocol: ShuffleProto::parse("grpf").unwrap(),
        gather_k: GATHER_K,
        bcast_k: BCAST_K,
        threads: 1,
        overlap_merge: false,
    }
}

/// Every configuration in turn on one world of `m` ranks; rank 0's reports.
fn sorts(m: usize, configs: &[(Config, RecordKind)], per_rank: u64) -> Vec<(Report, Vec<u128>)> {
    let res = world(m, |c, g| {
        let mut g = Some(g);
        let mut reps = Vec::new();
        for (i, (cfg, kind)) in configs.iter().enumerate() {
            // A fresh MilliSort per configuration reuses the world (a new epoch each).
            let mut ms = MilliSort::new(g.take().unwrap(), cfg.clone(), i as u32).unwrap();
            let opts = BurstOptions {
                per_rank,
                kind: *kind,
                margin: Duration::from_millis(20),
                validate: Some(Depth::Full),
            };
            let rep = burst::run(&mut ms, &c, &opts).unwrap();
            let spl = ms.last_splitters().to_vec();
            reps.push((rep, spl));
            g = Some(ms.into_world());
        }
        reps
    });
    res.into_iter()
        .next()
        .unwrap()
        .into_iter()
        .map(|(r, s)| (r.unwrap(), s))
        .collect()
}

#[test]
fn six_ranks_sort_and_validate_under_every_level_rule_and_protocol() {
    let mut configs = Vec::new();
    for levels in [1, 2] {
        for rule in [Rule::Naive, Rule::Weighted] {
            for kind in [RecordKind::Binary, RecordKind::Skewed] {
                configs.push((config(levels, rule, "high-entropy"), kind));
            }
        }
    }
    for proto in ["grpf", "lockstep"] {
        configs.push((config(2, Rule::Weighted, proto), RecordKind::Binary));
    }
    let mut overlapped = config(2, Rule::Weighted, "high-entropy");
    overlapped.overlap_merge = true;
    configs.push((overlapped, RecordKind::Skewed));
    let reps = sorts(6, &configs, 700);
    for ((rep, _), (cfg, kind)) in reps.iter().zip(&configs) {
        let v = rep.validation.as_ref().unwrap();
        assert!(v.ok, "{cfg:?} {kind:?}: {v:?}");
        assert_eq!(v.records, 4200);
        assert_eq!(rep.partition_sizes.iter().sum::<u64>(), 4200);
        assert!(rep.wall_ms > 0.0);
        // Every phase of two levels ran somewhere; one level skips the pivot sorters' phases.
        let ran = |name: &str| rep.phases.iter().find(|(n, _)| n == name).unwrap().1.max_ms > 0.0;
        assert!(ran("local_sort") && ran("record_shuffle") && ran("merge"));
        assert_eq!(ran("pivot_shuffle"), cfg.levels == 2, "{cfg:?}");
        // Records cross the network once: 106 bytes per record (16-byte composite key, 90-byte
        // value) for the about 5/6 that leave their rank, plus counts and the protocol's rows.
        let shuffle = &rep
            .phases
            .iter()
            .find(|(n, _)| n == "record_shuffle")
            .unwrap()
            .1;
        let records = 4200.0 * 106.0;
        let b = shuffle.bytes as f64;
        assert!(b > 0.7 * records && b < 0.95 * records, "{shuffle:?}");
    }
    // Same rule and data, one and two levels: the same splitters.
    assert_eq!(reps[0].1, reps[4].1);
    assert_eq!(reps[2].1, reps[6].1);
    assert_ne!(reps[0].1, reps[2].1);
}
