//! One operation at one endpoint: the protocol's `Node` plus the bytes. Outgoing messages are
//! sliced into DATA payloads on demand; incoming payloads are copied straight into their
//! message's buffer at `seq x payload`, and each message's CRC-32 is checked when the node
//! counts it complete. Every packet is checked against what this operation can mean before the
//! node sees it, so the node only ever gets packets that make sense.

use coflowkit_shuffle::proto::{Clock, Kind, Node, NodeSpec, Protocol, Recovery};

use crate::config::{EndpointConfig, ExchangeProtocol};
use crate::error::TransportError;
use crate::wire::Header;

struct OutMsg {
    bytes: Vec<u8>,
    crc: u32,
    packets: u64,
    /// DATA packets `0..sent` left at least once (senders send a message's packets first in
    /// increasing order; retransmissions only repeat them).
    sent: u64,
}

struct InMsg {
    /// Size and CRC as the first packet told them.
    bytes: Option<(u64, u32)>,
    /// The bytes received so far, zero-filled up to the furthest DATA packet (never beyond).
    buf: Vec<u8>,
    /// DATA payload bytes accepted so far (repeats included): what backs the buffer's growth.
    got: u64,
    done: bool,
}

/// How far past the DATA bytes already received one packet may extend a message's buffer:
/// room for the reordering and gaps of loss recovery, while a forged packet at the end of a
/// 4 GiB claim is refused instead of zero-filling 4 GiB.
const AHEAD_MAX: u64 = 64 << 20;

/// Zero-fill `buf` up to `end`, reserving in doublings capped at `cap` (the message's
/// length), so growing costs O(1) amortized per byte and never reserves past the message.
fn grow(
    buf: &mut Vec<u8>,
    end: usize,
    cap: usize,
) -> Result<(), std::collections::TryReserveError> {
    let want = end.max(buf.capacity().saturating_mul(2)).min(cap).max(end);
    if want > buf.capacity() {
        buf.try_reserve_exact(want - buf.len())?;
    }
    buf.resize(end, 0);
    Ok(())
}

/// Why a packet was refused (the endpoint counts it as malformed).
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub &'static str);

pub struct Op {
    pub id: u64,
    rank: u32,
    node: Node,
    payload: u64,
    max_message_bytes: u64,
    out: Vec<Option<OutMsg>>,
    inc: Vec<Option<InMsg>>,
    /// Ranks to return messages from, in the caller's order (this rank's own message is local).
    recv_from: Vec<u32>,
    local: Option<Vec<u8>>,
    pub error: Option<TransportError>,
    /// DATA retransmissions already counted in the endpoint's statistics.
    pub retransmissions_seen: u64,
    pub deadline: Option<u64>,
    start: u64,
    /// Failed and answered: the node still serves the peers (see the driver), errors no more.
    pub lingering: bool,
    /// Outgoing messages not yet sent whole at least once.
    unsent: usize,
}

