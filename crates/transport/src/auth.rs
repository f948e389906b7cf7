//! Datagram authentication (and encryption): every datagram is sealed with AES-128-GCM (ring)
//! under a key derived per job and per session from a secret every rank holds (the
//! launcher's, or the user's `COFLOWKIT_SECRET_FILE`). The header is authenticated as
//! associated data and the payload encrypted; the 16-byte tag at the end of the header is
//! checked, and the payload decrypted, before the datagram can change any state. So a sender
//! that sees the session id but not the secret can forge neither a first packet nor an ACK,
//! and cannot read the payloads either.
//!
//! Why encrypt: GMAC alone (AES-GCM over an empty plaintext, the whole datagram as associated
//! data) was the plan, but ring 0.17 hashes associated data one 16-byte block per call, which
//! made it no faster than the HMAC-SHA256 of wire version 2 on this machine; its stitched
//! AES-NI + PCLMULQDQ code only runs on the plaintext, and sealing and opening a 1,484-byte
//! datagram through it takes about a quarter of the HMAC's time (0.45 against 1.7 us; a fifth
//! at 8,984 bytes: `cargo bench -p coflowkit-transport --bench udp -- auth`, and
//! docs/reliability.md "Fixed in session 33").
//!
//! # The nonce never repeats under a key
//!
//! GCM fails badly if one key ever seals two different datagrams under the same 96-bit nonce
//! (the keystream repeats, and the two tags give away the hash key, and with it any forgery).
//! A datagram's nonce is `src || n`: its header's `src` (4 bytes, the sending rank: a rank
//! only ever sends datagrams with its own rank there) and the header's 64-bit `nonce` field
//! `n`, written by [`WireKey::seal`]. Each [`WireKey`] value (each clone too) holds its own
//! counter, started at a random 64-bit value when it is made and stepped atomically once per
//! sealed datagram, so one value never hands out the same `n` twice before 2^64 datagrams
//! (about 580,000 years at a million a second). Two sealers with the same key and the same
//! `src` (one rank's two endpoints in one session, an endpoint restarted, or a job rerun with
//! the same secret and session) start at independent random points; their runs of `n` meet
//! only if the starts fall within the number of datagrams sent of each other: probability
//! about `(a + b) / 2^64` for runs of `a` and `b` datagrams, 10^-7 for two runs of a trillion.
//! Sealers of different ranks never share a nonce, whatever their counters. A retransmission
//! is sealed afresh and gets a new nonce, so nothing relies on retransmitted bytes being
//! identical. The nonce is not secret and the receiver does not track it: a replayed datagram
//! opens, as it verified under the HMAC tags of version 2, and the protocol takes it for a
//! duplicate.
//!
//! # The tag is 16 bytes
//!
//! GCM's full tag. Truncated GCM tags are weaker than truncated HMACs: a forger's chance grows
//! with the datagram's length and each success leaks part of the hash key, so NIST SP 800-38D
//! (appendix C) limits a key with 64-bit tags on datagrams up to 2^17 bytes to 2^29 opens,
//! which a busy job passes within the hour. With 16 bytes a forgery succeeds with probability
//! about `l / 2^128` per try for a datagram of `l` blocks.

use std::sync::atomic::{AtomicU64, Ordering};

use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM};
use ring::hmac;

use crate::wire::HEADER_LEN;

/// Bytes of tag a datagram carries (GCM's full 128 bits).
pub const TAG_LEN: usize = 16;

/// Where the tag sits in a datagram (the last bytes of the header).
pub const TAG_AT: usize = HEADER_LEN - TAG_LEN;

/// Where the header's 64-bit nonce counter sits (just before the tag).
pub const NONCE_AT: usize = TAG_AT - 8;

/// Where the header's `src` (the sending rank, the nonce's first 4 bytes) sits.
const SRC_AT: usize = 16;

