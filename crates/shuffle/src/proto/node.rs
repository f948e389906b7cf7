//! One node of a shuffle: a sending half and a receiving half behind one sans-IO interface.
//! A driver (the packet simulator, later a UDP transport) feeds it packets and the time and
//! polls it for packets; the node has no clock and does no I/O.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::config::{GrantOptions, Protocol, PushOrder};
use super::grpf_rx::GrpfReceiver;
use super::hadoop_rx::HadoopReceiver;
use super::inbox::Inbox;
use super::lockstep::LockstepSender;
use super::madd::MaddSender;
use super::packet::{Kind, Packet};
use super::priority::mix;
use super::sender::{GrantSender, SendOrder};

#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Sender {
    Grant(GrantSender),
    Madd(MaddSender),
    Lockstep(LockstepSender),
}

// Nodes sit in one flat vector and are touched on every packet: no boxing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Receiver {
    Grpf(GrpfReceiver),
    Hadoop(HadoopReceiver),
    /// Receives without granting (MADD, lockstep, push).
    Sink(Inbox),
}

/// Everything a node needs to start.
#[derive(Debug, Clone)]
pub struct NodeSpec<'a> {
    pub id: usize,
    /// Packets this node sends to each node (its row of the packet matrix).
    pub out_sizes: &'a [u64],
    /// Incoming messages that carry data (known in advance only to protocols that say so).
    pub expected_in: u32,
    pub protocol: &'a Protocol,
    pub grant: &'a GrantOptions,
    /// MADD's Gamma in timesteps, as num / den.
    pub madd_gamma: (u64, u64),
    pub seed: u64,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub sender: Sender,
    pub receiver: Receiver,
    announce_all: bool,
}

impl Node {
    pub fn new(s: &NodeSpec) -> Node {
        let n = s.out_sizes.len();
        let node_seed = mix(s.seed, s.id as u64);
        // One shared seed per outgoing message (§3.8), told to the receiver in its first packet.
        let seeds: Vec<u64> = (0..n).map(|j| mix(node_seed, j as u64 + 1)).collect();
        let rng = ChaCha8Rng::seed_from_u64(node_seed);
        let g = s.grant;
        let (sender, receiver) = match *s.protocol {
            Protocol::Grant(policy) => (
                Sender::Grant(
                    GrantSender::new(
                        s.id,
                        s.out_sizes,
                        &seeds,
                        SendOrder::Policy(policy),
                        g.randomize,
                        g.unscheduled,
                        g.unsched_budget,
                    )
                    .with_redirect_limit(g.redirect_limit),
                ),
                Receiver::Grpf(GrpfReceiver::new(
                    s.id,
                    n,
                    s.expected_in,
                    GrantOptions {
                        policy,
                        ..g.clone()
                    },
                )),
            ),
            Protocol::Hadoop { connections } => (
                Sender::Grant(GrantSender::new(
                    s.id,
                    s.out_sizes,
                    &seeds,
                    SendOrder::LeastRecent,
                    false,
                    super::config::Unscheduled::None,
                    0,
                )),
                Receiver::Hadoop(HadoopReceiver::new(
                    s.id,
                    n,
                    s.expected_in,
                    connections,
                    g.rtt_packets,
                    rng,
                )),
            ),
            Protocol::Madd => (
                Sender::Madd(MaddSender::new(
                    s.id,
                    s.out_sizes,
                    s.madd_gamma.0,
                    s.madd_gamma.1,
                )),
                Receiver::Sink(Inbox::new(s.id, n, s.expected_in)),
            ),
            Protocol::Lockstep => (
                Sender::Lockstep(LockstepSender::new(s.id, s.out_sizes)),
                Receiver::Sink(Inbox::new(s.id, n, s.expected_in)),
            ),
            Protocol::Push(order) => {
                let order = match order {
                    PushOrder::Blocks => SendOrder::ByReceiver,
                    PushOrder::RoundRobin => SendOrder::LeastRecent,
                };
                let none = super::config::Unscheduled::None;
                (
                    Sender::Grant(
                        GrantSender::new(s.id, s.out_sizes, &seeds, order, false, none, 0)
                            .unscheduled_all(),
                    ),
                    Receiver::Sink(Inbox::new(s.id, n, s.expected_in)),
                )
            }
        };
        // Hadoop-C and the push strawmen keep the thesis' announcements (messages without
        // unscheduled data only); the GRPF family follows its option.
        let announce_all = matches!(s.protocol, Protocol::Grant(_)) && g.announce_all;
        Node {
            sender,
            receiver,
            announce_all,
        }
    }