impl Op {
    /// An operation starting at `now` (ns). Arguments are checked here; errors name the
    /// offending rank.
    pub fn new(
        cfg: &EndpointConfig,
        now: u64,
        id: u64,
        proto: &ExchangeProtocol,
        sends: Vec<(u32, Vec<u8>)>,
        recv_from: &[u32],
    ) -> Result<Op, TransportError> {
        let n = cfg.peers.len();
        let me = cfg.rank;
        if proto.protocol == Protocol::Lockstep {
            return Err(TransportError::Config(
                "lockstep is a sequence of exchanges, one per step (the group layer runs it)"
                    .into(),
            ));
        }
        let mut out: Vec<Option<OutMsg>> = (0..n).map(|_| None).collect();
        let mut local = None;
        for (to, bytes) in sends {
            let slot = out.get_mut(to as usize).ok_or_else(|| {
                TransportError::Config(format!("operation {id}: send to rank {to} of {n}"))
            })?;
            if slot.is_some() || (to == me && local.is_some()) {
                return Err(TransportError::Config(format!(
                    "operation {id}: two messages to rank {to}"
                )));
            }
            if to == me {
                local = Some(bytes);
                continue;
            }
            let packets = cfg.packets(bytes.len() as u64);
            if packets > u32::MAX as u64 {
                return Err(TransportError::Config(format!(
                    "operation {id}: the message to rank {to} has more than 2^32 packets"
                )));
            }
            *slot = Some(OutMsg {
                crc: crc32fast::hash(&bytes),
                bytes,
                packets,
                sent: 0,
            });
        }
        let mut inc: Vec<Option<InMsg>> = (0..n).map(|_| None).collect();
        let mut senders = Vec::new();
        for &from in recv_from {
            let slot = inc.get_mut(from as usize).ok_or_else(|| {
                TransportError::Config(format!("operation {id}: receive from rank {from} of {n}"))
            })?;
            if slot.is_some() || recv_from.iter().filter(|&&r| r == from).count() > 1 {
                return Err(TransportError::Config(format!(
                    "operation {id}: rank {from} named twice to receive from"
                )));
            }
            if from == me {
                if local.is_none() {
                    return Err(TransportError::Config(format!(
                        "operation {id}: receives from itself (rank {me}) without sending to itself"
                    )));
                }
                continue;
            }
            *slot = Some(InMsg {
                bytes: None,
                buf: Vec::new(),
                got: 0,
                done: false,
            });
            senders.push(from);
        }
        let sizes: Vec<u64> = out
            .iter()
            .map(|m| m.as_ref().map_or(0, |m| m.packets))
            .collect();
        let gamma = proto
            .madd_gamma
            .unwrap_or((sizes.iter().sum::<u64>().max(1), 1));
        let spec = NodeSpec {
            id: me as usize,
            out_sizes: &sizes,
            senders: &senders,
            protocol: &proto.protocol,
            grant: &proto.grant,
            madd_gamma: gamma,
            clock: Clock {
                start: now,
                per_packet: cfg.packet_ns(),
            },
            recovery: Some(Recovery {
                timeout: cfg.resend_timeout.as_nanos() as u64,
                dead_after: cfg.dead_after,
            }),
            seed: proto.seed ^ id.rotate_left(17) ^ cfg.session as u64,
        };
        let node = Node::new(&spec);
        let unsent = out.iter().flatten().count();
        Ok(Op {
            id,
            rank: me,
            node,
            payload: cfg.payload as u64,
            max_message_bytes: cfg.max_message_bytes,
            out,
            inc,
            recv_from: recv_from.to_vec(),
            local,
            error: None,
            retransmissions_seen: 0,
            deadline: cfg.op_timeout.map(|d| now + d.as_nanos() as u64),
            start: now,
            lingering: false,
            unsent,
        })
    }

    /// One arriving packet of this operation (already addressed to this rank from a valid
    /// other rank).
    pub fn on_packet(&mut self, now: u64, h: &Header, payload: &[u8]) -> Result<(), Refused> {
        let p = &h.packet;
        let src = p.src as usize;
        match p.kind {
            Kind::Data | Kind::Announce => {
                let payload_size = self.payload;
                let m = self.inc[src]
                    .as_mut()
                    .ok_or(Refused("a message nobody expects"))?;
                let packets = h.msg_bytes.div_ceil(payload_size).max(1);
                if p.total as u64 != packets || p.unsched > p.total {
                    return Err(Refused("packet counts disagree with the message length"));
                }
                if m.bytes
                    .is_some_and(|known| known != (h.msg_bytes, h.msg_crc))
                {
                    return Err(Refused("message length or CRC changed"));
                }
                if h.msg_bytes > self.max_message_bytes {
                    return Err(Refused("message longer than the limit"));
                }
                let off = p.seq as u64 * payload_size;
                if p.kind == Kind::Data {
                    if p.seq >= p.total {
                        return Err(Refused("packet beyond the message's end"));
                    }
                    let len = payload_size.min(h.msg_bytes - off) as usize;
                    if payload.len() != len {
                        return Err(Refused("payload length does not fit its offset"));
                    }
                }
                // Every check passed. The claimed length is not trusted for memory: the buffer
                // grows only as DATA arrives (a forged ANNOUNCE costs nothing), and a growth
                // the allocator refuses refuses the packet instead of aborting the rank.
                if p.kind == Kind::Data && !m.done {
                    let end = off as usize + payload.len();
                    if end as u64 > m.got.saturating_add(AHEAD_MAX) {
                        // Dropped as a loss would be: a real sender resends it when asked.
                        return Err(Refused("DATA too far ahead of what has arrived"));
                    }
                    m.got += payload.len() as u64;
                    if m.buf.len() < end {
                        grow(&mut m.buf, end, h.msg_bytes as usize)
                            .map_err(|_| Refused("no memory for the message"))?;
                    }
                    m.buf[off as usize..end].copy_from_slice(payload);
                }
                if m.bytes.is_none() {
                    m.bytes = Some((h.msg_bytes, h.msg_crc));
                }
                self.node.handle_packet(now, p);
                let complete = self.node.inbox().msgs[src].complete();
                if complete && !m.done {
                    m.done = true;
                    let bad = crc32fast::hash(&m.buf) != h.msg_crc;
                    if bad && self.error.is_none() && !self.lingering {
                        self.error = Some(TransportError::Checksum {
                            op: self.id,
                            from: p.src,
                        });
                    }
                }
            }
            Kind::Grant | Kind::Ack | Kind::Resend => {
                let m = self.out[src]
                    .as_ref()
                    .ok_or(Refused("no message to that rank"))?;
                let ok = match p.kind {
                    Kind::Grant => p.seq as u64 <= m.packets,
                    // An empty range at 0 asks about a message never heard of.
                    Kind::Resend => (p.seq as u64 + p.total as u64) <= m.packets,
                    // An ACK names the message's packet count; the node ignores others too.
                    _ => p.seq as u64 == m.packets,
                };
                if !ok {
                    return Err(Refused(
                        "grant, resend or ACK that does not fit the message",
                    ));
                }
                self.node.handle_packet(now, p);
            }
        }
        Ok(())
    }

