//! `client.broadcast` in the emulated cluster: hosts are network namespaces whose NICs `tc`
//! limits, the coordinator on the control bridge is Cornet's controller, daemons swap blocks
//! over the data NICs; with racks, each rack behind a shaped core link. Needs root and
//! `ip`/`tc`; elsewhere it says on stderr it did not run.

use std::sync::Arc;

use coflowkit_orchestra::topology::Racks as RackLayout;
use coflowkit_orchestra::Mechanism;
use coflowkit_testbed::{self as netns, Racks};

mod common;
mod netns_world;
use common::bytes;
use netns_world::World;

const MBIT: f64 = 1e6 / 8.0;

/// Run `test` on a cluster if namespaces are available (else say why not), then check that
/// nothing of it is left behind.
fn with_world(
    name: &str,
    hosts: usize,
    rate: f64,
    racks: Option<Racks>,
    test: impl FnOnce(&World),
) {
    if !netns::can_run(name) {
        return;
    }
    let w = World::start(hosts, rate, racks).unwrap();
    let prefix = w.net.prefix().to_string();
    test(&w);
    drop(w);
    assert_eq!(netns::leftovers(&prefix).unwrap(), Vec::<String>::new());
}

#[test]
fn a_broadcast_in_namespaces_reaches_every_receiver_byte_exact_no_faster_than_tc() {
    let (hosts, rate) = (6, 40.0 * MBIT);
    with_world("a_broadcast_in_namespaces", hosts, rate, None, |w| {
        let data = Arc::new(bytes(23, 2 << 20));
        let o = w
            .broadcast(data.clone(), Mechanism::Cornet, 256 << 10)
            .unwrap();
        assert!(o.exact, "a receiver's copy is not the data");
        let floor = 0.9 * data.len() as f64 / rate;
        let alone = (hosts - 1) as f64 * data.len() as f64 / rate;
        eprintln!(
            "2 MiB to {} receivers at 40 Mbit/s: {:.2?} s (one link's time {floor:.2} s, the source alone {alone:.2} s)",
            hosts - 1,
            o.receiver_s
        );
        for (i, s) in o.receiver_s.iter().enumerate() {
            assert!(
                *s >= floor,
                "receiver {} finished in {s} s, faster than its NIC",
                i + 1
            );
        }
    });
}

/// Three racks (the source in the middle one) behind 10 Mbit/s core links, hosts at
/// 40 Mbit/s: vanilla Cornet, then CornetTopology with the racks configured at the
/// coordinator, then CornetClustering learning them from the two before. Every copy
/// byte-exact, none faster than the data over a core link for the far racks; CornetTopology
/// moves less across the core than vanilla Cornet (it fetches from outside the rack only
/// blocks nobody in it has).
#[test]
fn rack_aware_broadcasts_in_namespaces_cross_the_core_less() {
    let (hosts, rate, core) = (7usize, 40.0 * MBIT, 10.0 * MBIT);
    let of_host = RackLayout {
        count: 3,
        core_rate_bps: None,
    }
    .of_hosts(hosts as u32);
    let racks = Racks {
        of_host: of_host.clone(),
        core_bytes_per_s: core,
    };
    with_world("rack_aware_broadcasts", hosts, rate, Some(racks), |w| {
        let data = Arc::new(bytes(29, 2 << 20));
        let far_floor = 0.9 * data.len() as f64 / core;
        let mut crossed = Vec::new();
        for m in [
            Mechanism::Cornet,
            Mechanism::CornetTopology,
            Mechanism::CornetClustering,
        ] {
            let before: u64 = w.core_bytes().iter().map(|c| c.0).sum();
            let o = w.broadcast(data.clone(), m, 128 << 10).unwrap();
            let after: u64 = w.core_bytes().iter().map(|c| c.0).sum();
            assert!(o.exact, "{m}: a receiver's copy is not the data");
            for (i, s) in o.receiver_s.iter().enumerate() {
                if of_host[i + 1] != of_host[0] {
                    assert!(
                        *s >= far_floor,
                        "{m}: receiver {} in a far rack finished in {s} s, faster than the core link",
                        i + 1
                    );
                }
            }
            let mib = (after - before) as f64 / (1 << 20) as f64;
            eprintln!(
                "{m}: 2 MiB to 6 receivers in 3 racks: {:.2?} s, {mib:.1} MiB across the core",
                o.receiver_s
            );
            crossed.push(mib);
        }
        assert!(
            crossed[1] < crossed[0],
            "cornet-topology moved {:.1} MiB across the core, vanilla cornet {:.1}",
            crossed[1],
            crossed[0]
        );
    });
}
