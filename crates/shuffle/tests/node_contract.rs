//! The sans-IO contract driven by a tiny driver of its own (not the packet simulator): a wire
//! with a fixed latency that loses exactly the packets a test names. Loss recovery must repair
//! lost DATA, GRANTs, ACKs and announcements, and name a peer that went silent.

use coflowkit_shuffle::proto::{
    Clock, GrantOptions, Kind, Node, NodeSpec, Packet, Protocol, Recovery,
};

const LATENCY: u64 = 3;
const TIMEOUT: u64 = 50;

struct Net {
    nodes: Vec<Node>,
    /// (arrival time, packet) in flight.
    wire: Vec<(u64, Packet)>,
    now: u64,
    /// Nodes that stopped (killed): they neither receive nor send.
    dead: Vec<bool>,
    sent: Vec<Packet>,
}

impl Net {
    fn new(sizes: &[Vec<u64>], protocol: &str) -> Net {
        let n = sizes.len();
        let protocol = Protocol::parse(protocol).unwrap();
        let grant = GrantOptions::default();
        let nodes = (0..n)
            .map(|i| {
                let senders: Vec<u32> = (0..n)
                    .filter(|&s| s != i && sizes[s][i] > 0)
                    .map(|s| s as u32)
                    .collect();
                Node::new(&NodeSpec {
                    id: i,
                    out_sizes: &sizes[i],
                    senders: &senders,
                    protocol: &protocol,
                    grant: &grant,
                    madd_gamma: (40, 1),
                    clock: Clock::default(),
                    recovery: Some(Recovery {
                        timeout: TIMEOUT,
                        dead_after: 4,
                    }),
                    seed: 9,
                })
            })
            .collect();
        Net {
            nodes,
            wire: Vec::new(),
            now: 0,
            dead: vec![false; n],
            sent: Vec::new(),
        }
    }

    /// One time unit; `lose` says whether a packet put on the wire now is lost.
    fn step(&mut self, lose: &mut impl FnMut(&Packet) -> bool) {
        let now = self.now;
        let (due, rest): (Vec<_>, Vec<_>) = self.wire.drain(..).partition(|&(t, _)| t <= now);
        self.wire = rest;
        for (_, p) in due {
            if !self.dead[p.dst as usize] {
                self.nodes[p.dst as usize].handle_packet(now, &p);
            }
        }
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if self.dead[i] {
                continue;
            }
            if node.poll_timeout().is_some_and(|t| t <= now) {
                node.handle_timeout(now);
            }
            let mut data = false;
            while let Some(p) = node.poll_transmit(now, !data) {
                data |= p.kind == Kind::Data;
                self.sent.push(p);
                if !lose(&p) {
                    self.wire.push((now + LATENCY, p));
                }
            }
        }
        self.now += 1;
    }

    fn run(&mut self, limit: u64, mut lose: impl FnMut(&Packet) -> bool) {
        while self.now < limit && !self.done() {
            self.step(&mut lose);
        }
    }

    fn done(&self) -> bool {
        self.nodes
            .iter()
            .zip(&self.dead)
            .all(|(n, &d)| d || n.is_done())
    }

    fn received(&self, src: usize, dst: usize) -> u32 {
        self.nodes[dst].inbox().msgs[src].received
    }
}

fn all_to_all(n: usize, packets: u64) -> Vec<Vec<u64>> {
    (0..n)
        .map(|i| (0..n).map(|j| if i == j { 0 } else { packets }).collect())
        .collect()
}

#[test]
fn many_one_packet_messages_complete_without_loss_and_without_timers_firing() {
    for protocol in ["grpf", "hadoop-5", "madd", "push-rr"] {
        let sizes = all_to_all(8, 1);
        let mut net = Net::new(&sizes, protocol);
        net.run(TIMEOUT, |_| false);
        assert!(net.done(), "{protocol} not done at {}", net.now);
        for s in 0..8 {
            for d in 0..8 {
                if s != d {
                    assert_eq!(net.received(s, d), 1, "{protocol}: {s}->{d}");
                }
            }
        }
        assert!(net.sent.iter().all(|p| p.kind != Kind::Resend));
        assert!(net.nodes.iter().all(|n| n.retransmissions == 0));
    }
}

#[test]
fn a_one_packet_message_whose_only_packet_and_announcement_are_lost_is_asked_for() {
    let sizes = vec![vec![0, 0], vec![1, 0]];
    let mut net = Net::new(&sizes, "grpf");
    let mut lost = 0;
    net.run(10 * TIMEOUT, |p| {
        let first = p.src == 1 && matches!(p.kind, Kind::Data | Kind::Announce) && lost < 2;
        lost += first as u32;
        first
    });
    assert!(net.done(), "stuck at {}", net.now);
    assert_eq!(net.received(1, 0), 1);
    // The receiver asked about a message it never heard of, then for its packet.
    let resends: Vec<_> = net.sent.iter().filter(|p| p.kind == Kind::Resend).collect();
    assert_eq!((resends[0].seq, resends[0].total), (0, 0));
    assert!(net.nodes[1].retransmissions >= 1);
}

