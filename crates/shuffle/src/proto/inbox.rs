//! Incoming-message bookkeeping shared by every receiver: learning a message from its first
//! packet, counting each packet exactly once whatever the order it arrives in (a real network
//! reorders and duplicates), acknowledging complete messages.

use std::collections::{BTreeSet, HashMap};

use super::packet::{Kind, Packet};

#[derive(Debug, Clone, Copy, Default)]
pub struct InMsg {
    pub total: u32,
    /// Distinct packets received.
    pub received: u32,
    /// Packets `0..prefix` have all arrived: the first missing packet, while incomplete.
    pub prefix: u32,
    /// Packets the sender may send in all (unscheduled credit plus grants).
    pub granted: u32,
    /// Outstanding grants (including unscheduled credit) not yet matched by a packet.
    pub out: u32,
    pub seed: u64,
    pub known: bool,
}

impl InMsg {
    pub fn complete(&self) -> bool {
        self.known && self.received == self.total
    }
}

/// What an arriving packet did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Nothing new: a packet counted as an error.
    Nothing,
    /// Already seen: a DATA packet counted before (a duplicate, a retransmission that crossed
    /// the original, a probe) or an announcement of a message already known.
    Repeat,
    /// First news of a message (announcement): no data yet.
    Announced,
    /// A data packet counted; `first` when it was also the message's first news.
    Data { first: bool },
}

#[derive(Debug, Clone)]
pub struct Inbox {
    pub id: usize,
    pub msgs: Vec<InMsg>,
    /// Per sender, packets received beyond its message's `prefix` (only after reordering or
    /// loss: the loss-free in-order path never touches it).
    ahead: HashMap<u32, BTreeSet<u32>>,
    /// Messages heard of, and (when known in advance) how many carry data.
    pub known: u32,
    pub expected: u32,
    pub completed: u32,
    /// Distinct data packets received over all messages (what the application gets).
    pub delivered: u64,
    /// DATA packets that arrived again (duplicates, retransmissions, probes).
    pub duplicates: u64,
    /// Packets beyond a message's end or never granted: always 0 in a correct protocol.
    pub errors: u64,
}

impl Inbox {
    pub fn new(id: usize, n: usize, expected: u32) -> Self {
        Inbox {
            id,
            msgs: vec![InMsg::default(); n],
            ahead: HashMap::new(),
            known: 0,
            expected,
            completed: 0,
            delivered: 0,
            duplicates: 0,
            errors: 0,
        }
    }

    /// Counts `p` (a `Data` or `Announce` packet) and pushes an ACK when a message completes.
    pub fn arrive(&mut self, p: &Packet, out: &mut Vec<Packet>) -> Arrival {
        let m = &mut self.msgs[p.src as usize];
        let first = !m.known;
        if first && p.kind == Kind::Data && p.seq >= p.total {
            // Malformed: it must not define the message (its length would be counted by
            // nobody, and the next packet's arithmetic would go wrong).
            self.errors += 1;
            return Arrival::Nothing;
        }
        if first {
            m.known = true;
            m.total = p.total;
            // More unscheduled packets than the message has would count grants never used.
            m.granted = p.unsched.min(p.total);
            m.out = m.granted;
            m.seed = p.seed;
            self.known += 1;
            if m.total == 0 {
                // A message of nothing (drivers send an empty one as one packet, but a
                // zero-length announcement must not leave the receiver waiting).
                self.completed += 1;
                out.push(Packet::control(Kind::Ack, self.id, p.src as usize, 0));
                return Arrival::Announced;
            }
        }
        if p.kind == Kind::Announce {
            return if first {
                Arrival::Announced
            } else {
                Arrival::Repeat
            };
        }
        if p.seq >= m.total {
            self.errors += 1;
            return Arrival::Nothing;
        }
        let new = if p.seq == m.prefix && self.ahead.is_empty() {
            m.prefix += 1; // in order, nothing pending anywhere: no lookup
            true
        } else {
            take(m, &mut self.ahead, p.src, p.seq)
        };
        if !new {
            self.duplicates += 1;
            return Arrival::Repeat;
        }
        m.received += 1;
        self.delivered += 1;
        if m.out == 0 {
            self.errors += 1; // a packet nobody granted
        } else {
            m.out -= 1;
        }
        if m.received == m.total {
            self.completed += 1;
            if !self.ahead.is_empty() {
                self.ahead.remove(&p.src);
            }
            out.push(Packet::control(Kind::Ack, self.id, p.src as usize, m.total));
        }
        Arrival::Data { first }
    }

