//! One node of a shuffle: a sending half and a receiving half behind one sans-IO contract, in
//! the style of quinn-proto's `Connection`: packets and the time go in, packets and the next
//! timer come out. The node has no clock, no socket and no thread; the packet simulator and
//! the UDP transport drive the same code.
//!
//! # The contract
//!
//! Time is a plain `u64` in the driver's unit (the simulator's timestep, a transport's
//! nanosecond) and **never goes backwards** across the calls on one node. Call order:
//!
//! 1. `handle_packet(now, p)` for each packet that arrives. Replies (ACKs, answers to probes
//!    and RESENDs) are queued inside the node.
//! 2. `handle_timeout(now)` once `now >= poll_timeout()` (early or late calls are harmless).
//! 3. `poll_transmit(now, data_ok)` until it returns `None`: queued control packets first
//!    (announcements, ACKs, RESENDs, answers), then the grants the receiver decides on now,
//!    over every packet handled so far, then at most one DATA packet per call if `data_ok`
//!    (retransmissions before new data). A driver whose link has room for k packets calls with
//!    `data_ok` until it got k DATA packets, then with `false` until `None`.
//! 4. `poll_timeout()` for the next timer; `is_done()` and `dead_peer()` for the end.
//!
//! Grant decisions are made only in `poll_transmit`, so a driver that handles a batch of
//! packets before polling decides once on the whole batch. A driver that wants replies on the
//! wire at once but decisions once per batch (the simulator: ACKs leave in the timestep a
//! packet lands, grants once per timestep after every arrival) drains `poll_control` after
//! each `handle_packet` and calls `poll_transmit` once per batch.
//!
//! A few inputs exist only where a driver knows more than one node can (documented on each
//! method): the lockstep barrier (`on_barrier`), GlobalSched's all-reduced maximum
//! (`set_global_max`), and pro rata overcommitment's share (`set_overcommit_share`).

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::clock::Clock;
use super::config::{GrantOptions, Protocol, PushOrder};
use super::grpf_rx::GrpfReceiver;
use super::hadoop_rx::HadoopReceiver;
use super::inbox::{Arrival, Inbox};
use super::lockstep::LockstepSender;
use super::madd::MaddSender;
use super::packet::{Kind, Packet};
use super::priority::mix;
use super::recovery::{Probe, Recovery, Watch};
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

impl Sender {
    /// Packets of the message to `j` and how many have been sent.
    fn sent(&self, j: usize) -> (u32, u32) {
        match self {
            Sender::Grant(s) => s.sent(j),
            Sender::Madd(s) => s.sent(j),
            Sender::Lockstep(s) => s.sent(j),
        }
    }

    fn packet(&self, j: usize, k: u32) -> Packet {
        match self {
            Sender::Grant(s) => s.packet(j, k),
            Sender::Madd(s) => s.packet(j, k),
            Sender::Lockstep(s) => s.packet(j, k),
        }
    }
}

/// Everything a node needs to start.
#[derive(Debug, Clone)]
pub struct NodeSpec<'a> {
    pub id: usize,
    /// Packets this node sends to each node (its row of the packet matrix; the diagonal is
    /// local and ignored). A real driver sends every message as at least one packet.
    pub out_sizes: &'a [u64],
    /// The nodes with a message for this one (a real all-to-all: every other node). Receivers
    /// that wait for every sender count them; loss recovery asks the silent ones.
    pub senders: &'a [u32],
    pub protocol: &'a Protocol,
    pub grant: &'a GrantOptions,
    /// MADD's Gamma in packet times, as num / den.
    pub madd_gamma: (u64, u64),
    /// The driver's time unit (default: the simulator's timesteps from 0).
    pub clock: Clock,
    /// Loss recovery (None: off, as in the loss-free simulator).
    pub recovery: Option<Recovery>,
    pub seed: u64,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub sender: Sender,
    pub receiver: Receiver,
    id: usize,
    clock: Clock,
    /// Control packets waiting for the driver: `ctrl[head..]`.
    ctrl: Vec<Packet>,
    head: usize,
    /// DATA retransmissions waiting: (peer, first packet, end).
    retx: VecDeque<(u32, u32, u32)>,
    /// Something happened since the receiver last decided on grants.
    stale: bool,
    acked: Vec<bool>,
    unacked: u32,
    /// Packets of the message to each node: an ACK counts only if its `seq` says that many.
    out_packets: Vec<u64>,
    /// ACKs ignored because they did not acknowledge the message sent (forged or garbled).
    pub bad_acks: u64,
    /// Per node: it has a message for this one.
    expect: Vec<bool>,
    /// Per sender: its message is being repaired (see `chase`).
    repairing: Vec<bool>,
    watch: Option<Watch>,
    now: u64,
    /// DATA packets sent again (answers to RESENDs and probes).
    pub retransmissions: u64,
}

