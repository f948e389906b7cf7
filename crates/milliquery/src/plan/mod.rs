//! The per-rank steps of the three plans (spec millisort.md §3.3), pure functions over rows
//! and message bytes; `crate::drive` calls them around the collectives. Decoders return `None`
//! on a malformed message and the driver names its sender.

pub mod q1;
pub mod q2;
pub mod q3;
