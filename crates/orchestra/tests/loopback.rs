//! Broadcasts between real processes on loopback: every mechanism byte-exact, hosts killed
//! mid-broadcast (SIGKILL), and clear failures when no complete copy survives.

mod common;

use coflowkit_orchestra::node::{run_node, NodeEnv};
use coflowkit_orchestra::{run_broadcast, Kill, KillWhen};
use common::{assert_byte_exact, config, node_command};

#[test]
fn node_entry() {
    if let Some(env) = NodeEnv::from_env().unwrap() {
        // An aborted run ends its nodes with an error: expected in the failure tests.
        if let Err(e) = run_node(env) {
            eprintln!("node: {e}");
            std::process::exit(1);
        }
    }
}

#[test]
fn every_mechanism_delivers_the_same_bytes_to_every_receiver() {
    let mut cfg = config(
        5,
        3 << 20,
        "cornet,tree,chain,hdfs3,hdfs10,bittorrent,tree3",
    );
    // Racks configured: the topology variant has something to prefer.
    cfg.mechanisms.push("cornet-topology".parse().unwrap());
    cfg.racks.count = 2;
    let out = run_broadcast(&cfg, &node_command).unwrap();
    assert_eq!(out.len(), cfg.mechanisms.len());
    let rate = cfg.rate_bps.unwrap();
    for r in &out {
        assert_byte_exact(&cfg, r, &[]);
        // Uploads are paced: N copies of B leave N+1 hosts at the rate at best.
        let floor = 5.0 * cfg.bytes as f64 * 8.0 / (6.0 * rate);
        let t = r.completion_s.unwrap();
        assert!(
            t >= 0.95 * floor,
            "{}: {t} s beats the links ({floor} s)",
            r.mechanism
        );
        assert!(r.lower_bound_s.unwrap() >= floor);
    }
}

#[test]
fn a_receiver_killed_mid_broadcast_leaves_the_others_to_finish_from_peers() {
    for m in ["cornet", "bittorrent"] {
        let mut cfg = config(5, 3 << 20, m);
        cfg.kill = Some(Kill {
            host: 2,
            when: KillWhen::Holds(2),
        });
        let r = &run_broadcast(&cfg, &node_command).unwrap()[0];
        assert_byte_exact(&cfg, r, &[2]);
    }
}

#[test]
fn the_seed_killed_once_a_complete_copy_left_it_does_not_stop_the_broadcast() {
    let mut cfg = config(5, 3 << 20, "cornet");
    cfg.kill = Some(Kill {
        host: 0,
        when: KillWhen::Copied,
    });
    let r = &run_broadcast(&cfg, &node_command).unwrap()[0];
    assert_byte_exact(&cfg, r, &[0]);
}

#[test]
fn without_a_complete_copy_or_a_parent_the_broadcast_fails_naming_why() {
    let mut cfg = config(3, 2 << 20, "cornet");
    cfg.kill = Some(Kill {
        host: 0,
        when: KillWhen::After(0.0),
    });
    let r = &run_broadcast(&cfg, &node_command).unwrap()[0];
    let e = r.error.as_deref().unwrap();
    assert!(
        e.contains("held by no live host") && e.contains("dead: [0]"),
        "{e}"
    );
    assert_eq!(r.completion_s, None);
    // A chain whose first receiver dies: the rest wait for a parent that is gone.
    let mut cfg = config(3, 2 << 20, "chain");
    cfg.stall_s = 1.0;
    cfg.kill = Some(Kill {
        host: 1,
        when: KillWhen::Holds(1),
    });
    let r = &run_broadcast(&cfg, &node_command).unwrap()[0];
    let e = r.error.as_deref().unwrap();
    assert!(e.contains("no block moved") && e.contains("[2, 3]"), "{e}");
}
