//! Datagram authentication: every datagram carries a short keyed tag (HMAC-SHA256 of the
//! header and payload, truncated to [`TAG_LEN`] bytes), checked before the datagram can change
//! any state. The key is derived per job and per session from a secret every rank holds (the
//! launcher's, or the user's `COFLOWKIT_SECRET_FILE`), so a sender that sees the session id
//! but not the secret can forge neither a first packet nor an ACK.

use ring::hmac;

/// Bytes of tag a datagram carries (64 bits: an online forger needs about 2^63 tries; the
/// 1400-byte payload, the 68-byte header and IP/UDP's 28 still fit a 1500-byte MTU).
pub const TAG_LEN: usize = 8;

/// Where the tag sits in a datagram (the last bytes of the header).
pub const TAG_AT: usize = crate::wire::HEADER_LEN - TAG_LEN;

/// The key of one session of one job.
#[derive(Clone)]
pub struct WireKey(hmac::Key);

impl std::fmt::Debug for WireKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WireKey(..)")
    }
}

impl WireKey {
    /// The key for `session` from the job's `secret`: HMAC-SHA256(secret, label || session),
    /// so two sessions (or jobs) never share a key and the secret itself never keys a tag.
    pub fn derive(secret: &[u8], session: u32) -> WireKey {
        let master = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let mut ctx = hmac::Context::with_key(&master);
        ctx.update(b"coflowkit-transport/2 datagram key");
        ctx.update(&session.to_le_bytes());
        WireKey(hmac::Key::new(hmac::HMAC_SHA256, ctx.sign().as_ref()))
    }

    fn tag(&self, datagram: &[u8]) -> [u8; TAG_LEN] {
        let mut ctx = hmac::Context::with_key(&self.0);
        ctx.update(&datagram[..TAG_AT]);
        ctx.update(&datagram[TAG_AT + TAG_LEN..]);
        let full = ctx.sign();
        let mut t = [0; TAG_LEN];
        t.copy_from_slice(&full.as_ref()[..TAG_LEN]);
        t
    }

    /// Write the tag of an encoded datagram into it.
    pub fn seal(&self, datagram: &mut [u8]) {
        let t = self.tag(datagram);
        datagram[TAG_AT..TAG_AT + TAG_LEN].copy_from_slice(&t);
    }

    /// Whether an encoded datagram carries its right tag (compared in constant time).
    pub fn verify(&self, datagram: &[u8]) -> bool {
        if datagram.len() < crate::wire::HEADER_LEN {
            return false;
        }
        let t = self.tag(datagram);
        let got = &datagram[TAG_AT..TAG_AT + TAG_LEN];
        t.iter().zip(got).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{encode, Header};
    use coflowkit_shuffle::proto::{Kind, Packet};

    fn datagram() -> Vec<u8> {
        let packet = Packet {
            kind: Kind::Data,
            src: 1,
            dst: 0,
            seq: 0,
            total: 3,
            unsched: 1,
            seed: 5,
        };
        let h = Header {
            session: 9,
            op: 4,
            packet,
            msg_bytes: 300,
            msg_crc: 77,
        };
        encode(&h, &[1; 100]).unwrap()
    }

    #[test]
    fn a_sealed_datagram_verifies_and_any_change_or_other_key_does_not() {
        let k = WireKey::derive(b"job secret", 9);
        let mut d = datagram();
        assert!(!k.verify(&d), "unsealed");
        k.seal(&mut d);
        assert!(k.verify(&d));
        // Every bit of header, tag and payload counts.
        for i in 0..d.len() {
            for bit in 0..8 {
                let mut e = d.clone();
                e[i] ^= 1 << bit;
                assert!(!k.verify(&e), "flip of bit {bit} of byte {i} verified");
            }
        }
        assert!(
            !WireKey::derive(b"job secreT", 9).verify(&d),
            "another secret"
        );
        assert!(
            !WireKey::derive(b"job secret", 10).verify(&d),
            "another session"
        );
        assert!(!k.verify(&d[..d.len() - 1]));
        assert!(!k.verify(&d[..10]));
    }
}