/// The key of one session of one job, with this value's nonce counter.
pub struct WireKey {
    key: LessSafeKey,
    /// The raw key, to make clones with a counter of their own.
    raw: [u8; 16],
    next: AtomicU64,
}

impl std::fmt::Debug for WireKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WireKey(..)")
    }
}

impl Clone for WireKey {
    /// The same key with a counter of its own, started at a new random point (see the
    /// module's note on nonces), so clones seal concurrently without contending.
    fn clone(&self) -> WireKey {
        WireKey::from_raw(self.raw)
    }
}

impl WireKey {
    /// The key for `session` from the job's `secret`: the first 16 bytes of
    /// HMAC-SHA256(secret, label || session), so two sessions (or jobs) never share a key and
    /// the secret itself never keys a tag.
    pub fn derive(secret: &[u8], session: u32) -> WireKey {
        let master = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let mut ctx = hmac::Context::with_key(&master);
        ctx.update(b"coflowkit-transport/3 datagram key, AES-128-GCM");
        ctx.update(&session.to_le_bytes());
        let mut raw = [0; 16];
        raw.copy_from_slice(&ctx.sign().as_ref()[..16]);
        WireKey::from_raw(raw)
    }

    fn from_raw(raw: [u8; 16]) -> WireKey {
        let key = UnboundKey::new(&AES_128_GCM, &raw).expect("16 bytes is an AES-128 key");
        WireKey {
            key: LessSafeKey::new(key),
            raw,
            next: AtomicU64::new(rand::random()),
        }
    }

    /// `src || n` of an encoded datagram at least a header long.
    fn nonce(datagram: &[u8]) -> Nonce {
        let mut n = [0; aead::NONCE_LEN];
        n[..4].copy_from_slice(&datagram[SRC_AT..SRC_AT + 4]);
        n[4..].copy_from_slice(&datagram[NONCE_AT..NONCE_AT + 8]);
        Nonce::assume_unique_for_key(n)
    }

    /// Seal an encoded datagram: number it (the header's nonce field), encrypt its payload in
    /// place and write its tag. Panics on a datagram shorter than the header (a bug: the
    /// endpoint only seals what `wire::encode_into` wrote).
    pub fn seal(&self, datagram: &mut [u8]) {
        assert!(
            datagram.len() >= HEADER_LEN,
            "sealing {} bytes, shorter than the {HEADER_LEN}-byte header",
            datagram.len()
        );
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        datagram[NONCE_AT..NONCE_AT + 8].copy_from_slice(&n.to_le_bytes());
        let nonce = Self::nonce(datagram);
        let (header, payload) = datagram.split_at_mut(HEADER_LEN);
        let tag = self
            .key
            .seal_in_place_separate_tag(nonce, Aad::from(&header[..TAG_AT]), payload)
            .expect("a UDP datagram is far below GCM's length limit");
        header[TAG_AT..].copy_from_slice(tag.as_ref());
    }

    /// Open a sealed datagram: whether it carries its right tag (ring compares in constant
    /// time); if so its payload is decrypted in place, if not the payload is garbage.
    pub fn open(&self, datagram: &mut [u8]) -> bool {
        if datagram.len() < HEADER_LEN {
            return false;
        }
        let nonce = Self::nonce(datagram);
        let (header, payload) = datagram.split_at_mut(HEADER_LEN);
        let mut tag = [0; TAG_LEN];
        tag.copy_from_slice(&header[TAG_AT..]);
        self.key
            .open_in_place_separate_tag(
                nonce,
                Aad::from(&header[..TAG_AT]),
                aead::Tag::from(tag),
                payload,
                0..,
            )
            .is_ok()
    }