    /// `rank` is alive (heard outside this operation).
    pub fn heard_from(&mut self, rank: u32) {
        self.node.heard_from(rank);
    }

    pub fn handle_timeout(&mut self, now: u64) {
        if self.node.poll_timeout().is_some_and(|t| t <= now) {
            self.node.handle_timeout(now);
        }
        if self.error.is_none() && !self.lingering {
            if let Some(rank) = self.node.dead_peer() {
                self.error = Some(TransportError::PeerDead { rank });
            } else if self.deadline.is_some_and(|d| d <= now) {
                let after_ms = self
                    .deadline
                    .map_or(0, |d| d.saturating_sub(self.start) / 1_000_000);
                self.error = Some(TransportError::Timeout {
                    op: self.id,
                    after_ms,
                });
            }
        }
    }

    /// The next packet to send and its header and payload, as the node wants it.
    pub fn poll_transmit(&mut self, now: u64, data_ok: bool) -> Option<(Header, &[u8])> {
        let p = self.node.poll_transmit(now, data_ok)?;
        let mut h = Header {
            session: 0,
            op: self.id,
            packet: p,
            msg_bytes: 0,
            msg_crc: 0,
        };
        let mut payload: &[u8] = &[];
        if matches!(p.kind, Kind::Data | Kind::Announce) {
            let m = self.out[p.dst as usize]
                .as_mut()
                .expect("the node sends only messages it was given");
            if p.kind == Kind::Data && p.seq as u64 == m.sent {
                m.sent += 1;
                if m.sent == m.packets {
                    self.unsent -= 1;
                }
            }
            h.msg_bytes = m.bytes.len() as u64;
            h.msg_crc = m.crc;
            if p.kind == Kind::Data {
                let off = (p.seq as u64 * self.payload).min(m.bytes.len() as u64) as usize;
                let end = (off + self.payload as usize).min(m.bytes.len());
                payload = &m.bytes[off..end];
            }
        }
        Some((h, payload))
    }

