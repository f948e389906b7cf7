//! The distributed sort over the group library (spec §2, §8.3): one `MilliSort` per process,
//! built once (its sub-groups keep their operation sequence across runs), `run` per sort.
//!
//! Phases, in order, each charged to its `Phase`:
//! 1. local sort of the composite keys (rayon); the values are moved by index on a second
//!    thread while partitioning runs (spec §2.7), joined before the record shuffle;
//! 2. pivot gather: regular-sampling pivots merged on arrival up a gather tree, to the pivot
//!    sorter of each group of r (two levels) or to rank 0 (one level);
//! 3. super-pivots: pivot sorters' level-2 pivots merged at the coordinator, which cuts them
//!    into bucket bounds and broadcasts them with the pivot totals;
//! 4. pivot bucket sort: each pivot sorter cuts its pivots by the bounds;
//! 5. pivot shuffle among pivot sorters, each message with its local rank;
//! 6. splitter selection, by each pivot sorter for its range (or rank 0 for all);
//! 7. splitter broadcast: all-gather among pivot sorters, then a broadcast to each group
//!    (or one broadcast from rank 0);
//! 8. record shuffle: keys then values of each bucket in one message per destination, through
//!    `alltoallv` under the chosen protocol;
//! 9. k-way merge of the received key runs: after the shuffle by default (`alltoallv` returns
//!    all messages at once, so the merge cannot start on the first arrivals); with
//!    `overlap_merge` the keys travel in a first all-to-all and are merged on a second thread
//!    while the values travel in a second one;
//! 10. values moved into the merged order by (run, index).

use std::cell::RefCell;

use coflowkit_group::{Group, ShuffleProto};
use coflowkit_sortdata::VALUE_LEN;

use crate::bucket;
use crate::merge::{kway_order, merge_two};
use crate::phases::{Phase, PhaseStats, Recorder};
use crate::pivot::{self, Totals};
use crate::records::{rearrange_by_index, Block};
use crate::rule::{assemble, select_in_range, Rule};
use crate::sample::regular_pivots;
use crate::two_level::{self, Roles};
use crate::{one_level, MilliSortError};
use coflowkit_group::Counted;

#[derive(Clone, Debug)]
pub struct Config {
    /// 1 or 2.
    pub levels: u8,
    /// Reduction factor of two-level partitioning.
    pub r: usize,
    pub rule: Rule,
    /// Pivots per rank (s·M); `None`: M (s = 1, as in the paper's experiments).
    pub pivots: Option<usize>,
    /// The record shuffle's protocol.
    pub protocol: ShuffleProto,
    /// The pivot shuffle's protocol (small messages among pivot sorters).
    pub pivot_protocol: ShuffleProto,
    pub gather_k: u32,
    pub bcast_k: u32,
    /// Threads of the local sort (1: a sequential pdqsort).
    pub threads: usize,
    /// Shuffle the keys first, then the values while a second thread merges the keys (two
    /// all-to-alls instead of one; `alltoallv` returns all messages at once, so this is the
    /// only overlap of merge and shuffle the group library allows).
    pub overlap_merge: bool,
}

/// What one rank ends a run with.
pub struct Outcome {
    pub block: Block,
    pub stats: PhaseStats,
    /// The splitters used (m - 1).
    pub splitters: Vec<u128>,
}

pub struct MilliSort {
    world: Group,
    /// Two levels: this rank's group of r, its pivot sorter first.
    local: Option<Group>,
    /// Two levels, at pivot sorters: the group of pivot sorters.
    sorters: Option<Group>,
    roles: Option<Roles>,
    cfg: Config,
    pool: Option<rayon::ThreadPool>,
    last_splitters: Vec<u128>,
}

/// A merge-on-arrival combine for encoded pivot lists; a malformed list is remembered.
fn merge_encoded(bad: &RefCell<bool>) -> impl FnMut(Vec<u8>, Vec<u8>) -> Vec<u8> + '_ {
    move |a, b| match (pivot::decode(&a), pivot::decode(&b)) {
        (Some(x), Some(y)) => {
            let mut out = Vec::new();
            pivot::encode(&merge_two(&x, &y), &mut out);
            out
        }
        _ => {
            *bad.borrow_mut() = true;
            a
        }
    }
}

fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// `count u32 | keys (16 B each) | values (90 B each)`.
fn encode_bucket(keys: &[u128], values: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + keys.len() * (16 + VALUE_LEN));
    out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for k in keys {
        out.extend_from_slice(&k.to_le_bytes());
    }
    out.extend_from_slice(values);
    out
}

