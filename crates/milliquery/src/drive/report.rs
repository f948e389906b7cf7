//! Rank 0's report of one query run: the answer, the slowest rank's wall time, each phase's
//! mean and max over ranks, traffic summed over ranks, and the balance of every shuffle.

use std::collections::BTreeMap;

use coflowkit_group::Group;
use serde::Serialize;

use super::{Options, Query, RankStats};
use crate::codec::{Reader, Writer};
use crate::rows::Answer;
use crate::QueryError;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseTime {
    pub mean_ms: f64,
    pub max_ms: f64,
    /// With max_ms, the max/min skew MilliSort's Table 4 reports.
    pub min_ms: f64,
}

/// Rows one step handled on each rank (index = rank).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Balance {
    pub name: String,
    pub rows_per_rank: Vec<u64>,
    /// max / mean (1 when every rank had nothing).
    pub max_over_mean: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryReport {
    pub query: &'static str,
    pub ranks: usize,
    pub rows: Answer,
    /// The slowest rank's time from leaving the start barrier to its last step.
    pub wall_ms: f64,
    pub phases: BTreeMap<String, PhaseTime>,
    /// Messages and payload bytes sent over all ranks in the timed region.
    pub messages: u64,
    pub bytes: u64,
    /// The largest `max_over_mean` over the query's shuffles (rows received per rank); for
    /// Q1, which has no shuffle, that of its input rows.
    pub max_over_mean_rows: f64,
    /// Input rows, rows delivered by each shuffle, join output rows: per rank.
    pub balance: Vec<Balance>,
    pub input_rows: u64,
    pub protocol: String,
    pub hot_keys: &'static str,
}

fn encode(s: &RankStats) -> Vec<u8> {
    let mut w = Writer::default();
    w.f64(s.wall_ms);
    w.u64(s.messages);
    w.u64(s.bytes);
    w.u32(s.phases.len() as u32);
    for (n, t) in &s.phases {
        w.str(n);
        w.f64(*t);
    }
    w.u32(s.rows.len() as u32);
    for (n, c) in &s.rows {
        w.str(n);
        w.u64(*c);
    }
    // Framed, so the gather's concatenation splits back into ranks.
    let mut framed = Writer::default();
    framed.u32(w.0.len() as u32);
    framed.0.extend(w.0);
    framed.0
}

fn decode_all(bytes: &[u8]) -> Option<Vec<RankStats>> {
    let mut outer = Reader::new(bytes);
    let mut out = Vec::new();
    while !outer.is_empty() {
        let n = outer.u32()? as usize;
        let mut r = Reader::new(outer.take(n)?);
        let mut s = RankStats {
            wall_ms: r.f64()?,
            messages: r.u64()?,
            bytes: r.u64()?,
            ..Default::default()
        };
        for _ in 0..r.u32()? {
            s.phases.push((r.str()?.to_string(), r.f64()?));
        }
        for _ in 0..r.u32()? {
            s.rows.push((r.str()?.to_string(), r.u64()?));
        }
        out.push(s);
    }
    Some(out)
}

pub fn max_over_mean(v: &[u64]) -> f64 {
    let sum: u64 = v.iter().sum();
    if sum == 0 || v.is_empty() {
        return 1.0;
    }
    let max = *v.iter().max().expect("non-empty") as f64;
    max / (sum as f64 / v.len() as f64)
}

