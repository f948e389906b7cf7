//! The coflow bins of the Varys and Aalo evaluations: short if the longest flow is under 5 MB,
//! narrow if the coflow has at most 50 flows.

use serde::{Deserialize, Serialize};

use crate::coflow::Coflow;
use crate::units::MB;

/// Longest flow strictly below this is *short*.
pub const SHORT_LENGTH_BYTES: f64 = 5.0 * MB;
/// At most this many flows is *narrow*.
pub const NARROW_WIDTH: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Bin {
    /// Bin 1: short and narrow.
    SN,
    /// Bin 2: long and narrow.
    LN,
    /// Bin 3: short and wide.
    SW,
    /// Bin 4: long and wide.
    LW,
}

impl Bin {
    pub const ALL: [Bin; 4] = [Bin::SN, Bin::LN, Bin::SW, Bin::LW];

    pub fn of(coflow: &Coflow) -> Bin {
        let short = coflow.length_bytes() < SHORT_LENGTH_BYTES;
        let narrow = coflow.width() <= NARROW_WIDTH;
        match (short, narrow) {
            (true, true) => Bin::SN,
            (false, true) => Bin::LN,
            (true, false) => Bin::SW,
            (false, false) => Bin::LW,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Bin::SN => "SN",
            Bin::LN => "LN",
            Bin::SW => "SW",
            Bin::LW => "LW",
        }
    }
}