/// One received run: its keys and the bytes of their values.
type Run<'a> = (Vec<u128>, &'a [u8]);

fn decode_runs(got: &[Vec<u8>], with_values: bool) -> Result<Vec<Run<'_>>, MilliSortError> {
    got.iter()
        .enumerate()
        .map(|(src, b)| {
            decode_bucket(b, with_values).ok_or(MilliSortError::Malformed {
                from: src,
                what: "record shuffle message",
            })
        })
        .collect()
}

/// Keys and the values after them (the values may be absent: `overlap_merge` sends them apart).
fn decode_bucket(b: &[u8], with_values: bool) -> Option<(Vec<u128>, &[u8])> {
    let n = u32::from_le_bytes(b.get(0..4)?.try_into().ok()?) as usize;
    if b.len() != 4 + n * (16 + if with_values { VALUE_LEN } else { 0 }) {
        return None;
    }
    let keys = b[4..4 + 16 * n]
        .chunks_exact(16)
        .map(|c| u128::from_le_bytes(c.try_into().expect("16")))
        .collect();
    Some((keys, &b[4 + 16 * n..]))
}

impl MilliSort {
    /// `epoch` tells apart the sub-groups of successive `MilliSort`s over one world (their
    /// operation ids must never repeat): every rank passes the same, a new one per instance.
    pub fn new(world: Group, cfg: Config, epoch: u32) -> Result<MilliSort, MilliSortError> {
        let m = world.size();
        if m > crate::key::MAX_RANKS {
            return Err(MilliSortError::BadOption(format!(
                "{m} ranks: the composite key holds at most {}",
                crate::key::MAX_RANKS
            )));
        }
        let (mut local, mut sorters, mut roles) = (None, None, None);
        match cfg.levels {
            1 => {}
            2 => {
                let ro = Roles::new(m, cfg.r)?;
                let me = world.rank();
                let grp: Vec<usize> = ro.group(ro.sorter_of(me)).collect();
                local = Some(world.subgroup_tagged(&grp, 2 * epoch + 1)?);
                if ro.is_sorter(me) {
                    sorters = Some(world.subgroup_tagged(&ro.sorter_ranks(), 2 * epoch + 2)?);
                }
                roles = Some(ro);
            }
            l => {
                return Err(MilliSortError::BadOption(format!(
                    "--levels {l}: 1 or 2 (three levels were never implemented, spec §2.5)"
                )))
            }
        }
        let pool = if cfg.threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(cfg.threads)
                    .build()
                    .map_err(|e| MilliSortError::BadOption(format!("sort threads: {e}")))?,
            )
        } else {
            None
        };
        Ok(MilliSort {
            world,
            local,
            sorters,
            roles,
            cfg,
            pool,
            last_splitters: Vec::new(),
        })
    }

    pub fn world(&mut self) -> &mut Group {
        &mut self.world
    }

    /// The world back (the sub-groups are dropped).
    pub fn into_world(self) -> Group {
        self.world
    }

    /// The splitters of the last run.
    pub fn last_splitters(&self) -> &[u128] {
        &self.last_splitters
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    fn pivots_per_rank(&self) -> usize {
        self.cfg.pivots.unwrap_or(self.world.size()).max(1)
    }

    /// Sort this rank's share; every rank calls it together. `counted` is the exchange under
    /// the world (for the per-phase traffic).
    pub fn run(&mut self, input: Block, counted: &Counted) -> Result<Outcome, MilliSortError> {
        let mut rec = Recorder::start(counted);
        let Block { mut keys, values } = input;
        match &self.pool {
            Some(p) => p.install(|| {
                use rayon::slice::ParallelSliceMut;
                keys.par_sort_unstable()
            }),
            None => keys.sort_unstable(),
        }
        rec.mark(Phase::LocalSort);
        let keys = keys;
        let (splitters, sorted_values) = std::thread::scope(|sc| {
            let values_job = sc.spawn(|| rearrange_by_index(&keys, &values));
            let splitters = self.partition(&keys, &mut rec);
            // The wait for the moved values is charged to the record shuffle.
            let moved = values_job.join().expect("value rearrangement thread");
            splitters.map(|s| (s, moved))
        })?;
        // Record shuffle and merge.
        let ranges = bucket::ranges(&keys, &splitters);
        let vals =
            |r: &std::ops::Range<usize>| &sorted_values[r.start * VALUE_LEN..r.end * VALUE_LEN];
        // `values[r][offsets[r]..]` are run r's values (left in the received buffers: no copy).
        #[allow(clippy::type_complexity)]
        let (heads, values, offsets, order): (Vec<Vec<u128>>, Vec<Vec<u8>>, Vec<usize>, _) =
            if self.cfg.overlap_merge {
                // Keys first; then the values travel while a second thread merges the keys.
                let key_msgs = ranges
                    .iter()
                    .map(|r| encode_bucket(&keys[r.clone()], &[]))
                    .collect();
                let got = self.world.alltoallv(key_msgs, &self.cfg.protocol)?;
                let heads = decode_runs(&got, false)?
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect::<Vec<_>>();
                let value_msgs = ranges.iter().map(|r| vals(r).to_vec()).collect();
                drop(sorted_values);
                let (values, order) = std::thread::scope(|sc| {
                    let merging = sc.spawn(|| {
                        let runs: Vec<&[u128]> = heads.iter().map(|h| h.as_slice()).collect();
                        kway_order(&runs)
                    });
                    let values = self.world.alltoallv(value_msgs, &self.cfg.protocol);
                    rec.mark(Phase::RecordShuffle);
                    let order = merging.join().expect("merge thread");
                    values.map(|v| (v, order))
                })?;
                for (src, (v, h)) in values.iter().zip(&heads).enumerate() {
                    if v.len() != h.len() * VALUE_LEN {
                        return Err(MilliSortError::Malformed {
                            from: src,
                            what: "record shuffle values",
                        });
                    }
                }
                let offsets = vec![0; values.len()];
                (heads, values, offsets, order)
            } else {
                // One message per destination: its keys followed by their values.
                let msgs = ranges
                    .iter()
                    .map(|r| encode_bucket(&keys[r.clone()], vals(r)))
                    .collect();
                drop(sorted_values);
                let got = self.world.alltoallv(msgs, &self.cfg.protocol)?;
                rec.mark(Phase::RecordShuffle);
                let heads: Vec<Vec<u128>> = decode_runs(&got, true)?
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect();
                let offsets = heads.iter().map(|h| 4 + 16 * h.len()).collect();
                let runs: Vec<&[u128]> = heads.iter().map(|h| h.as_slice()).collect();
                let order = kway_order(&runs);
                (heads, got, offsets, order)
            };
        let out_keys: Vec<u128> = order
            .iter()
            .map(|&(r, i)| heads[r as usize][i as usize])
            .collect();
        rec.mark(Phase::Merge);
        let mut out_values = Vec::with_capacity(order.len() * VALUE_LEN);
        for &(r, i) in &order {
            let (r, i) = (r as usize, i as usize);
            let at = offsets[r] + i * VALUE_LEN;
            out_values.extend_from_slice(&values[r][at..at + VALUE_LEN]);
        }
        rec.mark(Phase::ValueRearrangement);
        self.last_splitters = splitters.clone();
        Ok(Outcome {
            block: Block {
                keys: out_keys,
                values: out_values,
            },
            stats: rec.stats,
            splitters,
        })
    }

    /// Phases 2-7: every rank ends with the m - 1 splitters.
    fn partition(
        &mut self,
        keys: &[u128],
        rec: &mut Recorder,
    ) -> Result<Vec<u128>, MilliSortError> {
        let (m, me) = (self.world.size(), self.world.rank());
        let rule = self.cfg.rule;
        let mine = regular_pivots(keys, self.pivots_per_rank(), rule, me as u32);
        let mut enc = Vec::new();
        pivot::encode(&mine, &mut enc);
        let bad = RefCell::new(false);
        let malformed = |what| MilliSortError::Malformed { from: 0, what };
        if self.cfg.levels == 1 {
            let merged = self
                .world
                .gather(0, enc, self.cfg.gather_k, merge_encoded(&bad))?;
            rec.mark(Phase::PivotGather);
            let spl = match merged {
                Some(b) => {
                    let all = pivot::decode(&b)
                        .filter(|_| !*bad.borrow())
                        .ok_or(malformed("pivot list"))?;
                    let s = one_level::splitters_of_sorted(&all, m, rule)?;
                    encode_keys(&s)
                }
                None => Vec::new(),
            };
            rec.mark(Phase::SplitterSelection);
            let b = self.world.bcast(0, spl, self.cfg.bcast_k)?;
            rec.mark(Phase::SplitterBroadcast);
            return decode_keys(&b, m).ok_or(malformed("splitters"));
        }
        let roles = self.roles.expect("two levels have roles");
        let k = roles.sorters();
        let local = self.local.as_mut().expect("two levels have a local group");
        let merged = local.gather(0, enc, self.cfg.gather_k, merge_encoded(&bad))?;
        rec.mark(Phase::PivotGather);
        let mut spl_bytes = Vec::new();
        if let (Some(merged), Some(sorters)) = (merged, self.sorters.as_mut()) {
            let merged = pivot::decode(&merged)
                .filter(|_| !*bad.borrow())
                .ok_or(malformed("pivot list"))?;
            // Super-pivots: totals and level-2 pivots up a merging gather, bounds back down.
            let mut msg = Vec::new();
            let t = Totals::of(&merged);
            msg.extend_from_slice(&t.count.to_le_bytes());
            msg.extend_from_slice(&t.weight.to_le_bytes());
            pivot::encode(&two_level::level2_pivots(&merged, k), &mut msg);
            let combine = |a: Vec<u8>, b: Vec<u8>| {
                let (Some(ta), Some(tb)) = (decode_totals(&a), decode_totals(&b)) else {
                    *bad.borrow_mut() = true;
                    return a;
                };
                let mut out = Vec::new();
                let t = ta.plus(tb);
                out.extend_from_slice(&t.count.to_le_bytes());
                out.extend_from_slice(&t.weight.to_le_bytes());
                out.extend(merge_encoded(&bad)(a[16..].to_vec(), b[16..].to_vec()));
                out
            };
            let top = sorters.gather(0, msg, self.cfg.gather_k, combine)?;
            let down = match top {
                Some(top) => {
                    let level2 = pivot::decode(&top[16..])
                        .filter(|_| !*bad.borrow())
                        .ok_or(malformed("level-2 pivots"))?;
                    let mut out = top[..16].to_vec();
                    pivot::encode(&two_level::bucket_bounds(&level2, k), &mut out);
                    out
                }
                None => Vec::new(),
            };
            let down = sorters.bcast(0, down, self.cfg.bcast_k)?;
            let total = decode_totals(&down).ok_or(malformed("pivot totals"))?;
            let bounds = pivot::decode(&down[16..]).ok_or(malformed("bucket bounds"))?;
            rec.mark(Phase::SuperPivots);
            let pieces: Vec<Vec<u8>> = two_level::split(&merged, &bounds)
                .iter()
                .map(two_level::encode_piece)
                .collect();
            rec.mark(Phase::PivotBucketSort);
            let got = sorters.alltoallv(pieces, &self.cfg.pivot_protocol)?;
            rec.mark(Phase::PivotShuffle);
            let mut pieces = Vec::with_capacity(k);
            for (src, b) in got.iter().enumerate() {
                pieces.push(two_level::decode_piece(b).ok_or(MilliSortError::Malformed {
                    from: src,
                    what: "pivot shuffle piece",
                })?);
            }
            let (below, mine) = two_level::receive(&pieces);
            let mut parts = Vec::new();
            for (j, key) in select_in_range(&mine, below, total, m, rule) {
                parts.extend_from_slice(&(j as u64).to_le_bytes());
                parts.extend_from_slice(&key.to_le_bytes());
            }
            rec.mark(Phase::SplitterSelection);
            let all = sorters.allgather(parts)?;
            let mut chosen = Vec::new();
            for (src, b) in all.iter().enumerate() {
                if b.len() % 24 != 0 {
                    return Err(MilliSortError::Malformed {
                        from: src,
                        what: "splitter part",
                    });
                }
                for c in b.chunks_exact(24) {
                    let j = u64::from_le_bytes(c[..8].try_into().expect("8"));
                    chosen.push((
                        j as usize,
                        u128::from_le_bytes(c[8..].try_into().expect("16")),
                    ));
                }
            }
            spl_bytes = encode_keys(&assemble(m, &chosen)?);
        }
        let local = self.local.as_mut().expect("two levels have a local group");
        let b = local.bcast(0, spl_bytes, self.cfg.bcast_k)?;
        rec.mark(Phase::SplitterBroadcast);
        decode_keys(&b, m).ok_or(malformed("splitters"))
    }
}

fn decode_totals(b: &[u8]) -> Option<Totals> {
    Some(Totals {
        count: u64_at(b, 0)?,
        weight: u64_at(b, 8)?,
    })
}

fn encode_keys(ks: &[u128]) -> Vec<u8> {
    ks.iter().flat_map(|k| k.to_le_bytes()).collect()
}

fn decode_keys(b: &[u8], m: usize) -> Option<Vec<u128>> {
    if b.len() != 16 * m.saturating_sub(1) {
        return None;
    }
    Some(
        b.chunks_exact(16)
            .map(|c| u128::from_le_bytes(c.try_into().expect("16")))
            .collect(),
    )
}
