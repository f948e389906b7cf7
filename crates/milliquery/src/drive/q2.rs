//! Q2: partition, shuffle, count, local top 10, gather with a top-10 merge.

use coflowkit_group::Group;

use super::{gather_merge, HotKeys, Laps, Options};
use crate::plan::q2;
use crate::rows::Answer;
use crate::tablet::Q2Rows;
use crate::QueryError;

pub(super) fn run(
    g: &mut Group,
    rows: &Q2Rows,
    opt: &Options,
    laps: &mut Laps,
) -> Result<Option<Answer>, QueryError> {
    let m = g.size();
    laps.rows("input", rows.0.len() as u64);
    let combine = opt.hot_keys == HotKeys::Combine;
    let out = if combine {
        q2::partition_combined(&rows.0, m, opt.seed)
    } else {
        q2::partition_raw(&rows.0, m, opt.seed)
    };
    laps.lap("partition");
    let got = g.alltoallv(out, &opt.proto)?;
    laps.lap("shuffle");
    let mut received = 0;
    let counts = if combine {
        let (mut raw, mut pairs) = (Vec::new(), Vec::new());
        for (from, b) in got.iter().enumerate() {
            received +=
                q2::decode_combined(b, &mut raw, &mut pairs).ok_or(QueryError::BadMessage {
                    from,
                    what: "q2 shuffle",
                })?;
        }
        pairs.extend(q2::count(raw));
        q2::sum_pairs(pairs)
    } else {
        let mut ips = Vec::new();
        for (from, b) in got.iter().enumerate() {
            received += q2::decode_raw(b, &mut ips).ok_or(QueryError::BadMessage {
                from,
                what: "q2 shuffle",
            })?;
        }
        q2::count(ips)
    };
    laps.rows("shuffle", received);
    laps.lap("count");
    let top = q2::encode_top(&q2::local_top(counts));
    laps.lap("top");
    let got = gather_merge(g, top, opt.gather_k, q2::merge_top, "q2 top 10")?;
    laps.lap("gather");
    got.map(|b| {
        q2::finish(&b)
            .map(Answer::Q2)
            .ok_or(QueryError::BadMerge { what: "q2 top 10" })
    })
    .transpose()
}
