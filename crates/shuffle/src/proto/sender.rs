//! The sender of the grant-based protocols (Listing 3's `try_send`): among messages holding a
//! grant (or unscheduled credit), send the next packet of the one ranked first by the send
//! order. With `SendOrder::Policy(Grpf)` this walks the sender's GRPF packet schedule and
//! takes the first granted packet, i.e. bandwidth redirection without a distance limit.

use super::config::{Policy, Unscheduled};
use super::heap::{rotated, IndexedHeap};
use super::packet::{Kind, Packet};
use super::priority::packet_priority;

/// How a sender ranks its messages that may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOrder {
    /// GRPF, GRPT or SRPT on the next packet's (possibly randomized) priority.
    Policy(Policy),
    /// The least recently transmitted message first (Hadoop-C's round robin).
    LeastRecent,
    /// Receivers in index order (the push strawman of Figure 3.3).
    ByReceiver,
}

#[derive(Debug, Clone, Copy, Default)]
struct OutMsg {
    total: u32,
    sent: u32,
    /// Packets the sender may have sent in all: unscheduled credit, then the cumulative grant.
    allowed: u32,
    unsched: u32,
    seed: u64,
    /// The sender's transmission count at this message's last packet (0: never), for
    /// `LeastRecent`: an order, not a time, so it holds however many packets a driver sends at
    /// one instant (saturates at 2^32 - 1; a u32 keeps the record small).
    last_sent: u32,
}

/// One node's sending half.
#[derive(Debug, Clone)]
pub struct GrantSender {
    id: usize,
    order: SendOrder,
    randomize: bool,
    msgs: Vec<OutMsg>,
    ready: IndexedHeap,
    /// Data packets sent so far (first transmissions), the clock of `LeastRecent`.
    sends: u32,
    /// Bandwidth redirection limit (None: unlimited).
    redirect: Option<Redirect>,
}

/// What a redirection limit needs: each packet's position in the sender's packet schedule
/// (packet k of message j at `pos[first[j] + k]`) and the messages with unsent packets,
/// ranked like `ready` but regardless of grants (its top holds the first unsent packet).
#[derive(Debug, Clone)]
struct Redirect {
    limit: u32,
    first: Vec<u32>,
    pos: Vec<u32>,
    unsent: IndexedHeap,
}

impl GrantSender {
    /// `sizes[j]`: packets for node j (the diagonal is local and ignored); `seeds[j]` the
    /// message's shared seed. `unsched_all` sends every packet unscheduled (push strawmen).
    pub fn new(
        id: usize,
        sizes: &[u64],
        seeds: &[u64],
        order: SendOrder,
        randomize: bool,
        unscheduled: Unscheduled,
        budget: u32,
    ) -> Self {
        let n = sizes.len();
        let mut msgs = vec![OutMsg::default(); n];
        for (j, m) in msgs.iter_mut().enumerate() {
            if j == id || sizes[j] == 0 {
                continue;
            }
            m.total = u32::try_from(sizes[j]).expect("message longer than 2^32 packets");
            m.seed = seeds[j];
        }
        let mut s = GrantSender {
            id,
            order,
            randomize,
            msgs,
            ready: IndexedHeap::new(n),
            sends: 0,
            redirect: None,
        };
        s.set_unscheduled(unscheduled, budget);
        for j in 0..n {
            s.msgs[j].allowed = s.msgs[j].unsched;
            s.reschedule(j);
        }
        s
    }

    /// Limits bandwidth redirection to `limit` schedule entries past the first unsent packet
    /// (thesis §6.2.2). Only for policy send orders; `None` leaves redirection unlimited.
    pub fn with_redirect_limit(mut self, limit: Option<u32>) -> Self {
        let (Some(limit), SendOrder::Policy(p)) = (limit, self.order) else {
            return self;
        };
        let n = self.msgs.len();
        let mut first = vec![0u32; n + 1];
        for j in 0..n {
            first[j + 1] = first[j] + self.msgs[j].total;
        }
        // The schedule is the merge of the messages' packets by priority, with the tie order
        // of `ready`: exactly the order `poll_send` would follow with every packet granted.
        let mut pos = vec![0u32; first[n] as usize];
        let mut h = IndexedHeap::new(n);
        let mut next = vec![0u32; n];
        let key = |s: &Self, j: usize, k: u32| {
            let m = &s.msgs[j];
            packet_priority(p, m.total, k, m.seed, s.randomize)
        };
        for j in 0..n {
            if self.msgs[j].total > 0 {
                h.set_tie(j, key(&self, j, 0), rotated(self.id, j, n));
            }
        }
        let mut at = 0u32;
        while let Some(j) = h.pop() {
            pos[(first[j] + next[j]) as usize] = at;
            at += 1;
            next[j] += 1;
            if next[j] < self.msgs[j].total {
                h.set_tie(j, key(&self, j, next[j]), rotated(self.id, j, n));
            }
        }
        self.redirect = Some(Redirect {
            limit,
            first,
            pos,
            unsent: IndexedHeap::new(n),
        });
        for j in 0..n {
            self.reschedule(j);
        }
        self
    }