    /// The first range of granted packets of the message from `src` that has not arrived, as
    /// (first packet, count): what a RESEND asks for. `None` when nothing granted is missing.
    pub fn missing(&self, src: usize) -> Option<(u32, u32)> {
        let m = &self.msgs[src];
        let next = self
            .ahead
            .get(&(src as u32))
            .and_then(|s| s.first().copied())
            .unwrap_or(m.total);
        let end = next.min(m.granted);
        (m.prefix < end).then(|| (m.prefix, end - m.prefix))
    }

    /// The first gap of the message from `src` that lies below a packet already received (so
    /// it was sent, and lost or overtaken), as (first packet, count).
    pub fn hole(&self, src: usize) -> Option<(u32, u32)> {
        let next = *self.ahead.get(&(src as u32))?.first()?;
        let m = &self.msgs[src];
        Some((m.prefix, next - m.prefix))
    }

    /// Every expected message received in full.
    pub fn done(&self) -> bool {
        self.completed == self.expected
    }
}

/// Marks packet `seq` of the message from `src` received; false if it already was. Packets
/// past the prefix wait in `ahead` until the gap before them fills.
fn take(m: &mut InMsg, ahead: &mut HashMap<u32, BTreeSet<u32>>, src: u32, seq: u32) -> bool {
    if seq < m.prefix {
        return false;
    }
    if seq > m.prefix {
        return ahead.entry(src).or_default().insert(seq);
    }
    m.prefix += 1;
    if let Some(set) = ahead.get_mut(&src) {
        while set.remove(&m.prefix) {
            m.prefix += 1;
        }
        if set.is_empty() {
            ahead.remove(&src);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(src: u32, seq: u32, total: u32) -> Packet {
        Packet {
            kind: Kind::Data,
            src,
            dst: 0,
            seq,
            total,
            unsched: total,
            seed: 0,
        }
    }

    #[test]
    fn every_packet_counts_once_in_any_order() {
        let mut b = Inbox::new(0, 2, 1);
        let mut acks = Vec::new();
        for seq in [3, 1, 3, 0, 4, 1, 2, 0] {
            b.arrive(&data(1, seq, 5), &mut acks);
        }
        assert_eq!(b.msgs[1].received, 5);
        assert_eq!(b.delivered, 5);
        assert_eq!(b.duplicates, 3);
        assert_eq!(b.errors, 0);
        assert_eq!(acks.len(), 1);
        assert!(b.done());
        // A packet of a completed message is a repeat (the node answers it with the ACK).
        assert_eq!(b.arrive(&data(1, 4, 5), &mut acks), Arrival::Repeat);
    }

    #[test]
    fn missing_names_the_first_gap_within_the_grants() {
        let mut b = Inbox::new(0, 2, 1);
        let mut acks = Vec::new();
        for seq in [0, 1, 4, 6] {
            b.arrive(&data(1, seq, 8), &mut acks);
        }
        assert_eq!(b.missing(1), Some((2, 2)));
        assert_eq!(b.hole(1), Some((2, 2)));
        b.msgs[1].granted = 3; // only packets 0..3 may have been sent
        assert_eq!(b.missing(1), Some((2, 1)));
        b.arrive(&data(1, 2, 8), &mut acks);
        assert_eq!(b.missing(1), None);
        b.arrive(&data(1, 3, 8), &mut acks);
        assert_eq!(b.hole(1), Some((5, 1)), "below packet 6");
        assert_eq!(b.missing(0), None, "nothing known, nothing granted");
    }

    #[test]
    fn a_zero_length_announcement_completes_at_once() {
        let mut b = Inbox::new(0, 2, 1);
        let mut acks = Vec::new();
        let p = Packet {
            kind: Kind::Announce,
            ..data(1, 0, 0)
        };
        assert_eq!(b.arrive(&p, &mut acks), Arrival::Announced);
        assert!(b.done());
        assert_eq!(acks.len(), 1);
        assert_eq!(b.arrive(&data(1, 0, 0), &mut acks), Arrival::Nothing);
        assert_eq!(b.errors, 1, "a data packet of an empty message is an error");
    }

    #[test]
    fn one_packet_messages_complete_on_their_only_packet() {
        let mut b = Inbox::new(0, 40, 39);
        let mut acks = Vec::new();
        for src in (1..40).rev() {
            assert_eq!(
                b.arrive(&data(src, 0, 1), &mut acks),
                Arrival::Data { first: true }
            );
        }
        assert!(b.done());
        assert_eq!(acks.len(), 39);
        assert!(acks.iter().all(|a| a.kind == Kind::Ack && a.seq == 1));
    }
}
