//! The GRPF receiver and sender driven directly, without a network: packets of granted
//! messages arrive in a random order, and the receiver must never raise its outstanding grants
//! above the limit, never grant past a message's end, and grant until every packet is in.

use coflowkit_shuffle::proto::grpf_rx::GrpfReceiver;
use coflowkit_shuffle::proto::sender::{GrantSender, SendOrder};
use coflowkit_shuffle::proto::{
    GrantOptions, GrantStart, Kind, Packet, Policy, Rounding, RxBasis, Unscheduled, Window,
};
use proptest::prelude::*;

prop_compose! {
    fn arb_opts()(
        overcommit in 1u32..4, rtt in 1u32..6, window in 0u8..3, c in 1u32..4, ceil in any::<bool>(),
        rand in any::<bool>(), granted in any::<bool>(), policy in 0u8..3, first in any::<bool>(),
        batch in prop_oneof![Just(1u32), 2u32..9],
    ) -> GrantOptions {
        GrantOptions {
            policy: [Policy::Grpf, Policy::Grpt, Policy::Srpt][policy as usize],
            rtt_packets: rtt,
            overcommit,
            window: match window { 0 => Window::ProRata, 1 => Window::Const(c), _ => Window::Unlimited },
            rounding: if ceil { Rounding::Ceil } else { Rounding::FloorMax1 },
            randomize: rand,
            rx_basis: if granted { RxBasis::Granted } else { RxBasis::Received },
            start: if first { GrantStart::FirstPacket } else { GrantStart::AllSenders },
            grant_batch: batch,
            ..GrantOptions::default()
        }
    }
}

proptest! {
    #[test]
    fn outstanding_grants_stay_under_the_limit_and_every_packet_is_granted(
        sizes in proptest::collection::vec(1u64..40, 1..8),
        unsched in proptest::collection::vec(0u32..6, 8),
        opts in arb_opts(),
        picks in proptest::collection::vec(any::<u32>(), 400),
    ) {
        let n = sizes.len() + 1; // node 0 receives from nodes 1..n
        let mut rx = GrpfReceiver::new(0, n, sizes.len() as u32, opts.clone());
        let mut out = Vec::new();
        // Per sender: packets it may send (unscheduled credit, then cumulative grants), sent.
        let mut allowed: Vec<u32> = (0..n).map(|j| if j == 0 { 0 } else { unsched[j - 1].min(sizes[j - 1] as u32) }).collect();
        let mut sent = vec![0u32; n];
        for j in 1..n {
            rx.on_packet(&Packet { kind: Kind::Announce, src: j as u32, dst: 0, seq: 0, total: sizes[j - 1] as u32, unsched: allowed[j], seed: j as u64 }, &mut out);
        }
        let limit = opts.max_out_grants();
        let mut k = 0;
        loop {
            let before = rx.outstanding();
            rx.poll_grants(&mut out);
            if !out.is_empty() {
                prop_assert!(rx.outstanding() <= limit.max(before), "{} > {}", rx.outstanding(), limit);
            }
            for g in out.drain(..) {
                if g.kind == Kind::Grant {
                    prop_assert!(g.seq as u64 <= sizes[g.dst as usize - 1]);
                    allowed[g.dst as usize] = allowed[g.dst as usize].max(g.seq);
                }
            }
            let ready: Vec<usize> = (1..n).filter(|&j| sent[j] < allowed[j]).collect();
            if ready.is_empty() {
                break;
            }
            let j = ready[picks[k % picks.len()] as usize % ready.len()];
            k += 1;
            let p = Packet { kind: Kind::Data, src: j as u32, dst: 0, seq: sent[j], total: sizes[j - 1] as u32, unsched: allowed[j].min(unsched[j - 1]), seed: j as u64 };
            sent[j] += 1;
            rx.on_packet(&p, &mut out);
        }
        prop_assert!(rx.inbox.done(), "stalled with {:?} of {:?} sent", sent, sizes);
        prop_assert_eq!(rx.inbox.errors, 0);
        prop_assert_eq!(rx.outstanding(), 0);
    }
}