#[test]
fn lost_grants_and_data_are_recovered() {
    for protocol in ["grpf", "hadoop-5"] {
        let sizes = all_to_all(4, 30);
        let mut net = Net::new(&sizes, protocol);
        let mut k = 0u32;
        // Lose every 5th grant and every 7th data packet, first transmissions and repairs alike.
        net.run(200 * TIMEOUT, |p| {
            k += 1;
            (p.kind == Kind::Grant && k.is_multiple_of(5))
                || (p.kind == Kind::Data && k.is_multiple_of(7))
        });
        assert!(net.done(), "{protocol} stuck at {}", net.now);
        for s in 0..4 {
            for d in 0..4 {
                if s != d {
                    assert_eq!(net.received(s, d), 30, "{protocol}: {s}->{d}");
                }
            }
        }
        assert!(net.nodes.iter().all(|n| n.inbox().errors == 0));
        assert!(net.nodes.iter().all(|n| n.dead_peer().is_none()));
    }
}

#[test]
fn a_lost_ack_is_sent_again_when_the_sender_probes() {
    let sizes = vec![vec![0, 3], vec![0, 0]];
    let mut net = Net::new(&sizes, "grpf");
    let mut acks = 0;
    net.run(10 * TIMEOUT, |p| {
        acks += (p.kind == Kind::Ack) as u32;
        p.kind == Kind::Ack && acks == 1
    });
    assert!(net.done(), "stuck at {}", net.now);
    assert!(net.nodes[1].inbox().done());
    // The sender retransmitted its last packet; the receiver counted it as a duplicate.
    assert_eq!(net.nodes[0].retransmissions, 1);
    assert_eq!(net.nodes[1].inbox().duplicates, 1);
    assert_eq!(net.sent.iter().filter(|p| p.kind == Kind::Ack).count(), 2);
}

#[test]
fn a_killed_peer_is_named_after_a_bounded_number_of_probes() {
    let sizes = all_to_all(3, 20);
    let mut net = Net::new(&sizes, "grpf");
    net.dead[2] = true;
    net.run(100 * TIMEOUT, |_| false);
    for i in 0..2 {
        assert_eq!(net.nodes[i].dead_peer(), Some(2), "node {i}");
    }
    // Declared within dead_after + 2 periods of the last word from it (here: never a word).
    let mut again = Net::new(&sizes, "grpf");
    again.dead[2] = true;
    while again.nodes[0].dead_peer().is_none() {
        again.step(&mut |_| false);
    }
    assert!(again.now <= (4 + 2) * TIMEOUT, "took {}", again.now);
}

#[test]
fn madd_paces_in_the_drivers_unit() {
    // The same MADD sender with a clock of 1000 units per packet starting at 5000: packet k of
    // a 4-packet message under Gamma = 8 packet times goes at 5000 + 2000 k.
    let protocol = Protocol::Madd;
    let grant = GrantOptions::default();
    let mut node = Node::new(&NodeSpec {
        id: 0,
        out_sizes: &[0, 4],
        senders: &[],
        protocol: &protocol,
        grant: &grant,
        madd_gamma: (8, 1),
        clock: Clock {
            start: 5000,
            per_packet: 1000,
        },
        recovery: None,
        seed: 1,
    });
    let mut times = Vec::new();
    for t in (5000..14_000).step_by(250) {
        if node.poll_transmit(t, true).is_some() {
            times.push(t);
        }
    }
    assert_eq!(times, vec![5000, 7000, 9000, 11_000]);
    assert_eq!(node.poll_timeout(), None, "no timer without loss recovery");
}

#[test]
fn forged_acks_that_do_not_acknowledge_the_message_are_ignored_and_counted() {
    let sizes = vec![vec![0, 3], vec![0, 0]];
    let mut net = Net::new(&sizes, "grpf");
    // ACKs from node 1 for none, part, or more than the 3 packets sent (as a spoofer sends).
    for seq in [0, 1, 2, 4, u32::MAX - 1] {
        let ack = Packet {
            kind: Kind::Ack,
            src: 1,
            dst: 0,
            seq,
            total: 0,
            unsched: 0,
            seed: 0,
        };
        net.nodes[0].handle_packet(0, &ack);
    }
    assert!(!net.nodes[0].is_done(), "a forged ACK ended the sender");
    assert_eq!(net.nodes[0].bad_acks, 5);
    // The sender still repairs a lost first packet (an ACKed sender would ignore the RESEND).
    let mut lost = false;
    net.run(20 * TIMEOUT, |p| {
        let first = p.kind == Kind::Data && !lost;
        lost |= first;
        first
    });
    assert!(net.done(), "stuck at {}", net.now);
    assert_eq!(net.received(0, 1), 3);
    assert_eq!(net.nodes[0].bad_acks, 5);
}
