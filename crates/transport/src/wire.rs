//! The datagram format: a fixed little-endian header, then the payload.
//!
//! ```text
//! magic u16 | version u8 | kind u8 | session u32 | op u64 | src u32 | dst u32 | seq u32 |
//! total u32 | unsched u32 | seed u64 | msg_bytes u64 | msg_crc u32 | payload_len u32 |
//! nonce u64 | tag [u8; 16] | payload
//! ```
//!
//! `session` names one run of a job (agreed at start), so datagrams of an earlier or another
//! job are told apart; `op` names one operation within it, so concurrent operations never mix.
//! `src, dst, seq, total, unsched, seed` are the protocol's [`Packet`]. A DATA or announcement
//! also carries its whole message's length in bytes and CRC-32, so a receiver can size its
//! buffer from any packet and check the message on completion; a DATA packet's payload goes at
//! offset `seq x payload size` (the session's, agreed at start). Decoding checks the syntax
//! only; whether a packet makes sense for an operation is the endpoint's call. `nonce` and
//! `tag` belong to the datagram's authenticated encryption ([`crate::auth`]): zero when
//! encoded, they are written when the endpoint seals the datagram (which also encrypts the
//! payload) and checked when it opens one.

use coflowkit_shuffle::proto::{Kind, Packet};
use thiserror::Error;

/// The first two bytes of every datagram ("CK" little-endian).
pub const MAGIC: u16 = u16::from_le_bytes(*b"CK");
/// Bumped on any incompatible change of the header.
pub const VERSION: u8 = 3;
/// Bytes before the payload.
pub const HEADER_LEN: usize = 84;

/// What a datagram says besides its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub session: u32,
    pub op: u64,
    pub packet: Packet,
    /// Length of the whole message (DATA, announcement); 0 otherwise.
    pub msg_bytes: u64,
    /// CRC-32 of the whole message (DATA, announcement); 0 otherwise.
    pub msg_crc: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("datagram of {len} bytes is shorter than the {HEADER_LEN}-byte header")]
    Truncated { len: usize },
    #[error("bad magic {got:#06x} (want {MAGIC:#06x}): not a coflowkit datagram")]
    Magic { got: u16 },
    #[error("wire version {got}, this build speaks {VERSION}")]
    Version { got: u8 },
    #[error("datagram of session {got}, this endpoint is in session {want}")]
    ForeignSession { got: u32, want: u32 },
    #[error("unknown packet kind {0}")]
    Kind(u8),
    #[error("header says {header} payload bytes, the datagram carries {actual}")]
    Length { header: u32, actual: usize },
    #[error("a {kind:?} packet carries no payload, this one has {len} bytes")]
    ControlPayload { kind: Kind, len: usize },
    #[error("buffer of {have} bytes cannot hold a {need}-byte datagram")]
    Buffer { need: usize, have: usize },
}

impl WireError {
    /// An intact datagram of another session (as opposed to garbage).
    pub fn is_foreign(&self) -> bool {
        matches!(self, WireError::ForeignSession { .. })
    }
}

/// "Alive, but this operation has not started here": an ACK with `seq` and `total` both
/// `u32::MAX` (a real ACK has `total` 0). Sent in answer to a probe for an operation this rank
/// has not reached, so the prober does not take a busy rank for a dead one.
pub fn alive(op: u64, src: u32, dst: u32) -> (u64, Packet) {
    let p = Packet {
        kind: Kind::Ack,
        src,
        dst,
        seq: u32::MAX,
        total: u32::MAX,
        unsched: 0,
        seed: 0,
    };
    (op, p)
}

/// Whether `p` is an [`alive`] answer.
pub fn is_alive(p: &Packet) -> bool {
    p.kind == Kind::Ack && p.seq == u32::MAX && p.total == u32::MAX
}

fn kind_code(k: Kind) -> u8 {
    match k {
        Kind::Data => 0,
        Kind::Announce => 1,
        Kind::Grant => 2,
        Kind::Ack => 3,
        Kind::Resend => 4,
    }
}

fn kind_of(code: u8) -> Result<Kind, WireError> {
    Ok(match code {
        0 => Kind::Data,
        1 => Kind::Announce,
        2 => Kind::Grant,
        3 => Kind::Ack,
        4 => Kind::Resend,
        c => return Err(WireError::Kind(c)),
    })
}