#[test]
fn stalled_message_window_grows_as_the_rest_drains() {
    // §3.4 point 2: a message that makes no progress sees its window grow. Receiver with
    // 80 grants; messages of 100 (from 1) and 900 (from 2) packets; only node 2 sends.
    let opts = GrantOptions {
        unscheduled: Unscheduled::None,
        ..GrantOptions::default()
    };
    let mut rx = GrpfReceiver::new(0, 3, 2, opts);
    let mut out = Vec::new();
    for (j, t) in [(1u32, 100u32), (2, 900)] {
        rx.on_packet(
            &Packet {
                kind: Kind::Announce,
                src: j,
                dst: 0,
                seq: 0,
                total: t,
                unsched: 0,
                seed: 0,
            },
            &mut out,
        );
    }
    rx.poll_grants(&mut out);
    let to1 = |out: &[Packet]| out.iter().filter(|g| g.dst == 1).count();
    assert_eq!(to1(&out), 8, "window of node 1: floor(80 x 100 / 1000)");
    let mut granted1 = to1(&out);
    out.clear();
    for seq in 0..800 {
        rx.on_packet(
            &Packet {
                kind: Kind::Data,
                src: 2,
                dst: 0,
                seq,
                total: 900,
                unsched: 0,
                seed: 0,
            },
            &mut out,
        );
        rx.poll_grants(&mut out);
        granted1 += to1(&out);
        out.clear();
    }
    // Now 100 + 100 packets remain: node 1's window is floor(80 x 100 / 200) = 40.
    assert_eq!(granted1, 40);
}

#[test]
fn sender_never_sends_beyond_its_grants() {
    let mut s = GrantSender::new(
        0,
        &[0, 6, 3],
        &[5, 6, 7],
        SendOrder::Policy(Policy::Grpf),
        true,
        Unscheduled::ProRata,
        4,
    );
    let mut sent = [0u32; 3];
    while let Some(p) = s.poll_send() {
        sent[p.dst as usize] += 1;
    }
    assert_eq!(
        sent.iter().sum::<u32>(),
        4,
        "only the unscheduled budget goes"
    );
    s.on_grant(&Packet {
        kind: Kind::Grant,
        src: 1,
        dst: 0,
        seq: 6,
        total: 0,
        unsched: 0,
        seed: 0,
    });
    while let Some(p) = s.poll_send() {
        sent[p.dst as usize] += 1;
    }
    assert_eq!(sent[1], 6);
    assert!(sent[2] < 3);
}

/// Four senders of 100 packets each to node 0, no unscheduled data; the receiver's granted
/// packets arrive one at a time, round robin over the senders holding grants. Returns the
/// GRANT packets the receiver sent and the most it ever had outstanding.
fn grants_for_batch(batch: u32) -> (usize, u64) {
    let opts = GrantOptions {
        unscheduled: Unscheduled::None,
        rtt_packets: 4,
        grant_batch: batch,
        ..GrantOptions::default()
    };
    let limit = opts.max_out_grants();
    let mut rx = GrpfReceiver::new(0, 5, 4, opts);
    let mut out = Vec::new();
    for j in 1..5u32 {
        let ann = Packet {
            kind: Kind::Announce,
            src: j,
            dst: 0,
            seq: 0,
            total: 100,
            unsched: 0,
            seed: j as u64,
        };
        rx.on_packet(&ann, &mut out);
    }
    let (mut allowed, mut sent) = ([0u32; 5], [0u32; 5]);
    let (mut grants, mut peak, mut turn) = (0, 0, 0);
    loop {
        rx.poll_grants(&mut out);
        peak = peak.max(rx.outstanding());
        for g in out.drain(..).filter(|p| p.kind == Kind::Grant) {
            grants += 1;
            allowed[g.dst as usize] = allowed[g.dst as usize].max(g.seq);
        }
        let ready: Vec<usize> = (1..5).filter(|&j| sent[j] < allowed[j]).collect();
        let Some(&j) = ready.get(turn % ready.len().max(1)) else {
            break;
        };
        turn += 1;
        let p = Packet {
            kind: Kind::Data,
            src: j as u32,
            dst: 0,
            seq: sent[j],
            total: 100,
            unsched: 0,
            seed: j as u64,
        };
        sent[j] += 1;
        rx.on_packet(&p, &mut out);
    }
    assert!(rx.inbox.done(), "batch {batch}: stalled at {sent:?}");
    assert!(peak <= limit, "batch {batch}: {peak} outstanding > {limit}");
    (grants, peak)
}

#[test]
fn grant_batches_send_one_grant_per_unit_and_keep_the_limit() {
    let (one, peak1) = grants_for_batch(1);
    assert_eq!(one, 400, "a GRANT per packet");
    assert_eq!(peak1, 40);
    for k in [2u32, 4, 8] {
        let (got, peak) = grants_for_batch(k);
        // One per unit of k (a message's last unit may be short), and a round's units to one
        // message fold into one datagram.
        assert!(
            got <= 4 * 100u32.div_ceil(k) as usize,
            "k = {k}: {got} grants"
        );
        assert!(peak > 40 - k as u64, "k = {k}: only {peak} outstanding");
    }
}
