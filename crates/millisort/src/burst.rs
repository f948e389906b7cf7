//! One timed sort as a flash burst: every rank generates its records (outside the timed
//! region), the ranks agree on a start a little in the future (`Group::start_at`), sort, note
//! their end on the wall clock, and then, untimed, rank 0 gathers every rank's phases, end
//! time, partition size and validation part and combines them.

use std::time::Duration;

use coflowkit_group::{unix_ns, GATHER_K};
use coflowkit_sortdata::{generate, RecordKind, Summary};
use serde::Serialize;

use crate::bucket::excess;
use crate::phases::{PhaseStats, PHASES};
use crate::records::Block;
use crate::sort::MilliSort;
use crate::validate::{self, Depth, Part, Validation};
use crate::MilliSortError;
use coflowkit_group::Counted;

#[derive(Clone, Debug)]
pub struct BurstOptions {
    pub per_rank: u64,
    pub kind: RecordKind,
    /// Lead time of the start broadcast.
    pub margin: Duration,
    /// `None`: no validation.
    pub validate: Option<Depth>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PhaseRow {
    pub mean_ms: f64,
    pub max_ms: f64,
    /// Over all ranks.
    pub messages: u64,
    pub bytes: u64,
}

/// What rank 0 learns about one run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub records: u64,
    pub ranks: usize,
    /// From the agreed start to the last rank's end (wall clocks).
    pub wall_ms: f64,
    /// Latest start over the ranks (the start broadcast arrived after the margin).
    pub max_late_ms: f64,
    pub phases: Vec<(String, PhaseRow)>,
    pub messages: u64,
    pub bytes: u64,
    pub partition_sizes: Vec<u64>,
    pub partition_excess: f64,
    pub validation: Option<Validation>,
}

fn concat(mut a: Vec<u8>, b: Vec<u8>) -> Vec<u8> {
    a.extend(b);
    a
}

/// Run one sort on every rank; rank 0 gets `Some(report)`.
pub fn run(
    ms: &mut MilliSort,
    counted: &Counted,
    opts: &BurstOptions,
) -> Result<Option<Report>, MilliSortError> {
    let (me, m) = (ms.world().rank(), ms.world().size());
    let n = usize::try_from(opts.per_rank)
        .ok()
        .filter(|&n| n <= u32::MAX as usize)
        .ok_or_else(|| {
            MilliSortError::BadOption(format!(
                "{} records per rank: at most 2^32 - 1",
                opts.per_rank
            ))
        })?;
    let records = generate(me as u128 * n as u128, n, opts.kind);
    let input_summary = match opts.validate {
        Some(_) => Summary::of(&records),
        None => Summary::default(),
    };
    let input = Block::from_records(&records, me as u16);
    drop(records);
    let start = ms.world().start_at(opts.margin)?;
    let out = ms.run(input, counted)?;
    let end = unix_ns();
    // Untimed from here on.
    let part = match opts.validate {
        Some(d) => validate::check(&input_summary, &out.block, opts.per_rank, opts.kind, d),
        None => validate::check(
            &Summary::default(),
            &Block::default(),
            0,
            opts.kind,
            Depth::Sums,
        ),
    };
    let mut mine = out.stats.encode();
    for v in [end, start.late.as_nanos() as u64, out.block.len() as u64] {
        mine.extend_from_slice(&v.to_le_bytes());
    }
    mine.extend(part.encode());
    let per = mine.len();
    let all = ms.world().gather(0, mine, GATHER_K, concat)?;
    let Some(all) = all else { return Ok(None) };
    if all.len() != per * m {
        return Err(MilliSortError::Malformed {
            from: 0,
            what: "run report",
        });
    }
    let mut stats = Vec::with_capacity(m);
    let (mut last_end, mut late, mut sizes, mut parts) = (0u64, 0u64, Vec::new(), Vec::new());
    for (r, c) in all.chunks_exact(per).enumerate() {
        let bad = MilliSortError::Malformed {
            from: r,
            what: "run report",
        };
        let u = |at: usize| u64::from_le_bytes(c[at..at + 8].try_into().expect("8"));
        let s = PhaseStats::decode(&c[..PhaseStats::ENCODED_LEN]).ok_or(bad)?;
        let o = PhaseStats::ENCODED_LEN;
        last_end = last_end.max(u(o));
        late = late.max(u(o + 8));
        sizes.push(u(o + 16));
        parts.push(Part::decode(&c[o + 24..]).ok_or(MilliSortError::Malformed {
            from: r,
            what: "validation part",
        })?);
        stats.push(s);
    }
    let phases = PHASES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let ns: Vec<u64> = stats.iter().map(|s| s.ns[i]).collect();
            let row = PhaseRow {
                mean_ms: ns.iter().sum::<u64>() as f64 / m as f64 / 1e6,
                max_ms: *ns.iter().max().expect("m >= 1") as f64 / 1e6,
                messages: stats.iter().map(|s| s.messages[i]).sum(),
                bytes: stats.iter().map(|s| s.bytes[i]).sum(),
            };
            (name.to_string(), row)
        })
        .collect::<Vec<_>>();
    Ok(Some(Report {
        records: opts.per_rank * m as u64,
        ranks: m,
        wall_ms: last_end.saturating_sub(start.unix_ns) as f64 / 1e6,
        max_late_ms: late as f64 / 1e6,
        messages: phases.iter().map(|(_, p)| p.messages).sum(),
        bytes: phases.iter().map(|(_, p)| p.bytes).sum(),
        phases,
        partition_excess: excess(&sizes),
        partition_sizes: sizes,
        validation: opts.validate.map(|d| validate::combine(&parts, d)),
    }))
}
