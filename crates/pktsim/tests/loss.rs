//! Loss recovery under an impaired wire: with packets dropped, duplicated and reordered, every
//! packet of every message still reaches the application exactly once, nothing hangs, and no
//! invariant breaks, for GRPF, Hadoop-5, MADD and lockstep.

use coflowkit_pktsim::{run, Loss, Sim, SimConfig};
use coflowkit_shuffle::matrix::PacketMatrix;
use proptest::prelude::*;

fn arb_matrix() -> impl Strategy<Value = PacketMatrix> {
    (2usize..9).prop_flat_map(|n| {
        proptest::collection::vec(
            prop_oneof![2 => Just(0u64), 2 => Just(1u64), 5 => 1u64..40],
            n * n,
        )
        .prop_map(move |packets| PacketMatrix { n, packets })
    })
}

const PROTOCOLS: [&str; 4] = ["grpf", "hadoop-5", "madd", "lockstep"];

prop_compose! {
    fn arb_config()(
        p in 0..PROTOCOLS.len(), racks in 1usize..3, seed in any::<u64>(),
        drop in 0.0f64..0.1, duplicate in 0.0f64..0.1, reorder in 0.0f64..0.2,
        reorder_max in 1u32..12, which in 1u8..8, timeout in prop_oneof![Just(40u64), Just(200), Just(1000)],
    ) -> SimConfig {
        let mut c = SimConfig::new(racks, PROTOCOLS[p], seed);
        // `which` picks the impairments (each bit one), so each also runs alone.
        c.loss = Loss {
            drop: if which & 1 != 0 { drop.max(0.01) } else { 0.0 },
            duplicate: if which & 2 != 0 { duplicate.max(0.01) } else { 0.0 },
            reorder: if which & 4 != 0 { reorder.max(0.01) } else { 0.0 },
            reorder_max,
        };
        c.resend_timeout = timeout;
        c
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_packet_reaches_the_application_exactly_once(m in arb_matrix(), cfg in arb_config()) {
        exactly_once(&m, &cfg)?;
    }

    /// Grant batching (K > 1) under the same impairments: a lost GRANT now holds back K
    /// packets, and a receiver waits for room for a whole unit; neither may lose or hang.
    #[test]
    fn batched_grants_deliver_every_packet_exactly_once(
        m in arb_matrix(), cfg in arb_config(), batch in 2u32..9, hadoop in any::<bool>(),
        rtt in 1u32..9,
    ) {
        let mut cfg = cfg;
        cfg.protocol = if hadoop { "hadoop-5" } else { "grpf" }.to_string();
        cfg.grant.rtt_packets = rtt;
        cfg.grant.grant_batch = batch;
        exactly_once(&m, &cfg)?;
    }
}

/// One impaired run: every packet delivered exactly once, no hang, no invariant broken.
fn exactly_once(m: &PacketMatrix, cfg: &SimConfig) -> Result<(), TestCaseError> {
    prop_assume!(cfg.racks <= m.n);
    let mut sim = Sim::new(m, cfg).unwrap();
    sim.run_to_end();
    prop_assert!(
        sim.finished(),
        "{} stalled at t={}: {:?}",
        cfg.protocol,
        sim.now(),
        cfg
    );
    prop_assert!(!sim.stuck(), "finished only at the step limit");
    for dst in 0..m.n {
        let inbox = sim.node(dst).inbox();
        prop_assert_eq!(inbox.errors, 0);
        let mut want_total = 0;
        for src in 0..m.n {
            let want = if src == dst { 0 } else { m.get(src, dst) };
            want_total += want;
            prop_assert_eq!(inbox.msgs[src].received as u64, want, "{}->{}", src, dst);
        }
        // The application got each packet once, whatever arrived twice.
        prop_assert_eq!(inbox.delivered, want_total);
    }
    let r = run(m, cfg);
    prop_assert!(r.complete);
    prop_assert_eq!(r.delivered_packets, r.data_packets);
    prop_assert_eq!(r.violations, 0);
    let l = r.loss.expect("impaired runs report loss");
    prop_assert_eq!(l.dead_peers, 0, "{:?}", l);
    Ok(())
}

fn matrix(n: usize, packets: u64) -> PacketMatrix {
    let mut v = vec![packets; n * n];
    for i in 0..n {
        v[i * n + i] = 0;
    }
    PacketMatrix { n, packets: v }
}

#[test]
fn drops_are_repaired_by_retransmissions_and_cost_time() {
    let m = matrix(8, 30);
    for protocol in ["grpf", "hadoop-5", "madd", "lockstep", "push-rr"] {
        let clean = run(&m, &SimConfig::new(1, protocol, 3));
        let mut c = SimConfig::new(1, protocol, 3);
        c.loss.drop = 0.03;
        let lossy = run(&m, &c);
        assert!(lossy.complete, "{protocol}");
        assert_eq!(lossy.violations, 0, "{protocol}");
        let l = lossy.loss.unwrap();
        assert!(l.dropped > 0 && l.retransmissions > 0, "{protocol}: {l:?}");
        assert!(
            lossy.completion_steps > clean.completion_steps,
            "{protocol}: a lost packet waits for the timer"
        );
        assert!(clean.loss.is_none());
    }
}

#[test]
fn duplicates_alone_need_no_retransmission_and_are_ignored() {
    let m = matrix(6, 20);
    let mut c = SimConfig::new(1, "grpf", 5);
    c.loss.duplicate = 0.2;
    let r = run(&m, &c);
    let l = r.loss.unwrap();
    assert!(r.complete);
    assert_eq!(r.violations, 0);
    assert!(l.duplicated > 0);
    // Data duplicates reach receivers; a duplicated control packet is absorbed by the sender.
    assert!(l.duplicates_received > 0 && l.duplicates_received <= l.duplicated);
    assert_eq!(r.delivered_packets, r.data_packets);
}

#[test]
fn a_long_timer_period_is_not_mistaken_for_a_hang() {
    let m = matrix(4, 10);
    let mut c = SimConfig::new(1, "grpf", 2);
    c.loss.drop = 0.05;
    c.resend_timeout = 30_000;
    let r = run(&m, &c);
    assert!(r.complete);
    assert!(r.completion_steps > 30_000, "{}", r.completion_steps);
}

#[test]
fn bad_loss_settings_say_which() {
    let m = matrix(4, 2);
    for (set, field) in [
        (
            Loss {
                drop: 1.0,
                ..Loss::OFF
            },
            "drop",
        ),
        (
            Loss {
                duplicate: -0.1,
                ..Loss::OFF
            },
            "duplicate",
        ),
        (
            Loss {
                reorder: 0.1,
                reorder_max: 0,
                ..Loss::OFF
            },
            "reorder",
        ),
    ] {
        let mut c = SimConfig::new(1, "grpf", 1);
        c.loss = set;
        let e = Sim::new(&m, &c).err().expect("rejected").to_string();
        assert!(e.contains(field), "{e}");
    }
}