/// Builds the report from every rank's stats (in rank order) and the root's answer.
pub fn build(
    query: Query,
    answer: Answer,
    all: &[RankStats],
    opt: &Options,
) -> Result<QueryReport, QueryError> {
    let m = all.len();
    let shape = |s: &RankStats| {
        (
            s.phases.iter().map(|p| p.0.clone()).collect::<Vec<_>>(),
            s.rows.iter().map(|p| p.0.clone()).collect::<Vec<_>>(),
        )
    };
    let first = shape(&all[0]);
    if all.iter().any(|s| shape(s) != first) {
        return Err(QueryError::BadMerge {
            what: "ranks reported different phases",
        });
    }
    let mut phases = BTreeMap::new();
    for (i, name) in first.0.iter().enumerate() {
        let t: Vec<f64> = all.iter().map(|s| s.phases[i].1).collect();
        phases.insert(
            name.clone(),
            PhaseTime {
                mean_ms: t.iter().sum::<f64>() / m as f64,
                max_ms: t.iter().copied().fold(0.0, f64::max),
                min_ms: t.iter().copied().fold(f64::INFINITY, f64::min),
            },
        );
    }
    let balance: Vec<Balance> = first
        .1
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let v: Vec<u64> = all.iter().map(|s| s.rows[i].1).collect();
            Balance {
                name: name.clone(),
                max_over_mean: max_over_mean(&v),
                rows_per_rank: v,
            }
        })
        .collect();
    let shuffles: Vec<f64> = balance
        .iter()
        .filter(|b| b.name.starts_with("shuffle"))
        .map(|b| b.max_over_mean)
        .collect();
    let max_over_mean_rows = if shuffles.is_empty() {
        balance
            .iter()
            .find(|b| b.name == "input")
            .map_or(1.0, |b| b.max_over_mean)
    } else {
        shuffles.into_iter().fold(0.0, f64::max)
    };
    let input_rows = balance
        .iter()
        .find(|b| b.name == "input")
        .map_or(0, |b| b.rows_per_rank.iter().sum());
    Ok(QueryReport {
        query: query.name(),
        ranks: m,
        rows: answer,
        wall_ms: all.iter().map(|s| s.wall_ms).fold(0.0, f64::max),
        phases,
        messages: all.iter().map(|s| s.messages).sum(),
        bytes: all.iter().map(|s| s.bytes).sum(),
        max_over_mean_rows,
        balance,
        input_rows,
        protocol: opt.proto.name(),
        hot_keys: opt.hot_keys.name(),
    })
}

/// Gathers every rank's stats to rank 0 (untimed) and builds the report there.
pub fn collect(
    g: &mut Group,
    query: Query,
    answer: Option<Answer>,
    stats: RankStats,
    opt: &Options,
) -> Result<Option<QueryReport>, QueryError> {
    let got = g.gather(0, encode(&stats), opt.gather_k, |mut a, b| {
        a.extend(b);
        a
    })?;
    let Some(bytes) = got else { return Ok(None) };
    let all = decode_all(&bytes).ok_or(QueryError::BadMerge { what: "rank stats" })?;
    if all.len() != g.size() {
        return Err(QueryError::BadMerge {
            what: "stats from a wrong number of ranks",
        });
    }
    let answer = answer.ok_or(QueryError::BadMerge {
        what: "no answer at rank 0",
    })?;
    build(query, answer, &all, opt).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_round_trip_through_the_concatenating_gather() {
        let s = |w: f64, n: u64| RankStats {
            wall_ms: w,
            phases: vec![("scan".into(), w / 2.0), ("gather".into(), w / 2.0)],
            rows: vec![("input".into(), n)],
            messages: n,
            bytes: 10 * n,
        };
        let mut cat = encode(&s(2.0, 3));
        cat.extend(encode(&s(4.0, 9)));
        let all = decode_all(&cat).unwrap();
        assert_eq!(all, vec![s(2.0, 3), s(4.0, 9)]);
        let r = build(Query::Q1, Answer::Q1(vec![]), &all, &Options::default()).unwrap();
        assert_eq!(r.wall_ms, 4.0);
        assert_eq!(
            r.phases["scan"],
            PhaseTime {
                mean_ms: 1.5,
                max_ms: 2.0,
                min_ms: 1.0
            }
        );
        assert_eq!((r.messages, r.bytes, r.input_rows), (12, 120, 12));
        assert_eq!(r.max_over_mean_rows, 1.5);
        assert_eq!(max_over_mean(&[0, 0]), 1.0);
    }
}