/// Write `h` and `payload` into `buf`; the datagram's length. Only DATA carries a payload.
pub fn encode_into(h: &Header, payload: &[u8], buf: &mut [u8]) -> Result<usize, WireError> {
    let kind = h.packet.kind;
    if kind != Kind::Data && !payload.is_empty() {
        return Err(WireError::ControlPayload {
            kind,
            len: payload.len(),
        });
    }
    let need = HEADER_LEN + payload.len();
    if buf.len() < need || payload.len() > u32::MAX as usize {
        return Err(WireError::Buffer {
            need,
            have: buf.len(),
        });
    }
    let p = &h.packet;
    let mut w = Writer { buf, at: 0 };
    w.put(&MAGIC.to_le_bytes());
    w.put(&[VERSION, kind_code(kind)]);
    w.put(&h.session.to_le_bytes());
    w.put(&h.op.to_le_bytes());
    w.put(&p.src.to_le_bytes());
    w.put(&p.dst.to_le_bytes());
    w.put(&p.seq.to_le_bytes());
    w.put(&p.total.to_le_bytes());
    w.put(&p.unsched.to_le_bytes());
    w.put(&p.seed.to_le_bytes());
    w.put(&h.msg_bytes.to_le_bytes());
    w.put(&h.msg_crc.to_le_bytes());
    w.put(&(payload.len() as u32).to_le_bytes());
    w.put(&[0; 8]); // the nonce
    w.put(&[0; crate::auth::TAG_LEN]);
    debug_assert_eq!(w.at, HEADER_LEN);
    w.put(payload);
    Ok(need)
}

