//! Protocol invariants over random small shuffles and random settings: every packet delivered
//! exactly once, no data packet sent beyond its grants and unscheduled credit, outstanding
//! grants never raised above the receiver's limit (the simulator audits the last two on every
//! packet and counts violations).

use coflowkit_pktsim::{Oracles, Placement, Preemption, Priorities, Sim, SimConfig, Variation};
use coflowkit_shuffle::matrix::PacketMatrix;
use coflowkit_shuffle::proto::{GrantStart, Rounding, RxBasis, Unscheduled, Window};
use proptest::prelude::*;

fn arb_matrix() -> impl Strategy<Value = PacketMatrix> {
    (2usize..10).prop_flat_map(|n| {
        proptest::collection::vec(prop_oneof![3 => Just(0u64), 5 => 1u64..40], n * n)
            .prop_map(move |packets| PacketMatrix { n, packets })
    })
}

const PROTOCOLS: [&str; 9] = [
    "grpf",
    "grpt",
    "srpt",
    "hadoop-1",
    "hadoop-3",
    "madd",
    "lockstep",
    "push-rr",
    "push-blocks",
];

prop_compose! {
    fn arb_config()(
        p in 0..PROTOCOLS.len(), racks in 1usize..3, seed in any::<u64>(),
        overcommit in 1u32..4, rtt in 1u32..10, window in 0u8..3, wsize in 1u32..5,
        ceil in any::<bool>(), randomize in any::<bool>(), unsched in 0u8..3, budget in 0u32..12,
        granted in any::<bool>(), first in any::<bool>(), announce in any::<bool>(),
        prio in 0u8..3, half_core in any::<bool>(), rx_rate in 1u32..3,
        interference in (0u8..3, 1u32..40, 0u8..4, 0u32..3, 0u8..3, any::<bool>()),
        batch in prop_oneof![2 => Just(1u32), 1 => 2u32..9],
    ) -> SimConfig {
        let (preempt, mean, global, stale, redirect, pro_rata) = interference;
        let mut c = SimConfig::new(racks, PROTOCOLS[p], seed);
        c.placement = Placement::Random;
        c.grant.overcommit = overcommit;
        c.grant.rtt_packets = rtt;
        c.grant.window = match window { 0 => Window::ProRata, 1 => Window::Const(wsize), _ => Window::Unlimited };
        c.grant.rounding = if ceil { Rounding::Ceil } else { Rounding::FloorMax1 };
        c.grant.randomize = randomize;
        c.grant.unscheduled = match unsched { 0 => Unscheduled::None, 1 => Unscheduled::ProRata, _ => Unscheduled::PerMessage };
        c.grant.unsched_budget = budget;
        c.grant.rx_basis = if granted { RxBasis::Granted } else { RxBasis::Received };
        c.grant.start = if first { GrantStart::FirstPacket } else { GrantStart::AllSenders };
        c.grant.announce_all = announce;
        c.priorities = match prio { 0 => Priorities::None, 1 => Priorities::Edge, _ => Priorities::All };
        c.core_fraction = if half_core { 0.5 } else { 1.0 };
        c.rx_rate = rx_rate;
        if preempt > 0 {
            c.preempt = Preemption { fraction: 0.25 * preempt as f64, mean_steps: mean as f64 };
        }
        if global > 0 {
            c.grant.global_exponent = Some(global as u32);
            c.allreduce_stale = stale as f64;
            c.allreduce_drain = global != 3;
        }
        // A redirection limit can deadlock (tests/interference.rs); only the default here.
        if redirect == 2 {
            c.bw_variation = Variation { depth: 0.5, mean_steps: mean as f64 };
        }
        c.grant.pro_rata_overcommit = pro_rata;
        c.grant.grant_batch = batch;
        c
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_packet_arrives_once_and_no_invariant_breaks(m in arb_matrix(), cfg in arb_config()) {
        prop_assume!(cfg.racks <= m.n);
        let mut sim = Sim::new(&m, &cfg).unwrap();
        sim.run_to_end();
        prop_assert!(sim.finished(), "{} stalled at t={}: {:?}", cfg.protocol, sim.now(), cfg);
        let n = m.n;
        for dst in 0..n {
            let inbox = sim.node(dst).inbox();
            prop_assert_eq!(inbox.errors, 0);
            for src in 0..n {
                let want = if src == dst { 0 } else { m.get(src, dst) };
                prop_assert_eq!(inbox.msgs[src].received as u64, want, "{}->{}", src, dst);
                prop_assert!(inbox.msgs[src].granted <= inbox.msgs[src].total);
            }
        }
        let r = coflowkit_pktsim::run(&m, &cfg);
        prop_assert_eq!(r.violations, 0);
        prop_assert!(r.optimality <= 1.0 + 1e-9, "faster than the bound: {}", r.optimality);
        // The oracle bounds completion for every protocol and setting.
        if let Some(o) = r.oracle_steps {
            prop_assert!(o.bound() <= r.completion_steps, "{:?} vs {}", o, r.completion_steps);
        }
        prop_assert!(r.messages_done.windows(2).all(|w| w[0] <= w[1]));
        if let Some(&f) = r.messages_done.last() {
            prop_assert_eq!(f, 1.0);
        }
        // Same seed, same result.
        prop_assert_eq!(coflowkit_pktsim::run(&m, &cfg), r);
    }
}

/// The shrunk settings of two proptest failures (push-rr, one rack, preemption 0.25): the run
/// finished 1 step before the receiver oracle, which let packets land only in steps where a
/// sender ran, while the ToR kept delivering packets sent before both senders were preempted.
fn shrunk(seed: u64, mean_steps: f64) -> SimConfig {
    let mut c = SimConfig::new(1, "push-rr", seed);
    c.placement = Placement::Random;
    c.grant.overcommit = 1;
    c.grant.rtt_packets = 1;
    c.grant.window = Window::ProRata;
    c.grant.rounding = Rounding::FloorMax1;
    c.grant.unscheduled = Unscheduled::None;
    c.grant.unsched_budget = 0;
    c.grant.rx_basis = RxBasis::Received;
    c.grant.start = GrantStart::AllSenders;
    c.priorities = Priorities::None;
    c.rx_rate = 1;
    c.preempt = Preemption {
        fraction: 0.25,
        mean_steps,
    };
    c
}

#[test]
fn two_senders_preempted_together_do_not_beat_the_receiver_oracle() {
    // Node 0 sends 30 and node 1 sends 6 to node 2. Both send in steps 0-4 (node 0 also in
    // 5), then both are preempted until step 16: the ToR still lands their 11 packets one per
    // step and node 2, running, processes them by step 14 (+ latency). The oracle had node 2
    // idle in steps 6-15 and said 58 against the run's 57.
    let m = PacketMatrix {
        n: 3,
        packets: vec![0, 0, 30, 0, 0, 6, 0, 0, 0],
    };
    let o = within_oracle(&m, &shrunk(14858637073088114816, 9.0));
    // Node 2 runs in steps 0-22 and 35-65 (rx_rate 1): 11 packets land by step 10, 7 more in
    // steps 16-22, 12 queue while it is preempted in 23-34, and the last 6 land and the
    // queue drains one per step in 35-52.
    assert_eq!(o.receiver, 53);
}

#[test]
fn the_second_shrunk_case_stays_within_the_oracle() {
    // Nodes 0 and 2 send 28 and 24 to node 1 (optimality was 1.012 against the old oracle).
    let m = PacketMatrix {
        n: 3,
        packets: vec![0, 28, 0, 0, 0, 0, 0, 24, 0],
    };
    within_oracle(&m, &shrunk(5178028542287386232, 10.0));
}

/// Run `m` under `c`: it completes, no faster than the oracles' bound. Returns the oracles.
fn within_oracle(m: &PacketMatrix, c: &SimConfig) -> Oracles {
    let r = coflowkit_pktsim::run(m, c);
    assert!(r.complete);
    let o = r.oracle_steps.expect("preemption on");
    assert!(
        o.bound() <= r.completion_steps,
        "{o:?} vs {}",
        r.completion_steps
    );
    assert!(r.optimality <= 1.0 + 1e-9, "{}", r.optimality);
    o
}
