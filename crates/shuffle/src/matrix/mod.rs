//! Shuffle matrices (thesis ch. 5): the normalized N x N matrix, skewness, the generators, the
//! conversion to whole packets and a plain text format. Decisions: docs/shuffle-matrices.md.

mod bytes;
mod cdf;
mod error;
mod flow;
mod general;
mod packets;
mod skewness;
mod sort;
mod text;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub use bytes::{ByteMatrix, MAX_MESSAGE_BYTES};
pub use cdf::{CdfInterp, ShapeCdf};
pub use error::{MatrixError, MatrixErrorKind};
pub use general::{
    general, interval_walk, GeneralOptions, Placement, RowFill, SkewMethod, WalkStats,
    MAX_CDF_POINTS,
};
pub use packets::to_packets;
pub use skewness::{skewness, skewness_of_counts};
pub use sort::{
    expected_skewness, hot_fraction_for, sort_based, sort_bytes, SortOptions, MAX_KEYS,
};
pub use text::{check_nodes, MAX_CELL_PACKETS, MAX_MATRIX_NODES, SIM_BYTES_PER_MESSAGE};
pub use text::{
    format_normalized_matrix, format_packet_matrix, parse_matrix, read_matrix_file,
    read_normalized_matrix, read_packet_matrix, write_normalized_matrix, write_packet_matrix,
    MatrixBody, MatrixFile,
};

/// Normalized shuffle matrix: `w[i * n + j]` is the size of the message from node i to node j
/// divided by the average message size, so every row and column sums to `n` under uniform data
/// distribution. The diagonal is local data and never crosses the network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShuffleMatrix {
    pub n: usize,
    pub w: Vec<f64>,
}

impl ShuffleMatrix {
    pub fn get(&self, src: usize, dst: usize) -> f64 {
        self.w[src * self.n + dst]
    }
    pub fn row_sum(&self, i: usize) -> f64 {
        self.w[i * self.n..(i + 1) * self.n].iter().sum()
    }
    pub fn col_sum(&self, j: usize) -> f64 {
        (0..self.n).map(|i| self.w[i * self.n + j]).sum()
    }
    /// Message skewness (spec §1.3).
    pub fn skewness(&self) -> f64 {
        skewness(&self.w, self.n)
    }
}

/// A shuffle instantiated in whole packets: `packets[i * n + j]` full packets from node i to j.
/// The diagonal is local data: counted in the matrix, never sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketMatrix {
    pub n: usize,
    pub packets: Vec<u64>,
}

impl PacketMatrix {
    pub fn get(&self, src: usize, dst: usize) -> u64 {
        self.packets[src * self.n + dst]
    }
    pub fn total_packets(&self) -> u64 {
        self.packets.iter().sum()
    }
    /// Packets on the diagonal (kept local, never on the network).
    pub fn local_packets(&self) -> u64 {
        (0..self.n).map(|i| self.get(i, i)).sum()
    }
    /// Packets node `i` sends over the network (its row without the diagonal).
    pub fn out_network(&self, i: usize) -> u64 {
        out_network(self.n, &self.packets, i)
    }
    /// Packets node `j` receives over the network (its column without the diagonal).
    pub fn in_network(&self, j: usize) -> u64 {
        in_network(self.n, &self.packets, j)
    }
    /// Message skewness of the packet counts (normalized by their own mean).
    pub fn skewness(&self) -> f64 {
        skewness_of_counts(&self.packets, self.n)
    }
    /// Ideal completion bound in packet times (spec §1.4): the most any host must send or
    /// receive over the network. Local (diagonal) data is free.
    pub fn ideal_bound_packets(&self) -> u64 {
        busiest_node(self.n, &self.packets)
    }
}

/// Whether any cell off the diagonal of the row-major `n x n` matrix `cells` is not zero.
fn any_off_diagonal<T: PartialEq + Default>(n: usize, cells: &[T]) -> bool {
    let zero = T::default();
    cells
        .iter()
        .enumerate()
        .any(|(k, c)| k / n.max(1) != k % n.max(1) && *c != zero)
}

/// A matrix with nothing off the diagonal (all zero, or diagonal only) is refused, naming
/// `file`, by every command that shuffles one (`shuffle sim`, `shuffle run`): its bound and
/// its optimality are 0 and mean nothing, as with `--avg-packets 0`.
pub fn check_network_data(file: &str, body: &MatrixBody) -> Result<(), MatrixError> {
    match body {
        MatrixBody::Packets(p) => check_cells(file, p.n, &p.packets),
        MatrixBody::Normalized(m) => check_cells(file, m.n, &m.w),
    }
}