impl Node {
    pub fn new(s: &NodeSpec) -> Node {
        let n = s.out_sizes.len();
        let node_seed = mix(s.seed, s.id as u64);
        // One shared seed per outgoing message (§3.8), told to the receiver in its first packet.
        let seeds: Vec<u64> = (0..n).map(|j| mix(node_seed, j as u64 + 1)).collect();
        let rng = ChaCha8Rng::seed_from_u64(node_seed);
        let g = s.grant;
        let expected = s.senders.len() as u32;
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
                    expected,
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
                    expected,
                    connections,
                    g.rtt_packets,
                    g.grant_batch,
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
                Receiver::Sink(Inbox::new(s.id, n, expected)),
            ),
            Protocol::Lockstep => (
                Sender::Lockstep(LockstepSender::new(s.id, s.out_sizes)),
                Receiver::Sink(Inbox::new(s.id, n, expected)),
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
                    Receiver::Sink(Inbox::new(s.id, n, expected)),
                )
            }
        };
        // Hadoop-C and the push strawmen keep the thesis' announcements (messages without
        // unscheduled data only); the GRPF family follows its option. They go first.
        let announce_all = matches!(s.protocol, Protocol::Grant(_)) && g.announce_all;
        let mut ctrl = Vec::new();
        if let Sender::Grant(snd) = &sender {
            snd.start(announce_all, &mut ctrl);
        }
        let acked: Vec<bool> = (0..n).map(|j| j == s.id || s.out_sizes[j] == 0).collect();
        let mut expect = vec![false; n];
        for &j in s.senders {
            expect[j as usize] = true;
        }
        Node {
            sender,
            receiver,
            id: s.id,
            clock: s.clock,
            ctrl,
            head: 0,
            retx: VecDeque::new(),
            stale: true,
            unacked: acked.iter().filter(|&&a| !a).count() as u32,
            acked,
            out_packets: s.out_sizes.to_vec(),
            bad_acks: 0,
            expect,
            repairing: vec![false; n],
            watch: s.recovery.map(|r| Watch::new(r, n, s.clock.start)),
            now: s.clock.start,
            retransmissions: 0,
        }
    }

    fn advance(&mut self, now: u64) {
        debug_assert!(now >= self.now, "time went backwards: {now} < {}", self.now);
        self.now = self.now.max(now);
    }

    /// A packet arrived at `now`. Replies are queued for `poll_control` / `poll_transmit`.
    /// A packet from outside the operation (or from this node) is ignored: the wire layer
    /// counts such packets, the node never panics on them.
    pub fn handle_packet(&mut self, now: u64, p: &Packet) {
        self.advance(now);
        let j = p.src as usize;
        if j >= self.acked.len() || j == self.id {
            return;
        }
        self.stale = true;
        if let Some(w) = &mut self.watch {
            w.heard(j);
        }
        match p.kind {
            Kind::Grant => {
                if let Sender::Grant(s) = &mut self.sender {
                    s.on_grant(p);
                }
                if let Some(w) = &mut self.watch {
                    w.tx_moved(j);
                }
            }
            Kind::Ack => {
                // A receiver ACKs with `seq` = the message's packets (inbox.rs): anything else
                // acknowledges nothing we sent, and must not stop our retransmissions.
                if self.out_packets.get(j) != Some(&(p.seq as u64)) {
                    self.bad_acks += 1;
                    return;
                }
                if !self.acked[j] {
                    self.acked[j] = true;
                    self.unacked -= 1;
                }
                if let Some(w) = &mut self.watch {
                    w.tx_moved(j);
                }
            }
            Kind::Resend => self.on_resend(p),
            Kind::Data | Kind::Announce => {
                let before = self.inbox().msgs[j].prefix;
                let arrival = match &mut self.receiver {
                    Receiver::Grpf(r) => r.on_packet(p, &mut self.ctrl),
                    Receiver::Hadoop(r) => r.on_packet(p, &mut self.ctrl),
                    Receiver::Sink(b) => b.arrive(p, &mut self.ctrl),
                };
                if self.watch.is_none() {
                    return;
                }
                let moved = match arrival {
                    Arrival::Announced => true,
                    Arrival::Data { first } => first || self.inbox().msgs[j].prefix > before,
                    Arrival::Repeat => {
                        self.answer_repeat(j);
                        false
                    }
                    Arrival::Nothing => false,
                };
                if moved {
                    if let Some(w) = &mut self.watch {
                        w.rx_moved(j);
                    }
                    self.chase(j);
                }
            }
        }
    }

    /// While a message is being repaired, each gap that fills leads straight to a RESEND for
    /// the next gap below a packet already received (so k losses cost one timer period and k
    /// round trips, not k periods); repair ends when no such gap is left.
    fn chase(&mut self, j: usize) {
        if !self.repairing[j] {
            return;
        }
        match self.inbox().hole(j) {
            Some((seq, count)) => self.ctrl.push(resend(self.id, j, seq, count)),
            None => self.repairing[j] = false,
        }
    }

    /// A packet of a message already counted (a duplicate, a crossing retransmission, a
    /// sender's probe): the ACK again if the message is complete (its ACK may have been lost),
    /// else the current cumulative grant (a lost GRANT repaired, and a sign of life).
    fn answer_repeat(&mut self, j: usize) {
        let m = &self.inbox().msgs[j];
        let (kind, seq) = if m.complete() {
            (Kind::Ack, m.total)
        } else {
            (Kind::Grant, m.granted)
        };
        self.ctrl.push(Packet::control(kind, self.id, j, seq));
    }

    /// A RESEND from the receiver `p.src`: it grants the range, and the packets of it already
    /// sent go again (for a message never heard of, every packet sent); a sender with none of
    /// them sent yet announces the message instead.
    fn on_resend(&mut self, p: &Packet) {
        let j = p.src as usize;
        if self.acked[j] {
            return; // complete (or no message at all): a stale RESEND
        }
        let (total, sent) = self.sender.sent(j);
        let end = p.seq.saturating_add(p.total).min(total);
        if let Sender::Grant(s) = &mut self.sender {
            s.allow(j, end);
        }
        // A message never heard of: everything sent so far went missing.
        let (first, upto) = if p.total == 0 {
            (0, sent)
        } else {
            (p.seq, end.min(sent))
        };
        if first < upto {
            self.retx.push_back((j as u32, first, upto));
        } else {
            self.ctrl.push(announcement(&self.sender, j));
        }
    }

    /// The timer expired: with loss recovery, RESEND what is missing from silent senders and
    /// probe the receivers of unacknowledged messages that made no progress in a whole period.
    pub fn handle_timeout(&mut self, now: u64) {
        self.advance(now);
        let Some(w) = &mut self.watch else { return };
        if !w.due(now) {
            return;
        }
        for j in 0..self.acked.len() {
            if j == self.id {
                continue;
            }
            let inbox = match &self.receiver {
                Receiver::Grpf(r) => &r.inbox,
                Receiver::Hadoop(r) => &r.inbox,
                Receiver::Sink(b) => b,
            };
            let m = &inbox.msgs[j];
            let rx_owed = self.expect[j] && !m.complete() && (!m.known || m.out > 0);
            let tx_owed = !self.acked[j];
            match w.tick(j, rx_owed, tx_owed) {
                Probe::None => {}
                Probe::Resend => {
                    let range = if m.known {
                        inbox.missing(j)
                    } else {
                        Some((0, 0))
                    };
                    if let Some((seq, count)) = range {
                        self.ctrl.push(resend(self.id, j, seq, count));
                        self.repairing[j] = m.known;
                    }
                }
                // Fully sent: the last packet again (its ACK may be lost, and the receiver
                // answers a completed message with the ACK). Otherwise the message waits for
                // grants: an announcement costs no payload and draws the current grant.
                Probe::Sender => match self.sender.sent(j) {
                    (total, sent) if sent == total => {
                        self.retx.push_back((j as u32, sent - 1, sent))
                    }
                    _ => self.ctrl.push(announcement(&self.sender, j)),
                },
            }
        }
    }

    /// The next control packet already queued (announcements, ACKs, RESENDs, answers), without
    /// deciding on new grants or data: for drivers that send replies at once and decide once
    /// per batch of arrivals (see the module documentation).
    pub fn poll_control(&mut self) -> Option<Packet> {
        let p = *self.ctrl.get(self.head)?;
        self.head += 1;
        if self.head == self.ctrl.len() {
            self.ctrl.clear();
            self.head = 0;
        }
        Some(p)
    }

    /// The next packet to put on the wire: queued control packets, then the grants decided
    /// now, then (if `data_ok`) one DATA packet, retransmissions first. Call until `None`.
    pub fn poll_transmit(&mut self, now: u64, data_ok: bool) -> Option<Packet> {
        self.advance(now);
        if let Some(p) = self.poll_control() {
            return Some(p);
        }
        if self.stale {
            // Deciding again without a new input would grant nothing more.
            self.stale = false;
            match &mut self.receiver {
                Receiver::Grpf(r) => r.poll_grants(&mut self.ctrl),
                Receiver::Hadoop(r) => r.poll_grants(&mut self.ctrl),
                Receiver::Sink(_) => {}
            }
            if let Some(p) = self.poll_control() {
                return Some(p);
            }
        }
        if !data_ok {
            return None;
        }
        if let Some((j, k, end)) = self.retx.pop_front() {
            if k + 1 < end {
                self.retx.push_front((j, k + 1, end));
            }
            self.retransmissions += 1;
            return Some(self.sender.packet(j as usize, k));
        }
        let p = match &mut self.sender {
            Sender::Grant(s) => s.poll_send(),
            Sender::Madd(s) => s.poll_send(self.clock.packets(now)),
            Sender::Lockstep(s) => s.poll_send(),
        }?;
        if let Some(w) = &mut self.watch {
            w.tx_moved(p.dst as usize);
        }
        Some(p)
    }

    /// When the node next wants `handle_timeout`, in the driver's unit: only with loss
    /// recovery, and only until it is done.
    pub fn poll_timeout(&self) -> Option<u64> {
        let w = self.watch.as_ref()?;
        (!self.is_done()).then_some(w.next)
    }

    /// Every outgoing message acknowledged and every expected message complete. A driver
    /// should keep handling packets a while after (Homa's lost-ACK rule): a sender whose ACK
    /// was lost probes, and only this node can answer with the ACK again.
    pub fn is_done(&self) -> bool {
        self.unacked == 0 && self.inbox().done()
    }

    /// The driver heard from peer `j` outside this operation (any datagram of its, or its word
    /// that it lives but has not started this operation): it is not dead, only busy.
    pub fn heard_from(&mut self, j: u32) {
        if let Some(w) = &mut self.watch {
            if (j as usize) < self.acked.len() {
                w.heard(j as usize);
            }
        }
    }

    /// A peer declared dead: `dead_after` timer periods in a row with a probe to it and
    /// nothing heard from it (only with loss recovery).
    pub fn dead_peer(&self) -> Option<u32> {
        self.watch.as_ref()?.dead
    }

    /// Lockstep's barrier after step `step` completed. Simulator-only as it stands: the
    /// simulator sees every node's progress; a real driver realizes the barrier itself (the
    /// group layer runs lockstep as a sequence of exchanges) and never calls this.
    pub fn on_barrier(&mut self, step: usize) {
        if let Sender::Lockstep(s) = &mut self.sender {
            s.on_barrier(step);
        }
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

    /// Pro rata overcommitment (Eq. 3.11): this node's and the busiest receiver's incoming
    /// packets. An input a real driver provides from the matrix (every rank knows it in an
    /// all-to-all-v whose sizes were exchanged) or an all-reduce; call before any packet.
    pub fn set_overcommit_share(&mut self, own: u64, max: u64) {
        self.stale = true;
        if let Receiver::Grpf(r) = &mut self.receiver {
            r.set_overcommit_share(own, max);
        }
    }

    /// GlobalSched: the all-reduced maximum of `rx_remaining` over all receivers. The
    /// simulator delivers it by fiat (fresh or with a modelled staleness); a real driver must
    /// run the all-reduce itself and hand in each result when it arrives.
    pub fn set_global_max(&mut self, g: u64) {
        self.stale = true;
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

/// The announcement of the message to `j`: an empty DATA packet with its size, unscheduled
/// part and seed (the answer of a sender with nothing to retransmit yet).
fn announcement(s: &Sender, j: usize) -> Packet {
    Packet {
        kind: Kind::Announce,
        ..s.packet(j, 0)
    }
}

fn resend(from: usize, to: usize, seq: u32, count: u32) -> Packet {
    Packet {
        total: count,
        ..Packet::control(Kind::Resend, from, to, seq)
    }
}