    /// Packets to send at time 0 (announcements of messages without unscheduled data).
    pub fn start(&mut self, out: &mut Vec<Packet>) {
        if let Sender::Grant(s) = &mut self.sender {
            s.start(self.announce_all, out);
        }
    }

    /// One arriving packet; replies (ACKs) go to `out`.
    pub fn on_packet(&mut self, p: &Packet, out: &mut Vec<Packet>) {
        match p.kind {
            Kind::Grant => {
                if let Sender::Grant(s) = &mut self.sender {
                    s.on_grant(p);
                }
            }
            Kind::Ack => {
                if let Sender::Grant(s) = &mut self.sender {
                    s.on_ack(p);
                }
            }
            Kind::Data | Kind::Announce => match &mut self.receiver {
                Receiver::Grpf(r) => r.on_packet(p, out),
                Receiver::Hadoop(r) => r.on_packet(p, out),
                Receiver::Sink(b) => {
                    b.arrive(p, out);
                }
            },
        }
    }

    /// Grants the receiving half wants to issue now.
    pub fn poll_grants(&mut self, out: &mut Vec<Packet>) {
        match &mut self.receiver {
            Receiver::Grpf(r) => r.poll_grants(out),
            Receiver::Hadoop(r) => r.poll_grants(out),
            Receiver::Sink(_) => {}
        }
    }

    /// The data packet to put on the uplink now, if any.
    pub fn poll_send(&mut self, now: u64) -> Option<Packet> {
        match &mut self.sender {
            Sender::Grant(s) => s.poll_send(now),
            Sender::Madd(s) => s.poll_send(now),
            Sender::Lockstep(s) => s.poll_send(),
        }
    }

    /// The driver's barrier after lockstep step `step` has completed.
    pub fn on_barrier(&mut self, step: usize) {
        if let Sender::Lockstep(s) = &mut self.sender {
            s.on_barrier(step);
        }
    }

    /// The earliest time the node wants to be polled without a packet arriving. Nothing in the
    /// ideal network needs one (no losses, so no RESEND timer yet).
    pub fn next_timer(&self) -> Option<u64> {
        None
    }

    pub fn inbox(&self) -> &Inbox {
        match &self.receiver {
            Receiver::Grpf(r) => &r.inbox,
            Receiver::Hadoop(r) => &r.inbox,
            Receiver::Sink(b) => b,
        }
    }

    /// Packets the receiving half still expects (GlobalSched's all-reduce input; 0 for
    /// receivers without grants).
    pub fn rx_remaining(&self) -> u64 {
        match &self.receiver {
            Receiver::Grpf(r) => r.remaining(),
            _ => 0,
        }
    }

    /// Pro rata overcommitment: this node's and the busiest receiver's incoming packets.
    pub fn set_overcommit_share(&mut self, own: u64, max: u64) {
        if let Receiver::Grpf(r) = &mut self.receiver {
            r.set_overcommit_share(own, max);
        }
    }

    /// GlobalSched: the all-reduced maximum of `rx_remaining` over all receivers.
    pub fn set_global_max(&mut self, g: u64) {
        if let Receiver::Grpf(r) = &mut self.receiver {
            r.set_global_max(g);
        }
    }

    /// (outstanding grants, the limit) for receivers that have a total limit.
    pub fn grant_budget(&self) -> Option<(u64, u64)> {
        match &self.receiver {
            Receiver::Grpf(r) => Some((r.outstanding(), r.max_outstanding())),
            _ => None,
        }
    }
}