/// [`encode_into`] a new vector.
pub fn encode(h: &Header, payload: &[u8]) -> Result<Vec<u8>, WireError> {
    let mut buf = vec![0; HEADER_LEN + payload.len()];
    let n = encode_into(h, payload, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// Read one datagram of session `session`: its header and payload.
pub fn decode(buf: &[u8], session: u32) -> Result<(Header, &[u8]), WireError> {
    if buf.len() < HEADER_LEN {
        return Err(WireError::Truncated { len: buf.len() });
    }
    let mut r = Reader { buf, at: 0 };
    let magic = u16::from_le_bytes(r.take());
    if magic != MAGIC {
        return Err(WireError::Magic { got: magic });
    }
    let [version, code] = r.take();
    if version != VERSION {
        return Err(WireError::Version { got: version });
    }
    let got = u32::from_le_bytes(r.take());
    if got != session {
        return Err(WireError::ForeignSession { got, want: session });
    }
    let kind = kind_of(code)?;
    let op = u64::from_le_bytes(r.take());
    let packet = Packet {
        kind,
        src: u32::from_le_bytes(r.take()),
        dst: u32::from_le_bytes(r.take()),
        seq: u32::from_le_bytes(r.take()),
        total: u32::from_le_bytes(r.take()),
        unsched: u32::from_le_bytes(r.take()),
        seed: u64::from_le_bytes(r.take()),
    };
    let msg_bytes = u64::from_le_bytes(r.take());
    let msg_crc = u32::from_le_bytes(r.take());
    let payload_len = u32::from_le_bytes(r.take());
    // The nonce and the tag are the key's to check.
    let payload = &buf[HEADER_LEN..];
    if payload.len() != payload_len as usize {
        return Err(WireError::Length {
            header: payload_len,
            actual: payload.len(),
        });
    }
    if kind != Kind::Data && !payload.is_empty() {
        return Err(WireError::ControlPayload {
            kind,
            len: payload.len(),
        });
    }
    let h = Header {
        session,
        op,
        packet,
        msg_bytes,
        msg_crc,
    };
    Ok((h, payload))
}

struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, b: &[u8]) {
        self.buf[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }
}

/// Reads fixed-size fields from a buffer already checked to hold the whole header.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        out.copy_from_slice(&self.buf[self.at..self.at + N]);
        self.at += N;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kinds() -> impl Strategy<Value = Kind> {
        prop_oneof![
            Just(Kind::Data),
            Just(Kind::Announce),
            Just(Kind::Grant),
            Just(Kind::Ack),
            Just(Kind::Resend),
        ]
    }

    prop_compose! {
        fn datagrams()(kind in kinds(), session: u32, op: u64, src: u32, dst: u32, seq: u32,
                       total: u32, unsched: u32, seed: u64, msg_bytes: u64, msg_crc: u32,
                       payload in proptest::collection::vec(any::<u8>(), 0..200))
                      -> (Header, Vec<u8>) {
            let payload = if kind == Kind::Data { payload } else { Vec::new() };
            let packet = Packet { kind, src, dst, seq, total, unsched, seed };
            (Header { session, op, packet, msg_bytes, msg_crc }, payload)
        }
    }

    /// `buf` with its nonce and tag zeroed, as `encode` writes them (decoding reads neither).
    fn untagged(buf: &[u8]) -> Vec<u8> {
        let mut b = buf.to_vec();
        b[crate::auth::NONCE_AT..HEADER_LEN].fill(0);
        b
    }

    proptest! {
        #[test]
        fn round_trip((h, payload) in datagrams()) {
            let buf = encode(&h, &payload).unwrap();
            prop_assert_eq!(buf.len(), HEADER_LEN + payload.len());
            let (got, body) = decode(&buf, h.session).unwrap();
            prop_assert_eq!(got, h);
            prop_assert_eq!(body, &payload[..]);
            // Another session's endpoint refuses it, naming both.
            let other = h.session.wrapping_add(1);
            prop_assert_eq!(decode(&buf, other).unwrap_err(),
                WireError::ForeignSession { got: h.session, want: other });
        }

        #[test]
        fn arbitrary_bytes_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..300),
                                       session: u32) {
            // Either an error or a datagram that encodes back to the same bytes.
            if let Ok((h, body)) = decode(&buf, session) {
                prop_assert_eq!(encode(&h, body).unwrap(), untagged(&buf));
            }
        }

        #[test]
        fn mutated_datagrams_never_panic((h, payload) in datagrams(),
                                         flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
                                         cut in any::<usize>()) {
            let mut buf = encode(&h, &payload).unwrap();
            for (at, x) in flips {
                let i = at % buf.len();
                buf[i] ^= x;
            }
            buf.truncate(cut % (buf.len() + 1) .max(1));
            if let Ok((got, body)) = decode(&buf, h.session) {
                prop_assert_eq!(encode(&got, body).unwrap(), untagged(&buf));
            }
        }

        #[test]
        fn a_truncated_datagram_is_an_error((h, payload) in datagrams(), cut in any::<usize>()) {
            let buf = encode(&h, &payload).unwrap();
            let cut = cut % buf.len();
            prop_assert!(decode(&buf[..cut], h.session).is_err());
        }
    }

    fn data() -> (Header, Vec<u8>) {
        let packet = Packet {
            kind: Kind::Data,
            src: 1,
            dst: 2,
            seq: 3,
            total: 4,
            unsched: 1,
            seed: 9,
        };
        let h = Header {
            session: 7,
            op: 1 << 40 | 5,
            packet,
            msg_bytes: 4000,
            msg_crc: 0xdead_beef,
        };
        (h, vec![5; 100])
    }

    #[test]
    fn layout_is_little_endian_in_the_documented_order() {
        let (h, payload) = data();
        let b = encode(&h, &payload).unwrap();
        assert_eq!(&b[0..2], b"CK");
        assert_eq!(b[2], VERSION);
        assert_eq!(b[3], 0);
        assert_eq!(b[4..8], 7u32.to_le_bytes());
        assert_eq!(b[8..16], (1u64 << 40 | 5).to_le_bytes());
        assert_eq!(b[16..20], 1u32.to_le_bytes());
        assert_eq!(b[20..24], 2u32.to_le_bytes());
        assert_eq!(b[24..28], 3u32.to_le_bytes());
        assert_eq!(b[28..32], 4u32.to_le_bytes());
        assert_eq!(b[32..36], 1u32.to_le_bytes());
        assert_eq!(b[36..44], 9u64.to_le_bytes());
        assert_eq!(b[44..52], 4000u64.to_le_bytes());
        assert_eq!(b[52..56], 0xdead_beefu32.to_le_bytes());
        assert_eq!(b[56..60], 100u32.to_le_bytes());
        assert_eq!(b[60..68], [0; 8], "the nonce, numbered by the endpoint");
        assert_eq!(b[68..84], [0; 16], "the tag, sealed by the endpoint");
        assert_eq!(&b[84..], &payload[..]);
    }

    #[test]
    fn each_kind_of_damage_has_its_error() {
        let (h, payload) = data();
        let good = encode(&h, &payload).unwrap();
        let with = |i: usize, v: u8| {
            let mut b = good.clone();
            b[i] = v;
            decode(&b, 7).unwrap_err()
        };
        assert_eq!(with(0, b'X'), WireError::Magic { got: 0x4b58 });
        assert_eq!(with(2, 9), WireError::Version { got: 9 });
        assert_eq!(with(3, 200), WireError::Kind(200));
        assert_eq!(
            decode(&good[..83], 7).unwrap_err(),
            WireError::Truncated { len: 83 }
        );
        assert_eq!(
            decode(&good[..174], 7).unwrap_err(),
            WireError::Length {
                header: 100,
                actual: 90
            }
        );
        // A grant with a payload, whichever way it is made.
        let mut grant = h;
        grant.packet.kind = Kind::Grant;
        assert!(matches!(
            encode(&grant, &payload),
            Err(WireError::ControlPayload { .. })
        ));
        assert!(matches!(with(3, 2), WireError::ControlPayload { .. }));
        let mut small = [0u8; 100];
        assert_eq!(
            encode_into(&h, &payload, &mut small).unwrap_err(),
            WireError::Buffer {
                need: 184,
                have: 100
            }
        );
        // A version-2 datagram (68-byte header) is named as such when it is long enough to
        // be read (a control packet of version 2 is not: it is cut short of this header).
        let mut v2 = good[..68 + 100].to_vec();
        v2[2] = 2;
        assert_eq!(decode(&v2, 7).unwrap_err(), WireError::Version { got: 2 });
        assert_eq!(
            decode(&v2[..68], 7).unwrap_err(),
            WireError::Truncated { len: 68 }
        );
    }
}
