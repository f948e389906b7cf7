//! HUG's caps enforced by kernel htb classes in the emulated cluster (`ReplayConfig::htb`,
//! issue 22): Fig 7.10's host level with n = 2. Host 0 sends coflow A to host 1 and coflow B
//! to hosts 2 and 3. HUG gives each half of host 0's uplink (A's vector <1 | 1>, B's
//! <1 | 1/2, 1/2>, P* = 1/2); under htb the coordinator lists B's two flows at their downlink
//! ceilings (1/2 of a NIC each, 1 together) and only B's class (ceil 1/2) holds B to half, so
//! A finishes at twice its alone time. Were the classes missing, the three TCP flows would
//! share the NIC, A at 1/3 (three times). Needs root and `ip`/`tc`; elsewhere it says it did
//! not run.

use std::time::Duration;

use coflowkit_model::{Coflow, Flow, Trace};
use coflowkit_runtime::replay::{replay, ReplayConfig};
use coflowkit_sched::{SchedOptions, SchedulerKind};
use coflowkit_testbed::{self as netns, can_run};

const MBIT: f64 = 1e6 / 8.0;

#[test]
fn htb_classes_hold_each_coflow_to_its_hug_share() {
    let size = 2_500_000.0;
    let flow = |dst| Flow {
        src: 0,
        dst,
        bytes: size,
    };
    let trace = Trace {
        ports: 4,
        coflows: vec![
            Coflow::new(1, 0.0, vec![flow(1)]),
            Coflow::new(2, 0.0, vec![flow(2), flow(3)]),
        ],
    };
    let nic = 20.0 * MBIT;
    let cfg = ReplayConfig {
        scheduler: SchedulerKind::Hug,
        options: SchedOptions::default(),
        nic_bytes_per_s: vec![nic; 4],
        netns: true,
        mem_limit_bytes: 64 << 20,
        data_dir: None,
        tick: Some(Duration::from_millis(100)),
        non_clairvoyant: false,
        htb: true,
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Without the cluster: refused, naming what it needs (runs without root too).
    let loopback = ReplayConfig {
        netns: false,
        ..cfg.clone()
    };
    let e = rt.block_on(replay(&trace, &loopback)).unwrap_err();
    assert!(e.to_string().contains("netns"), "{e}");
    if !can_run("htb_classes_hold_each_coflow_to_its_hug_share") {
        return;
    }
    let out = rt.block_on(replay(&trace, &cfg)).unwrap();
    let alone = size / nic;
    let a = out[0].cct_s / alone;
    eprintln!(
        "A {:.3} s = {a:.2}x alone, B {:.3} s = {:.2}x",
        out[0].cct_s,
        out[1].cct_s,
        out[1].cct_s / alone
    );
    // HUG: 2x; a NIC shared by three flows: 3x.
    assert!((1.8..2.5).contains(&a), "A took {a:.2}x its alone time");
    // B: half the NIC until A ends, then all of it: 2 + (2 - 1) = 3x alone... its two flows
    // share what is left, so 3x within the same margin.
    let b = out[1].cct_s / alone;
    assert!((2.7..3.6).contains(&b), "B took {b:.2}x its alone time");
    assert_eq!(
        netns::leftovers(&format!("ck{:x}-", std::process::id())).unwrap(),
        Vec::<String>::new()
    );
}