    /// Every packet unscheduled: senders that never wait for grants.
    pub fn unscheduled_all(mut self) -> Self {
        for j in 0..self.msgs.len() {
            let m = &mut self.msgs[j];
            m.unsched = m.total;
            m.allowed = m.total;
            self.reschedule(j);
        }
        self
    }

    fn set_unscheduled(&mut self, mode: Unscheduled, budget: u32) {
        match mode {
            Unscheduled::None => {}
            Unscheduled::PerMessage => {
                for m in &mut self.msgs {
                    m.unsched = m.total.min(budget);
                }
            }
            Unscheduled::ProRata => {
                // The first `budget` entries of this sender's GRPF packet schedule.
                let mut h = IndexedHeap::new(self.msgs.len());
                for (j, m) in self.msgs.iter().enumerate() {
                    if m.total > 0 {
                        h.set(j, self.grpf(m, 0));
                    }
                }
                for _ in 0..budget {
                    let Some(j) = h.pop() else { break };
                    let m = &mut self.msgs[j];
                    m.unsched += 1;
                    if m.unsched < m.total {
                        let p = self.grpf(&self.msgs[j], self.msgs[j].unsched);
                        h.set(j, p);
                    }
                }
            }
        }
    }

    fn grpf(&self, m: &OutMsg, k: u32) -> u64 {
        packet_priority(Policy::Grpf, m.total, k, m.seed, self.randomize)
    }

    fn reschedule(&mut self, j: usize) {
        let m = &self.msgs[j];
        if let (Some(r), SendOrder::Policy(p)) = (&mut self.redirect, self.order) {
            if m.sent < m.total {
                let prio = packet_priority(p, m.total, m.sent, m.seed, self.randomize);
                r.unsent
                    .set_tie(j, prio, rotated(self.id, j, self.msgs.len()));
            } else {
                r.unsent.remove(j);
            }
        }
        if m.sent >= m.allowed || m.sent >= m.total {
            self.ready.remove(j);
            return;
        }
        match self.order {
            SendOrder::Policy(p) => {
                let prio = packet_priority(p, m.total, m.sent, m.seed, self.randomize);
                self.ready
                    .set_tie(j, prio, rotated(self.id, j, self.msgs.len()));
            }
            // The strawmen keep index order on ties: every sender the same (Figures 3.3, 3.4).
            SendOrder::LeastRecent => self.ready.set(j, u64::MAX - m.last_sent as u64),
            SendOrder::ByReceiver => self.ready.set(j, u64::MAX - j as u64),
        }
    }

    /// Announcements (empty DATA packets) for messages without unscheduled packets, so their
    /// receivers learn the size (§3.3); with `all`, for every message.
    pub fn start(&self, all: bool, out: &mut Vec<Packet>) {
        for (j, m) in self.msgs.iter().enumerate() {
            if m.total > 0 && (all || m.unsched == 0) {
                out.push(self.announce(j));
            }
        }
    }

    /// The announcement of the message to `j`: an empty DATA packet with its size.
    pub fn announce(&self, j: usize) -> Packet {
        Packet {
            kind: Kind::Announce,
            ..self.packet(j, 0)
        }
    }

    /// Packet `k` of the message to `j` (for a first transmission or a retransmission).
    pub fn packet(&self, j: usize, k: u32) -> Packet {
        let m = &self.msgs[j];
        Packet {
            kind: Kind::Data,
            src: self.id as u32,
            dst: j as u32,
            seq: k,
            total: m.total,
            unsched: m.unsched,
            seed: m.seed,
        }
    }

    /// Packets of the message to `j`, and how many have been sent.
    pub fn sent(&self, j: usize) -> (u32, u32) {
        (self.msgs[j].total, self.msgs[j].sent)
    }

    pub fn on_grant(&mut self, p: &Packet) {
        self.allow(p.src as usize, p.seq);
    }

    /// The sender may have sent packets `0..upto` of the message to `j` in all (a cumulative
    /// GRANT, or a RESEND, which grants what it asks for).
    pub fn allow(&mut self, j: usize, upto: u32) {
        let m = &mut self.msgs[j];
        if upto > m.allowed {
            m.allowed = upto.min(m.total);
            self.reschedule(j);
        }
    }

