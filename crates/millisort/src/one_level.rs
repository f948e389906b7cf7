//! One-level partitioning (spec §8.3.5): every rank's pivots merged in one place, the
//! splitters chosen there.

use crate::merge::merge_all;
use crate::pivot::{Pivot, Totals};
use crate::rule::{assemble, select_in_range, Rule};
use crate::MilliSortError;

/// The `m - 1` splitters from all pivots already merged into global order.
pub fn splitters_of_sorted(
    sorted: &[Pivot],
    m: usize,
    rule: Rule,
) -> Result<Vec<u128>, MilliSortError> {
    if sorted.is_empty() && m > 1 {
        return Err(MilliSortError::NoPivots);
    }
    let parts = select_in_range(sorted, Totals::default(), Totals::of(sorted), m, rule);
    assemble(m, &parts)
}

/// The splitters for `lists.len()` ranks from each rank's sorted pivots.
pub fn splitters(lists: &[Vec<Pivot>], rule: Rule) -> Result<Vec<u128>, MilliSortError> {
    splitters_of_sorted(&merge_all(lists), lists.len(), rule)
}
