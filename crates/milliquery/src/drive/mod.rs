//! The drivers: each query's plan as the collectives between the pure steps of `crate::plan`,
//! timed per phase, then a gather of every rank's numbers to rank 0 (outside the timed
//! region), which builds the report.

mod q1;
mod q2;
mod q3;
mod report;

use std::path::Path;
use std::time::{Duration, Instant};

use coflowkit_group::{Group, ShuffleProto, GATHER_K};

pub use report::{Balance, PhaseTime, QueryReport};

use crate::tablet::{load_q1, load_q2, load_q3, Q1Rows, Q2Rows, Q3Rows};
use crate::QueryError;
use coflowkit_group::Counted;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    Q1,
    Q2,
    Q3,
}

impl Query {
    pub fn parse(s: &str) -> Result<Query, QueryError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "q1" => Ok(Query::Q1),
            "q2" => Ok(Query::Q2),
            "q3" => Ok(Query::Q3),
            _ => Err(QueryError::BadArgument(format!(
                "unknown query `{s}` (expected q1, q2 or q3)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Query::Q1 => "q1",
            Query::Q2 => "q2",
            Query::Q3 => "q3",
        }
    }
}

/// Spec §3.3 "Hot keys": the original did nothing about them. `Combine` pre-aggregates
/// before a shuffle keyed by a possibly hot key: Q2 counts its own addresses and ships
/// (address, count); Q3 dedupes its own (repo, author) rows before shuffle 1. Q1 has no
/// shuffle, and Q3's pre-aggregation before shuffle 3 is on in both modes (the original did it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HotKeys {
    Off,
    Combine,
}

impl HotKeys {
    pub fn parse(s: &str) -> Result<HotKeys, QueryError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Ok(HotKeys::Off),
            "combine" => Ok(HotKeys::Combine),
            _ => Err(QueryError::BadArgument(format!(
                "unknown hot-key handling `{s}` (expected off or combine)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HotKeys::Off => "off",
            HotKeys::Combine => "combine",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    /// The protocol of every shuffle.
    pub proto: ShuffleProto,
    pub hot_keys: HotKeys,
    /// Seed of the partitioning hash.
    pub seed: u64,
    /// Gather tree radix (spec: 6).
    pub gather_k: u32,
    /// Lead time of the synchronised start (`Group::start_at`), as MilliSort's.
    pub start_margin: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            proto: ShuffleProto::parse("grpf").expect("a known protocol"),
            hot_keys: HotKeys::Off,
            seed: 1,
            gather_k: GATHER_K,
            start_margin: Duration::from_millis(20),
        }
    }
}

/// This rank's tablets of the queries it will run, loaded before any timing.
#[derive(Debug, Default, Clone)]
pub struct Data {
    pub q1: Option<Q1Rows>,
    pub q2: Option<Q2Rows>,
    pub q3: Option<Q3Rows>,
}

impl Data {
    pub fn load(
        dir: &Path,
        rank: usize,
        ranks: usize,
        queries: &[Query],
    ) -> Result<Data, QueryError> {
        let mut d = Data::default();
        for q in queries {
            match q {
                Query::Q1 if d.q1.is_none() => d.q1 = Some(load_q1(dir, rank, ranks)?),
                Query::Q2 if d.q2.is_none() => d.q2 = Some(load_q2(dir, rank, ranks)?),
                Query::Q3 if d.q3.is_none() => d.q3 = Some(load_q3(dir, rank, ranks)?),
                _ => {}
            }
        }
        Ok(d)
    }
}

/// One rank's numbers for one run of a query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankStats {
    pub wall_ms: f64,
    pub phases: Vec<(String, f64)>,
    /// Rows per step: the input, what each shuffle delivered here, the join's output.
    pub rows: Vec<(String, u64)>,
    pub messages: u64,
    pub bytes: u64,
}

/// Phase times: each `lap` closes the phase that began at the previous one.
pub(crate) struct Laps {
    last: Instant,
    pub phases: Vec<(String, f64)>,
    pub rows: Vec<(String, u64)>,
}

impl Laps {
    fn new(t0: Instant) -> Laps {
        Laps {
            last: t0,
            phases: Vec::new(),
            rows: Vec::new(),
        }
    }

    fn lap(&mut self, name: &str) {
        let now = Instant::now();
        self.phases
            .push((name.into(), (now - self.last).as_secs_f64() * 1e3));
        self.last = now;
    }

    fn rows(&mut self, name: &str, n: u64) {
        self.rows.push((name.into(), n));
    }
}

/// A gather whose combine may find a malformed message: the error comes after the gather.
pub(crate) fn gather_merge(
    g: &mut Group,
    mine: Vec<u8>,
    k: u32,
    merge: fn(&[u8], &[u8]) -> Option<Vec<u8>>,
    what: &'static str,
) -> Result<Option<Vec<u8>>, QueryError> {
    let mut bad = false;
    let got = g.gather(0, mine, k, |a, b| match merge(&a, &b) {
        Some(v) => v,
        None => {
            bad = true;
            Vec::new()
        }
    })?;
    if bad {
        return Err(QueryError::BadMerge { what });
    }
    Ok(got)
}

/// Runs one query on this rank: a synchronised start, the timed plan, then the report's gather. Rank 0
/// gets `Some(report)`.
pub fn run_query(
    g: &mut Group,
    counter: &Counted,
    query: Query,
    data: &Data,
    opt: &Options,
) -> Result<Option<QueryReport>, QueryError> {
    let missing = || QueryError::BadArgument(format!("{} was not loaded", query.name()));
    // Every rank starts at one agreed instant (a barrier would let them go at different
    // times); the start broadcast's own messages are counted before the timed region.
    let start = g.start_at(opt.start_margin)?;
    let (m0, b0) = counter.sent();
    let t0 = start.instant;
    let mut laps = Laps::new(t0);
    let answer = match query {
        Query::Q1 => q1::run(g, data.q1.as_ref().ok_or_else(missing)?, opt, &mut laps)?,
        Query::Q2 => q2::run(g, data.q2.as_ref().ok_or_else(missing)?, opt, &mut laps)?,
        Query::Q3 => q3::run(g, data.q3.as_ref().ok_or_else(missing)?, opt, &mut laps)?,
    };
    let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (m1, b1) = counter.sent();
    let stats = RankStats {
        wall_ms,
        phases: laps.phases,
        rows: laps.rows,
        messages: m1 - m0,
        bytes: b1 - b0,
    };
    report::collect(g, query, answer, stats, opt)
}