    /// When the node (or the operation's deadline) wants a timeout.
    pub fn poll_timeout(&self) -> Option<u64> {
        match (self.node.poll_timeout(), self.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn retransmissions(&self) -> u64 {
        self.node.retransmissions
    }

    /// Done: every message sent was ACKed and every message expected arrived whole.
    pub fn is_done(&self) -> bool {
        self.error.is_some() || self.node.is_done()
    }

    /// Every expected message arrived whole and every outgoing one left at least once: the
    /// caller may have its messages ([`crate::ReturnWhen::Sent`]).
    pub fn is_sent(&self) -> bool {
        self.unsent == 0 && self.node.inbox().done()
    }

    /// The received messages in the caller's order, taken out early (the operation goes on
    /// serving its peers); `finish` then returns empty messages.
    pub fn take_received(&mut self) -> Vec<(u32, Vec<u8>)> {
        let rank = self.rank;
        let (inc, local) = (&mut self.inc, &mut self.local);
        self.recv_from
            .iter()
            .map(|&r| {
                let bytes = if r == rank {
                    local.take().unwrap_or_default()
                } else {
                    inc[r as usize]
                        .as_mut()
                        .map(|m| std::mem::take(&mut m.buf))
                        .unwrap_or_default()
                };
                (r, bytes)
            })
            .collect()
    }

    /// The protocol's own end, whatever the errors.
    pub fn node_done(&self) -> bool {
        self.node.is_done()
    }

    /// The outcome: the messages in the caller's order, or the first error.
    pub fn finish(self) -> Result<Vec<(u32, Vec<u8>)>, TransportError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut inc = self.inc;
        let mut local = self.local;
        Ok(self
            .recv_from
            .iter()
            .map(|&r| {
                let bytes = if r == self.rank {
                    local.take().unwrap_or_default()
                } else {
                    inc[r as usize].take().map(|m| m.buf).unwrap_or_default()
                };
                (r, bytes)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_shuffle::proto::Packet;

    fn op(payload: usize) -> Op {
        let peers = vec![
            "127.0.0.1:1".parse().unwrap(),
            "127.0.0.1:2".parse().unwrap(),
        ];
        let mut cfg = EndpointConfig::new(0, peers, 7);
        cfg.payload = payload;
        let proto = ExchangeProtocol::parse("grpf").unwrap();
        Op::new(&cfg, 0, 1, &proto, vec![(1, vec![1; 10])], &[1]).unwrap()
    }

    fn from_1(kind: Kind, seq: u32, msg_bytes: u64, crc: u32, payload: u64) -> Header {
        Header {
            session: 7,
            op: 1,
            packet: Packet {
                kind,
                src: 1,
                dst: 0,
                seq,
                total: msg_bytes.div_ceil(payload).max(1) as u32,
                unsched: 0,
                seed: 0,
            },
            msg_bytes,
            msg_crc: crc,
        }
    }

    #[test]
    fn a_forged_announce_of_4_gib_allocates_nothing() {
        let mut o = op(1400);
        let h = from_1(Kind::Announce, 0, u32::MAX as u64, 0, 1400);
        assert_eq!(o.on_packet(1, &h, &[]), Ok(()));
        let m = o.inc[1].as_ref().unwrap();
        assert_eq!(m.buf.capacity(), 0, "an announcement is not backed by data");
    }

    #[test]
    fn a_forged_data_packet_far_past_what_arrived_is_refused() {
        let mut o = op(1400);
        let len = u32::MAX as u64;
        let last = (len.div_ceil(1400) - 1) as u32;
        let h = from_1(Kind::Data, last, len, 0, 1400);
        let tail = (len - last as u64 * 1400) as usize;
        assert!(o.on_packet(1, &h, &vec![0; tail]).is_err());
        assert_eq!(o.inc[1].as_ref().unwrap().buf.capacity(), 0);
        // A packet within reach of what arrived (none yet) is taken.
        let near = (AHEAD_MAX / 1400 - 1) as u32;
        let h = from_1(Kind::Data, near, len, 0, 1400);
        assert_eq!(o.on_packet(1, &h, &[0; 1400]), Ok(()));
    }

    #[test]
    fn the_buffer_grows_with_the_data_and_never_past_the_message() {
        let payload = 4u64;
        let msg: Vec<u8> = (0..23u8).collect();
        let crc = crc32fast::hash(&msg);
        let mut o = op(payload as usize);
        // Out of order: the last packet first, then the rest.
        let mut order: Vec<u32> = (0..6).collect();
        order.rotate_right(1);
        for seq in order {
            let h = from_1(Kind::Data, seq, msg.len() as u64, crc, payload);
            let off = seq as usize * payload as usize;
            let end = (off + payload as usize).min(msg.len());
            assert_eq!(o.on_packet(1, &h, &msg[off..end]), Ok(()));
            let m = o.inc[1].as_ref().unwrap();
            assert!(m.buf.capacity() <= msg.len(), "reserved past the message");
        }
        assert!(o.error.is_none());
        let got = o.take_received();
        assert_eq!(got, vec![(1, msg)]);
    }
}
