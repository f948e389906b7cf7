//! A shuffle in bytes, for the real transport: the normalized matrix scaled so the average
//! message has a given number of bytes. Every rank computes it alone from the same matrix, and
//! the MPI baseline (bench/mpi/mpi_baseline.c) computes the same numbers in the same order.

use serde::{Deserialize, Serialize};

use super::{MatrixError, PacketMatrix, ShuffleMatrix};

/// `bytes[i * n + j]`: bytes node i sends to node j. The diagonal is local data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteMatrix {
    pub n: usize,
    pub bytes: Vec<u64>,
}

/// Largest message accepted: one operation's message must fit a `u32` count of packets of
/// at least 1 byte, and a receiving buffer must be allocatable.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 32;

impl ByteMatrix {
    /// Scales `m` (mean 1) to messages of `avg_bytes` on average: each cell is
    /// `round(w * avg_bytes)` (halves away from zero).
    pub fn scaled(m: &ShuffleMatrix, avg_bytes: u64) -> Result<ByteMatrix, MatrixError> {
        let mut bytes = Vec::with_capacity(m.w.len());
        for (k, &w) in m.w.iter().enumerate() {
            let b = (w * avg_bytes as f64).round();
            if !b.is_finite() || b < 0.0 || b > MAX_MESSAGE_BYTES as f64 {
                // Numbers in exponent form: a 1e300 cell is 300 digits written plainly.
                let (i, j) = (k / m.n, k % m.n);
                return Err(MatrixError::spec(
                    "avg-bytes",
                    &format!(
                        "message {i} -> {j} (row {i}, column {j}: size {w:e} x {avg_bytes} \
                         bytes) would be {b:.3e} bytes, more than the {MAX_MESSAGE_BYTES} a \
                         message may have"
                    ),
                ));
            }
            bytes.push(b as u64);
        }
        Ok(ByteMatrix { n: m.n, bytes })
    }

    pub fn get(&self, src: usize, dst: usize) -> u64 {
        self.bytes[src * self.n + dst]
    }

    /// Bytes node `i` sends over the network (its row without the diagonal).
    pub fn out_network(&self, i: usize) -> u64 {
        super::out_network(self.n, &self.bytes, i)
    }

    /// Bytes node `j` receives over the network (its column without the diagonal).
    pub fn in_network(&self, j: usize) -> u64 {
        super::in_network(self.n, &self.bytes, j)
    }

    /// The matrix in packets of `payload` bytes (the last one of a message may be short). A
    /// real transport sends an empty message as one empty packet (`empty_as_packet`); the
    /// packet simulator has no such messages.
    pub fn to_packets(&self, payload: u64, empty_as_packet: bool) -> PacketMatrix {
        let floor = u64::from(empty_as_packet);
        PacketMatrix {
            n: self.n,
            packets: self
                .bytes
                .iter()
                .map(|&b| b.div_ceil(payload.max(1)).max(floor))
                .collect(),
        }
    }

    /// Bytes that cross the network in all.
    pub fn network_bytes(&self) -> u64 {
        (0..self.n).map(|i| self.out_network(i)).sum()
    }

    /// The most any node must send or receive over the network: divided by the link rate it is
    /// the completion time no schedule can beat (spec §1.4).
    pub fn bound_bytes(&self) -> u64 {
        super::busiest_node(self.n, &self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_to_the_average_and_bounds_by_the_busiest_port() {
        // Figure-5.1-like 3 x 3, mean 1.
        let m = ShuffleMatrix {
            n: 3,
            w: vec![1.0, 2.0, 0.0, 0.5, 1.0, 1.5, 1.5, 0.0, 1.5],
        };
        let b = ByteMatrix::scaled(&m, 1000).unwrap();
        assert_eq!(b.bytes, vec![1000, 2000, 0, 500, 1000, 1500, 1500, 0, 1500]);
        // Out: 2000, 2000, 1500. In: 2000, 2000, 1500.
        assert_eq!(b.out_network(0), 2000);
        assert_eq!(b.in_network(2), 1500);
        assert_eq!(b.bound_bytes(), 2000);
        assert_eq!(b.network_bytes(), 5500);
        let p = b.to_packets(1000, false);
        assert_eq!(p.packets, vec![1, 2, 0, 1, 1, 2, 2, 0, 2]);
        assert_eq!(b.to_packets(1000, true).packets[2], 1);
        assert_eq!(b.to_packets(1000, true).ideal_bound_packets(), 3);
    }

    #[test]
    fn halves_round_away_from_zero_like_c_llround() {
        let m = ShuffleMatrix {
            n: 2,
            w: vec![0.0, 0.5, 1.5, 2.0],
        };
        assert_eq!(ByteMatrix::scaled(&m, 1).unwrap().bytes, vec![0, 1, 2, 2]);
    }

    #[test]
    fn a_message_too_large_is_an_error_naming_it() {
        let m = ShuffleMatrix {
            n: 2,
            w: vec![0.0, 3.0, 1.0, 0.0],
        };
        let e = ByteMatrix::scaled(&m, 1 << 31).unwrap_err().to_string();
        assert!(e.contains("0 -> 1") && e.contains("avg-bytes"), "{e}");
        // Adversarial pass 32, A5: a 1e300 cell was quoted as a 300-digit byte count.
        let m = ShuffleMatrix {
            n: 2,
            w: vec![0.0, 1e300, 1.0, 0.0],
        };
        let e = ByteMatrix::scaled(&m, 1024).unwrap_err().to_string();
        assert!(
            e.contains("row 0, column 1") && e.contains("more than the 4294967296"),
            "{e}"
        );
        assert!(e.len() < 200, "{e}");
    }
}
