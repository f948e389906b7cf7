//! The packet kinds of the protocol (thesis Figure 3.12, plus the announcement), as one small
//! `Copy` struct so a driver can queue them by value without allocating.

/// What a packet is. Everything but `Data` is a control packet: tiny, and sent at high priority
/// where the network has priorities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One full data packet: packet `seq` of a `total`-packet message.
    Data,
    /// An empty DATA packet announcing a message that has no unscheduled packets
    /// (`total` set, `seq` unused); it carries no payload, so it costs no bandwidth.
    Announce,
    /// Cumulative grant: the sender may send packets `0..seq` of the message.
    Grant,
    /// The message from `dst` to `src` has been received in full.
    Ack,
    /// Loss recovery (thesis §3.5): the receiver asks the sender to retransmit packets
    /// `seq..seq + total` of the message; `total = 0` asks about a message never heard of.
    /// It also grants those packets (a lost GRANT is recovered this way). A sender that has
    /// none of them to retransmit answers with an announcement (it is alive, just not there yet).
    Resend,
}

/// One packet. `src` and `dst` are node indices; a message is named by its (sender, receiver)
/// pair, so a `Grant` or `Ack` travels from the message's receiver (`src`) to its sender (`dst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub kind: Kind,
    pub src: u32,
    pub dst: u32,
    /// `Data`: packet index in the message; `Grant`: packets granted so far (cumulative);
    /// `Resend`: the first packet asked for.
    pub seq: u32,
    /// Message length in full packets (`Data`, `Announce`); `Resend`: packets asked for.
    pub total: u32,
    /// Packets of the message the sender sends without a grant (`Data`, `Announce`).
    pub unsched: u32,
    /// The message's shared randomization seed (`Data`, `Announce`), so the receiver
    /// reproduces the sender's per-packet priorities (thesis §3.3).
    pub seed: u64,
}

impl Packet {
    pub fn is_control(&self) -> bool {
        self.kind != Kind::Data
    }

    /// Packet `seq` of a `total`-packet message sent without grants (MADD, lockstep).
    pub(crate) fn unscheduled(src: usize, dst: usize, seq: u32, total: u32) -> Packet {
        Packet {
            kind: Kind::Data,
            src: src as u32,
            dst: dst as u32,
            seq,
            total,
            unsched: total,
            seed: 0,
        }
    }

    pub(crate) fn control(kind: Kind, src: usize, dst: usize, seq: u32) -> Packet {
        Packet {
            kind,
            src: src as u32,
            dst: dst as u32,
            seq,
            total: 0,
            unsched: 0,
            seed: 0,
        }
    }
}

/// Queues a cumulative GRANT of packets `0..upto` of the message from `to`. With `fold`, a
/// GRANT to the same message already queued at `out[since..]` (decided in the same round) is
/// raised instead: grants are cumulative, so the later one says everything the earlier did.
pub(crate) fn push_grant(
    out: &mut Vec<Packet>,
    since: usize,
    fold: bool,
    from: usize,
    to: usize,
    upto: u32,
) {
    if fold {
        let same = |p: &&mut Packet| p.kind == Kind::Grant && p.dst == to as u32;
        if let Some(p) = out[since..].iter_mut().rev().find(same) {
            p.seq = p.seq.max(upto);
            return;
        }
    }
    out.push(Packet::control(Kind::Grant, from, to, upto));
}
