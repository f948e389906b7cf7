//! Incoming-message bookkeeping shared by every receiver: learning a message from its first
//! packet, counting packets exactly once, acknowledging complete messages.

use super::packet::{Kind, Packet};

#[derive(Debug, Clone, Copy, Default)]
pub struct InMsg {
    pub total: u32,
    pub received: u32,
    /// Packets the sender may send in all (unscheduled credit plus grants).
    pub granted: u32,
    /// Outstanding grants (including unscheduled credit) not yet matched by a packet.
    pub out: u32,
    pub seed: u64,
    pub known: bool,
}

/// What an arriving packet did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Nothing new (a repeated announcement, or a packet counted as an error).
    Nothing,
    /// First news of a message (announcement): no data yet.
    Announced,
    /// A data packet counted; `first` when it was also the message's first news.
    Data { first: bool },
}

#[derive(Debug, Clone)]
pub struct Inbox {
    pub id: usize,
    pub msgs: Vec<InMsg>,
    /// Messages heard of, and (when known in advance) how many carry data.
    pub known: u32,
    pub expected: u32,
    pub completed: u32,
    /// Packets that repeated or exceeded what was expected: always 0 in a correct protocol.
    pub errors: u64,
}

impl Inbox {
    pub fn new(id: usize, n: usize, expected: u32) -> Self {
        Inbox {
            id,
            msgs: vec![InMsg::default(); n],
            known: 0,
            expected,
            completed: 0,
            errors: 0,
        }
    }

    /// Counts `p` (a `Data` or `Announce` packet) and pushes an ACK when a message completes.
    pub fn arrive(&mut self, p: &Packet, out: &mut Vec<Packet>) -> Arrival {
        let m = &mut self.msgs[p.src as usize];
        let first = !m.known;
        if first {
            m.known = true;
            m.total = p.total;
            m.granted = p.unsched;
            m.out = p.unsched;
            m.seed = p.seed;
            self.known += 1;
        }
        if p.kind == Kind::Announce {
            return if first {
                Arrival::Announced
            } else {
                Arrival::Nothing
            };
        }
        if p.seq != m.received || p.seq >= m.total {
            self.errors += 1;
            return Arrival::Nothing;
        }
        m.received += 1;
        if m.out == 0 {
            self.errors += 1; // a packet nobody granted
        } else {
            m.out -= 1;
        }
        if m.received == m.total {
            self.completed += 1;
            out.push(Packet::control(Kind::Ack, self.id, p.src as usize, m.total));
        }
        Arrival::Data { first }
    }

    /// Every expected message received in full.
    pub fn done(&self) -> bool {
        self.completed == self.expected
    }
}
