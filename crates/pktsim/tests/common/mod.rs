//! Hand-built shuffles for the simulator's tests.
#![allow(dead_code)]

use coflowkit_pktsim::{Placement, SimConfig};
use coflowkit_shuffle::matrix::PacketMatrix;

/// A matrix of `n` nodes from (src, dst, packets) triples.
pub fn matrix(n: usize, msgs: &[(usize, usize, u64)]) -> PacketMatrix {
    let mut packets = vec![0; n * n];
    for &(s, d, p) in msgs {
        packets[s * n + d] = p;
    }
    PacketMatrix { n, packets }
}

/// `protocol` on `racks` racks with hosts placed in order (rack by rack), seed 1.
pub fn cfg(racks: usize, protocol: &str) -> SimConfig {
    let mut c = SimConfig::new(racks, protocol, 1);
    c.placement = Placement::Block;
    c
}