    /// The next data packet, if any message may send (one call per free uplink slot).
    pub fn poll_send(&mut self) -> Option<Packet> {
        let (j, _) = self.ready.peek()?;
        if let Some(r) = &self.redirect {
            let (u, _) = r.unsent.peek()?;
            let at = |i: usize| r.pos[(r.first[i] + self.msgs[i].sent) as usize];
            if at(j) - at(u) > r.limit {
                return None; // the first granted packet is too deep in the schedule
            }
        }
        let p = self.packet(j, self.msgs[j].sent);
        self.sends = self.sends.saturating_add(1);
        let m = &mut self.msgs[j];
        m.sent += 1;
        m.last_sent = self.sends;
        self.reschedule(j);
        Some(p)
    }

    /// Packets of the message to `dst` sent so far, and the unscheduled part of it.
    pub fn progress(&self, dst: usize) -> (u32, u32) {
        (self.msgs[dst].sent, self.msgs[dst].unsched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(s: &mut GrantSender) -> Vec<u32> {
        std::iter::from_fn(|| s.poll_send())
            .map(|p| p.dst)
            .collect()
    }

    #[test]
    fn figure_3_6_grpf_send_order() {
        // Spec §12 item 17: m1 (to node 1) has 5 packets, m2 (to node 2) 3; unlimited grants.
        let mut s = GrantSender::new(
            0,
            &[0, 5, 3],
            &[0; 3],
            SendOrder::Policy(Policy::Grpf),
            false,
            Unscheduled::None,
            0,
        )
        .unscheduled_all();
        assert_eq!(order(&mut s), vec![1, 2, 1, 2, 1, 1, 2, 1]);
    }

    #[test]
    fn nothing_goes_without_grants_and_grants_unlock_packets_in_grpf_order() {
        let mut s = GrantSender::new(
            0,
            &[0, 5, 3],
            &[0; 3],
            SendOrder::Policy(Policy::Grpf),
            false,
            Unscheduled::None,
            0,
        );
        let mut ann = Vec::new();
        s.start(false, &mut ann);
        assert_eq!(ann.len(), 2);
        assert_eq!(s.poll_send(), None);
        s.on_grant(&Packet::control(Kind::Grant, 2, 0, 2));
        assert_eq!(order(&mut s), vec![2, 2]);
        s.on_grant(&Packet::control(Kind::Grant, 1, 0, 1));
        s.on_grant(&Packet::control(Kind::Grant, 2, 0, 1)); // stale cumulative grant: no effect
        assert_eq!(order(&mut s), vec![1]);
    }

    #[test]
    fn pro_rata_unscheduled_splits_one_rtt_by_length() {
        let s = GrantSender::new(
            0,
            &[0, 24, 8, 0],
            &[0; 4],
            SendOrder::Policy(Policy::Grpf),
            false,
            Unscheduled::ProRata,
            8,
        );
        assert_eq!((s.progress(1).1, s.progress(2).1), (6, 2));
        let s = GrantSender::new(
            0,
            &[0, 24, 8, 0],
            &[0; 4],
            SendOrder::Policy(Policy::Grpf),
            false,
            Unscheduled::PerMessage,
            8,
        );
        assert_eq!((s.progress(1).1, s.progress(2).1), (8, 8));
    }

    #[test]
    fn redirection_limit_stops_at_the_given_depth() {
        // Figure 3.6's schedule: m1 (node 1) 5 packets, m2 (node 2) 3: order 1,2,1,2,1,1,2,1.
        // Only m2 is granted (fully). Its packets sit at schedule positions 1, 3 and 6; the
        // first unsent packet is m1's at position 0, then still 0 (m1 never sends).
        let make = |limit| {
            let mut s = GrantSender::new(
                0,
                &[0, 5, 3],
                &[0; 3],
                SendOrder::Policy(Policy::Grpf),
                false,
                Unscheduled::None,
                0,
            )
            .with_redirect_limit(limit);
            s.on_grant(&Packet::control(Kind::Grant, 2, 0, 3));
            s
        };
        assert_eq!(order(&mut make(None)), vec![2, 2, 2]);
        assert_eq!(order(&mut make(Some(0))), Vec::<u32>::new());
        assert_eq!(order(&mut make(Some(1))), vec![2]);
        assert_eq!(order(&mut make(Some(3))), vec![2, 2]);
        assert_eq!(order(&mut make(Some(6))), vec![2, 2, 2]);
        // Once m1 is granted too, everything flows in schedule order.
        let mut s = make(Some(0));
        s.on_grant(&Packet::control(Kind::Grant, 1, 0, 5));
        assert_eq!(order(&mut s), vec![1, 2, 1, 2, 1, 1, 2, 1]);
    }

    #[test]
    fn round_robin_cycles_least_recently_sent() {
        let mut s = GrantSender::new(
            0,
            &[0, 2, 2, 2],
            &[0; 4],
            SendOrder::LeastRecent,
            false,
            Unscheduled::None,
            0,
        )
        .unscheduled_all();
        let got: Vec<u32> = (0..6).map(|_| s.poll_send().unwrap().dst).collect();
        assert_eq!(got, vec![1, 2, 3, 1, 2, 3]);
    }
}
