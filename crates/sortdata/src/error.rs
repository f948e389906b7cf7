//! What can be wrong with records or summaries read from outside.

use crate::{RECORD_LEN, SUMMARY_LEN};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// The input ends inside a record.
    #[error(
        "partial record at the end: record {record} has {bytes} of {RECORD_LEN} bytes \
         (the length is not a multiple of {RECORD_LEN})"
    )]
    PartialRecord { record: u64, bytes: usize },
    /// A summary file ends inside a summary.
    #[error(
        "partial partition summary at the end: summary {summary} has {bytes} of {SUMMARY_LEN} \
         bytes (the length is not a multiple of {SUMMARY_LEN})"
    )]
    PartialSummary { summary: u64, bytes: usize },
    /// A summary counts 2^64 or more of something.
    #[error("the summary's {field} count does not fit in 64 bits")]
    CountTooLarge { field: &'static str },
    /// Combining summaries would count 2^64 or more of something.
    #[error("the combined {field} count passes 2^64 - 1")]
    CountOverflow { field: &'static str },
}
