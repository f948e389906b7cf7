//! Q3: shuffle 1 (commits by repo) and dedupe, shuffle 2 (languages by repo), join with
//! pre-aggregation, shuffle 3 by (lang, author) and sum, local top 100, top-100 gather.

use std::collections::HashMap;

use coflowkit_group::Group;

use super::{gather_merge, HotKeys, Laps, Options};
use crate::plan::q3;
use crate::rows::Answer;
use crate::tablet::Q3Rows;
use crate::QueryError;

pub(super) fn run(
    g: &mut Group,
    rows: &Q3Rows,
    opt: &Options,
    laps: &mut Laps,
) -> Result<Option<Answer>, QueryError> {
    let m = g.size();
    laps.rows("input", (rows.commits.len() + rows.languages.len()) as u64);
    let combine = opt.hot_keys == HotKeys::Combine;
    let out = q3::partition_commits(&rows.commits, m, opt.seed, combine);
    laps.lap("partition1");
    let got1 = g.alltoallv(out, &opt.proto)?;
    laps.lap("shuffle1");
    let mut commits = Vec::new();
    let mut n1 = 0;
    for (from, b) in got1.iter().enumerate() {
        n1 += q3::decode_commits(b, &mut commits).ok_or(QueryError::BadMessage {
            from,
            what: "q3 shuffle 1",
        })?;
    }
    laps.rows("shuffle1", n1);
    let authors = q3::dedupe(commits);
    laps.lap("dedupe");
    let out = q3::partition_languages(&rows.languages, m, opt.seed);
    laps.lap("partition2");
    let got2 = g.alltoallv(out, &opt.proto)?;
    laps.lap("shuffle2");
    let mut langs = Vec::new();
    let mut n2 = 0;
    for (from, b) in got2.iter().enumerate() {
        n2 += q3::decode_languages(b, &mut langs).ok_or(QueryError::BadMessage {
            from,
            what: "q3 shuffle 2",
        })?;
    }
    laps.rows("shuffle2", n2);
    let (sums, joined) = q3::join_preaggregate(&authors, &langs);
    laps.rows("join", joined);
    let out = q3::partition_sums(&sums, m, opt.seed);
    laps.lap("join");
    let got3 = g.alltoallv(out, &opt.proto)?;
    laps.lap("shuffle3");
    let mut agg = HashMap::new();
    let mut n3 = 0;
    for (from, b) in got3.iter().enumerate() {
        n3 += q3::add_sums(b, &mut agg).ok_or(QueryError::BadMessage {
            from,
            what: "q3 shuffle 3",
        })?;
    }
    laps.rows("shuffle3", n3);
    laps.lap("aggregate");
    let top = q3::encode_top(&q3::local_top(&agg));
    laps.lap("top");
    let got = gather_merge(g, top, opt.gather_k, q3::merge_top, "q3 top 100")?;
    laps.lap("gather");
    got.map(|b| {
        q3::finish(&b)
            .map(Answer::Q3)
            .ok_or(QueryError::BadMerge { what: "q3 top 100" })
    })
    .transpose()
}