/// [`check_network_data`] of a packet matrix.
pub fn check_packets_network_data(file: &str, m: &PacketMatrix) -> Result<(), MatrixError> {
    check_cells(file, m.n, &m.packets)
}

fn check_cells<T: PartialEq + Default>(
    file: &str,
    n: usize,
    cells: &[T],
) -> Result<(), MatrixError> {
    if any_off_diagonal(n, cells) {
        Ok(())
    } else {
        Err(MatrixError::at(file, 0, MatrixErrorKind::NoNetworkData))
    }
}

/// Row `i` of the row-major `n x n` matrix `cells` without the diagonal: what node i sends
/// over the network (in whatever unit the cells count).
pub(crate) fn out_network(n: usize, cells: &[u64], i: usize) -> u64 {
    (0..n).filter(|&j| j != i).map(|j| cells[i * n + j]).sum()
}

/// Column `j` without the diagonal: what node j receives over the network.
pub(crate) fn in_network(n: usize, cells: &[u64], j: usize) -> u64 {
    (0..n).filter(|&i| i != j).map(|i| cells[i * n + j]).sum()
}

/// The most any node sends or receives over the network (spec §1.4's bound, in cells' unit).
pub(crate) fn busiest_node(n: usize, cells: &[u64]) -> u64 {
    (0..n)
        .map(|h| out_network(n, cells, h).max(in_network(n, cells, h)))
        .max()
        .unwrap_or(0)
}

/// Which generator builds the normalized matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Generator {
    /// Random CDF, row filling, greedy placement and the interval walk (thesis §5.2).
    General,
    /// MilliSort's bucket sort of duplicate-heavy keys (thesis §5.1).
    Sort,
}

impl std::str::FromStr for Generator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "general" => Ok(Generator::General),
            "sort" => Ok(Generator::Sort),
            _ => Err(format!(
                "unknown generator `{s}` (expected general or sort)"
            )),
        }
    }
}

impl std::fmt::Display for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Generator::General => "general",
            Generator::Sort => "sort",
        })
    }
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

/// Options of both generators; `Default` gives the documented defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenOptions {
    pub general: GeneralOptions,
    pub sort: SortOptions,
}

/// A generated matrix with what it measured.
#[derive(Debug, Clone)]
pub struct Generated {
    pub normalized: ShuffleMatrix,
    pub packets: PacketMatrix,
    /// Skewness of the normalized matrix (before rounding to packets).
    pub skew_normalized: f64,
    /// Skewness of the packet counts (what the simulator sees).
    pub skew_packets: f64,
}

/// A seeded matrix for `spec`, in whole packets, with the default options.
///
/// # Panics
/// On a spec `generate_with` rejects (zero nodes, skew outside [0, 1]); validate user input
/// with `generate_with` first.
pub fn generate(spec: &GenSpec) -> PacketMatrix {
    generate_with(spec, &GenOptions::default())
        .expect("valid GenSpec")
        .packets
}

/// A seeded matrix for `spec` under `opts`, normalized and in packets.
pub fn generate_with(spec: &GenSpec, opts: &GenOptions) -> Result<Generated, MatrixError> {
    if spec.nodes == 0 {
        return Err(MatrixError::spec("nodes", "must be at least 1"));
    }
    check_nodes(spec.nodes).map_err(|e| MatrixError::spec("nodes", &e))?;
    if !(0.0..=1.0).contains(&spec.skew) {
        return Err(MatrixError::spec(
            "skew",
            &format!("{} is outside [0, 1]", spec.skew),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let normalized = match spec.generator {
        Generator::General => general(spec.nodes, spec.skew, &opts.general, &mut rng)?,
        Generator::Sort => sort_based(spec.nodes, spec.skew, &opts.sort, &mut rng)?,
    };
    let packets = to_packets(&normalized, spec.avg_packets)?;
    // What the matrix reader refuses, the generator must not write (nor the protocol get).
    if let Some((k, &most)) = (packets.packets.iter().enumerate()).max_by_key(|&(_, &v)| v) {
        if most > MAX_CELL_PACKETS {
            let (i, j) = (k / spec.nodes, k % spec.nodes);
            return Err(MatrixError::spec(
                "avg-packets",
                &format!(
                    "{} gives message {i} -> {j} {most} packets, more than the {MAX_CELL_PACKETS} \
                     a message may have",
                    spec.avg_packets
                ),
            ));
        }
    }
    Ok(Generated {
        skew_normalized: normalized.skewness(),
        skew_packets: packets.skewness(),
        normalized,
        packets,
    })
}

/// Uniformly random permutation of 0..n (Fisher-Yates), drawn from `rng`.
pub(crate) fn permutation(n: usize, rng: &mut impl Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.gen_range(0..=i));
    }
    p
}
