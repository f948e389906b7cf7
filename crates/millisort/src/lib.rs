//! MilliSort (Li, Park, Ousterhout, NSDI'21; spec millisort.md §2, §8.3): the pure
//! partitioning (regular sampling, one- and two-level, naive and weighted splitters, partition
//! excess) and the distributed sort over the group library.

pub mod bucket;
pub mod burst;
mod error;
pub mod excess;
pub mod key;
pub mod merge;
pub mod one_level;
pub mod phases;
pub mod pivot;
pub mod records;
pub mod rule;
pub mod sample;
pub mod sort;
pub mod two_level;
pub mod validate;

pub use error::MilliSortError;
pub use pivot::{Pivot, Tag, Totals};
pub use rule::Rule;
