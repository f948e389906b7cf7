//! Q1: scan, gather with a summing merge. No shuffle.

use coflowkit_group::Group;

use super::{gather_merge, Laps, Options};
use crate::plan::q1;
use crate::rows::Answer;
use crate::tablet::Q1Rows;
use crate::QueryError;

pub(super) fn run(
    g: &mut Group,
    rows: &Q1Rows,
    opt: &Options,
    laps: &mut Laps,
) -> Result<Option<Answer>, QueryError> {
    laps.rows("input", rows.0.len() as u64);
    let mine = q1::encode(&q1::scan(&rows.0));
    laps.lap("scan");
    let got = gather_merge(g, mine, opt.gather_k, q1::merge, "q1 sums")?;
    laps.lap("gather");
    got.map(|b| {
        q1::finish(&b)
            .map(Answer::Q1)
            .ok_or(QueryError::BadMerge { what: "q1 sums" })
    })
    .transpose()
}
