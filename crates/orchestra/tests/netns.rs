//! The same broadcasts in the emulated cluster: each host its own network namespace, its link
//! shaped by tbf both ways. Needs root and `ip`/`tc`; elsewhere each test says it did not run.

mod common;

use coflowkit_orchestra::node::{run_node, NodeEnv};
use coflowkit_orchestra::run_broadcast;
use coflowkit_testbed::can_run;
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
fn broadcasts_in_namespaces_are_byte_exact_and_held_to_the_links() {
    if !can_run("broadcasts_in_namespaces_are_byte_exact_and_held_to_the_links") {
        return;
    }
    let mut cfg = config(6, 3 << 20, "cornet,chain,hdfs3,bittorrent");
    cfg.netns = true;
    cfg.rate_bps = Some(100e6);
    let out = run_broadcast(&cfg, &node_command).unwrap();
    for r in &out {
        assert_byte_exact(&cfg, r, &[]);
        // Every receiver downloads B through a 100 Mbit/s NIC.
        let floor = cfg.bytes as f64 * 8.0 / 100e6;
        assert!(
            r.completion_s.unwrap() >= floor,
            "{}: {:?} < {floor}",
            r.mechanism,
            r.completion_s
        );
    }
}

#[test]
fn racks_behind_a_shaped_core_carry_every_cornet_variant() {
    if !can_run("racks_behind_a_shaped_core_carry_every_cornet_variant") {
        return;
    }
    // Three racks of two receivers, the source in the middle one; cross-rack traffic through
    // a core link a quarter of a host's rate. Clustering learns from the runs before it.
    let mut cfg = config(6, 2 << 20, "cornet,cornet-topology,cornet-clustering");
    cfg.netns = true;
    cfg.rate_bps = Some(100e6);
    cfg.racks = coflowkit_orchestra::Racks {
        count: 3,
        core_rate_bps: Some(25e6),
    };
    let out = run_broadcast(&cfg, &node_command).unwrap();
    assert_eq!(out.len(), 3);
    for r in &out {
        assert_byte_exact(&cfg, r, &[]);
        // The racks outside the source's get the data through a 25 Mbit/s core link.
        let floor = cfg.bytes as f64 * 8.0 / 25e6;
        assert!(
            r.completion_s.unwrap() >= floor,
            "{}: {:?} < {floor}",
            r.mechanism,
            r.completion_s
        );
    }
}