    /// Whether a sealed datagram carries its right tag ([`WireKey::open`] on a copy).
    pub fn verify(&self, datagram: &[u8]) -> bool {
        self.open(&mut datagram.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{decode, encode, Header};
    use coflowkit_shuffle::proto::{Kind, Packet};

    fn payload() -> Vec<u8> {
        (0..100).collect()
    }

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
        encode(&h, &payload()).unwrap()
    }

    fn nonce_of(d: &[u8]) -> u64 {
        u64::from_le_bytes(d[NONCE_AT..NONCE_AT + 8].try_into().unwrap())
    }

    #[test]
    fn a_sealed_datagram_verifies_and_any_change_or_other_key_does_not() {
        let k = WireKey::derive(b"job secret", 9);
        let mut d = datagram();
        assert!(!k.verify(&d), "unsealed");
        k.seal(&mut d);
        assert!(k.verify(&d));
        // Every bit of header, nonce, tag and payload counts.
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
        assert!(k.clone().verify(&d), "a clone is the same key");
        assert!(!k.verify(&d[..d.len() - 1]));
        assert!(!k.verify(&d[..HEADER_LEN - 1]));
        assert!(!k.verify(&d[..10]));
    }

    #[test]
    fn the_payload_travels_encrypted_and_opens_to_what_was_sent() {
        let k = WireKey::derive(b"job secret", 9);
        let plain = datagram();
        let mut d = plain.clone();
        k.seal(&mut d);
        assert_eq!(d[..NONCE_AT], plain[..NONCE_AT], "the header is in clear");
        assert_ne!(d[HEADER_LEN..], plain[HEADER_LEN..], "the payload is not");
        assert!(k.open(&mut d));
        assert_eq!(d[HEADER_LEN..], plain[HEADER_LEN..]);
        let (h, body) = decode(&d, 9).unwrap();
        assert_eq!((h.op, body), (4, &payload()[..]));
    }

    #[test]
    fn every_seal_takes_a_new_nonce_and_clones_count_apart() {
        let k = WireKey::derive(b"job secret", 9);
        let (mut a, mut b) = (datagram(), datagram());
        k.seal(&mut a);
        k.seal(&mut b);
        // The same datagram sealed twice (a retransmission): two nonces, two ciphertexts and
        // two tags, both good.
        assert_eq!(nonce_of(&b), nonce_of(&a).wrapping_add(1));
        assert_ne!(a[TAG_AT..], b[TAG_AT..]);
        assert_ne!(a[HEADER_LEN..], b[HEADER_LEN..]);
        assert!(k.verify(&a) && k.verify(&b));
        // A clone counts from a random start of its own, not from where the original stands;
        // so does a key derived again (a rank's second endpoint, or a restart).
        let far = |x: u64, y: u64| {
            let gap = x.wrapping_sub(y);
            gap > 1 << 40 && gap.wrapping_neg() > 1 << 40
        };
        let mut c = datagram();
        k.clone().seal(&mut c);
        assert!(k.verify(&c));
        assert!(far(nonce_of(&c), nonce_of(&b)), "a clone's start");
        let mut e = datagram();
        WireKey::derive(b"job secret", 9).seal(&mut e);
        assert!(k.verify(&e));
        assert!(far(nonce_of(&e), nonce_of(&b)), "a second key's start");
        assert!(far(nonce_of(&e), nonce_of(&c)));
    }

    #[test]
    fn the_nonce_counts_the_sending_rank() {
        // Two ranks whose counters stand at the same value still seal under two nonces: the
        // keystreams differ (with one nonce the two ciphertexts of one payload would match).
        let k = WireKey::derive(b"job secret", 9);
        let mut a = datagram();
        let mut b = datagram();
        b[SRC_AT] = 2; // another rank
        let n = k.next.load(Ordering::Relaxed);
        k.seal(&mut a);
        k.next.store(n, Ordering::Relaxed);
        k.seal(&mut b);
        assert_eq!(nonce_of(&a), nonce_of(&b));
        assert_ne!(a[HEADER_LEN..], b[HEADER_LEN..]);
        // The control: the same rank and the same counter value repeat the keystream.
        let mut c = datagram();
        k.next.store(n, Ordering::Relaxed);
        k.seal(&mut c);
        assert_eq!(a[HEADER_LEN..], c[HEADER_LEN..]);
    }
}
