//! Shuffle matrices (thesis ch. 5): the normalized N x N matrix, skewness, the generators, the
//! conversion to whole packets and a plain text format.
//!
//! SKELETON: the types and signatures below are the contract between the matrix module and the
//! simulator; bodies marked `todo!` are to be written.

use serde::{Deserialize, Serialize};

/// Normalized shuffle matrix: `w[i * n + j]` is the size of the message from node i to node j
/// divided by the average message size, so every row and column sums to `n` under uniform data
/// distribution. The diagonal is local data and never crosses the network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShuffleMatrix {
    pub n: usize,
    pub w: Vec<f64>,
}

/// A shuffle instantiated in whole packets: `packets[i * n + j]` full packets from node i to j.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketMatrix {
    pub n: usize,
    pub packets: Vec<u64>,
}

impl PacketMatrix {
    pub fn get(&self, src: usize, dst: usize) -> u64 {
        self.packets[src * self.n + dst]
    }
}

/// Which generator builds the normalized matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Generator {
    General,
    Sort,
}

/// Everything a seeded matrix generation needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenSpec {
    pub nodes: usize,
    /// Target message skewness in [0, 1].
    pub skew: f64,
    /// Average message size in full packets.
    pub avg_packets: u64,
    pub generator: Generator,
    pub seed: u64,
}

/// A seeded matrix for `spec`, in whole packets.
pub fn generate(_spec: &GenSpec) -> PacketMatrix {
    todo!("matrix generator")
}
