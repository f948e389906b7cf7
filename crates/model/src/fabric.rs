//! The non-blocking fabric ("big switch"): every port has an uplink (ingress, what it sends) and
//! a downlink (egress, what it receives), each with its own capacity. Only these can congest.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fabric {
    /// Uplink capacity of each port in bytes per second.
    pub up_bytes_per_s: Vec<f64>,
    /// Downlink capacity of each port in bytes per second.
    pub down_bytes_per_s: Vec<f64>,
}

impl Fabric {
    /// `ports` ports, all with the same capacity in both directions.
    pub fn uniform(ports: usize, bytes_per_s: f64) -> Self {
        Fabric {
            up_bytes_per_s: vec![bytes_per_s; ports],
            down_bytes_per_s: vec![bytes_per_s; ports],
        }
    }

    /// `ports` ports of `bits_per_s` each way (the usual way users give link rates).
    pub fn uniform_bps(ports: usize, bits_per_s: f64) -> Self {
        Self::uniform(ports, bits_per_s / 8.0)
    }

    pub fn ports(&self) -> usize {
        self.up_bytes_per_s.len()
    }

    /// Minimum time for `bytes_out[p]` to leave and `bytes_in[p]` to enter every port on an empty
    /// fabric: Γ of Eq 4.1 with `Rem = capacity`.
    pub fn isolated_time_s(&self, bytes_out: &[f64], bytes_in: &[f64]) -> f64 {
        let up = bytes_out
            .iter()
            .zip(&self.up_bytes_per_s)
            .map(|(b, c)| b / c);
        let down = bytes_in
            .iter()
            .zip(&self.down_bytes_per_s)
            .map(|(b, c)| b / c);
        up.chain(down).fold(0.0, f64::max)
    }
}
