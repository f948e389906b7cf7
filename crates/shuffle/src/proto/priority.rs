//! Scheduling priorities as exact integers: remaining bytes after a (possibly random) offset
//! inside a packet, and the remaining fraction as 64-bit fixed point. Both ends compute the
//! same value from the message's shared seed (thesis §3.8).

use super::config::Policy;

/// A stateless 64-bit mix (SplitMix64's finalizer). The offset of packet `k` is a function of
/// (seed, k) rather than the k-th draw of a stream, so the receiver can reproduce any packet's
/// offset without replaying the sender's stream.
pub fn mix(seed: u64, k: u64) -> u64 {
    let mut z = seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Bytes in units of 1/`RES` packet: the random offset inside a packet is drawn on this grid.
pub const RES: u64 = 1 << 16;

/// Remaining size (in 1/RES packets) of a `total`-packet message counted from a point inside
/// packet `k`: the packet's start when not randomized, a uniform offset in [0, 1) packet
/// otherwise. Packet 6 of 10 (k = 5) thus gets a remaining fraction in (0.4, 0.5].
pub fn remaining(total: u32, k: u32, seed: u64, randomize: bool) -> u64 {
    let off = if randomize {
        mix(seed, k as u64) % RES
    } else {
        0
    };
    (total as u64 - k as u64) * RES - off
}

/// The remaining fraction `remaining / total` in fixed point (1.0 = 2^63). Equal fractions
/// compare equal; unequal ones stay apart for messages under 46,000 packets (two fractions
/// with denominators below 2^31.5 differ by more than 2^-63); beyond, near-ties fall back to
/// the peer order.
pub fn fraction(rem: u64, total: u32) -> u64 {
    (((rem as u128) << 63) / (total as u128 * RES as u128)) as u64
}

/// The priority of packet `k` of a `total`-packet message under `policy` (greater goes first).
pub fn packet_priority(policy: Policy, total: u32, k: u32, seed: u64, randomize: bool) -> u64 {
    let rem = remaining(total, k, seed, randomize);
    match policy {
        Policy::Grpf => fraction(rem, total),
        Policy::Grpt => rem,
        Policy::Srpt => u64::MAX - rem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as_f64(p: u64) -> f64 {
        p as f64 / 2f64.powi(63)
    }

    #[test]
    fn sixth_packet_of_ten_lies_in_point_four_to_point_five() {
        // Spec §12 item 22.
        for seed in 0..200u64 {
            let f = as_f64(fraction(remaining(10, 5, seed, true), 10));
            assert!(f > 0.4 && f <= 0.5, "seed {seed}: {f}");
        }
        assert_eq!(fraction(remaining(10, 5, 0, false), 10), 1u64 << 62);
    }

    #[test]
    fn figure_3_6_priorities() {
        let m1: Vec<f64> = (0..5)
            .map(|k| as_f64(packet_priority(Policy::Grpf, 5, k, 0, false)))
            .collect();
        let m2: Vec<f64> = (0..3)
            .map(|k| as_f64(packet_priority(Policy::Grpf, 3, k, 0, false)))
            .collect();
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
        assert!(close(&m1, &[1.0, 0.8, 0.6, 0.4, 0.2]));
        assert!(close(&m2, &[1.0, 2.0 / 3.0, 1.0 / 3.0]));
    }
}
