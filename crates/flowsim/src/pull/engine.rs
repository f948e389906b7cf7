//! The pull-based shuffle world: reduce tasks with a bounded number of fetchers pull map
//! outputs; whenever a fetcher is free it asks the shared BASHuffler policy
//! (`coflowkit_sched::select`) for a source. Rates of the running fetches are max-min fair over
//! uplinks and downlinks (the shared water-filling), piecewise constant between events; the next
//! event is the earliest fetch completion or job arrival. No time step.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use coflowkit_model::Fabric;
use coflowkit_sched::alloc::{Budget, Demand, WaterFill};
use coflowkit_sched::select::{
    ClusterState, FetchCache, Policy, SelectError, SelectOptions, Source,
};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::outcome::{JobOutcome, PullOutput, TaskOutcome};
use super::workload::{total_bytes, Job};

/// A fetch with at most this fraction of its size left is done (floating-point dust); fetches
/// due within this relative time of the earliest one finish at the same event.
const SAME: f64 = 1e-9;
/// At most this many points of the completion-ratio curve are kept.
const CURVE_POINTS: usize = 2000;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PullOptions {
    pub policy: Policy,
    /// Concurrent fetches per reduce task (Hadoop's `parallelcopies`, default 5).
    pub fetchers: usize,
    /// Sources pre-scheduled per request by the caller's cache (1 = none; §3.5).
    pub batch: usize,
    /// Seeds the policy's RNG (random picks, tie-breaks).
    pub seed: u64,
    /// Hadoop's rule: a node being fetched from by one of a task's fetchers is not offered to
    /// its other fetchers. Off by default (the paper's model allows it); needs `batch` 1.
    pub one_fetch_per_host: bool,
    pub select: SelectOptions,
}

impl Default for PullOptions {
    fn default() -> Self {
        PullOptions {
            policy: Policy::Pgss,
            fetchers: 5,
            batch: 1,
            seed: 1,
            one_fetch_per_host: false,
            select: SelectOptions::default(),
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum PullError {
    #[error(
        "job {job}: reduce task or map output on node {node}, but the cluster has {nodes} nodes"
    )]
    NodeOutOfRange { job: u64, node: u32, nodes: usize },
    #[error("job {job}: fetch of {bytes} bytes: sizes must be finite and non-negative")]
    BadSize { job: u64, bytes: f64 },
    #[error("job {job}: arrival {arrival_s} s must be finite and non-negative")]
    BadArrival { job: u64, arrival_s: f64 },
    #[error("every reduce task needs at least one fetcher")]
    NoFetchers,
    #[error(
        "one fetch per host needs a pre-scheduling batch of 1 (cached sources bypass the check)"
    )]
    ExclusiveWithBatch,
    #[error("node {node}: capacity {bytes_per_s} bytes/s must be positive and finite")]
    BadCapacity { node: usize, bytes_per_s: f64 },
    #[error("source selection: {0}")]
    Select(#[from] SelectError),
    #[error("stalled at t={time_s} s with {fetches} fetches running and none making progress")]
    Stalled { time_s: f64, fetches: usize },
}

/// One reduce task while it runs.
struct Task {
    job: usize,
    node: u32,
    start_s: f64,
    /// Outputs neither fetched, running nor cached, per source node.
    pending: Vec<Source>,
    /// Sizes of the outputs not yet started, per source node (popped from the back).
    sizes: Vec<(u32, Vec<f64>)>,
    cache: FetchCache,
    running: usize,
    /// Source of each running fetch (for the one-fetch-per-host rule).
    busy: Vec<u32>,
    left: usize,
    bytes: f64,
    finish_s: f64,
}

/// A running fetch.
struct Active {
    task: usize,
    src: u32,
    bytes: f64,
    left: f64,
}

/// How far a run has come, for progress output of long runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PullProgress {
    /// Simulated time, seconds.
    pub time_s: f64,
    pub fetches_done: u64,
    pub fetches: u64,
    /// Requests answered by the policy, and the max-min evaluations they ran (GSS and PGSS
    /// evaluate each candidate source: their cost).
    pub decisions: u64,
    pub evaluations: u64,
}

/// Simulate `jobs` pulling over `fabric` (capacities in bytes per second).
pub fn simulate_pull(
    fabric: &Fabric,
    jobs: &[Job],
    opts: &PullOptions,
) -> Result<PullOutput, PullError> {
    simulate_pull_observed(fabric, jobs, opts, |_| {})
}

/// Requests or events between two calls of the observer of [`simulate_pull_observed`].
pub const OBSERVE_EVERY: u64 = 64;

/// As [`simulate_pull`], calling `seen` every [`OBSERVE_EVERY`] requests to the policy and
/// every as many events with how far the run has come. The run reads no clock for it.
pub fn simulate_pull_observed(
    fabric: &Fabric,
    jobs: &[Job],
    opts: &PullOptions,
    mut seen: impl FnMut(PullProgress),
) -> Result<PullOutput, PullError> {
    validate(fabric, jobs, opts)?;
    let started = Instant::now();
    let fetches: u64 = (jobs.iter().flat_map(|j| &j.reducers))
        .map(|r| r.fetches.len() as u64)
        .sum();
    let mut fetches_done = 0u64;
    let mut requests = 0u64;
    let mut state = ClusterState::new(fabric.clone(), opts.seed, opts.select);
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| jobs[a].arrival_s.total_cmp(&jobs[b].arrival_s));

    let total = total_bytes(jobs);
    let mut tasks: Vec<Task> = Vec::new();
    let mut active: Vec<Active> = Vec::new();
    let mut wanting: VecDeque<usize> = VecDeque::new();
    // The full capacities, never taken from: the rates of an event read only the ports its
    // fetches touch (a reset per event cost O(N)).
    let budget = Budget::full(fabric);
    let mut group = vec![u32::MAX; fabric.ports()];
    let mut fill_work = 0u64;
    let mut fill = WaterFill::default();
    let mut demands: Vec<Demand> = Vec::new();
    let mut rates: Vec<f64> = Vec::new();
    let mut done: Vec<bool> = Vec::new();
    let mut next_job = 0;
    let mut t = order.first().map_or(0.0, |&j| jobs[j].arrival_s);
    let first_ready = t;
    let mut done_bytes = 0.0;
    let mut curve = vec![(t, 0.0)];
    let mut decisions = 0u64;
    let mut select_s = 0.0;
    let mut events = 0u64;
    let mut busy_integral = 0.0; // ∫ (sum of rates) dt

    loop {
        while next_job < order.len() && jobs[order[next_job]].arrival_s <= t {
            let j = order[next_job];
            next_job += 1;
            for r in &jobs[j].reducers {
                // Group by source node through a per-node index (a search of the groups per
                // fetch made a task of M sources O(M^2)).
                let mut sizes: Vec<(u32, Vec<f64>)> = Vec::new();
                for f in &r.fetches {
                    let k = &mut group[f.src as usize];
                    if *k == u32::MAX {
                        *k = sizes.len() as u32;
                        sizes.push((f.src, Vec::new()));
                    }
                    sizes[*k as usize].1.push(f.bytes);
                }
                for (n, _) in &sizes {
                    group[*n as usize] = u32::MAX;
                }
                sizes.sort_by_key(|(n, _)| *n);
                for (_, v) in &mut sizes {
                    v.reverse(); // pop() yields map outputs in workload order
                }
                let pending: Vec<Source> = sizes
                    .iter()
                    .map(|(node, v)| Source {
                        node: *node,
                        outputs: v.len() as u32,
                    })
                    .collect();
                state.on_shuffle_start(&pending)?;
                let bytes = r.fetches.iter().map(|f| f.bytes).sum();
                let id = tasks.len();
                tasks.push(Task {
                    job: j,
                    node: r.node,
                    start_s: jobs[j].arrival_s,
                    pending,
                    sizes,
                    cache: FetchCache::new(opts.batch),
                    running: 0,
                    busy: Vec::new(),
                    left: r.fetches.len(),
                    bytes,
                    finish_s: jobs[j].arrival_s,
                });
                wanting.push_back(id);
            }
        }

        // Free fetchers ask for sources, tasks in the order they asked.
        while let Some(id) = wanting.pop_front() {
            let task = &mut tasks[id];
            let free = opts.fetchers - task.running;
            if free == 0 || (task.pending.is_empty() && task.cache.cached() == 0) {
                continue;
            }
            let t0 = Instant::now();
            let before = task.cache.requests();
            let picks = if opts.one_fetch_per_host {
                // Offer each idle host once; reserve what was picked in the real list.
                let mut idle: Vec<Source> = task
                    .pending
                    .iter()
                    .filter(|s| !task.busy.contains(&s.node))
                    .map(|s| Source {
                        node: s.node,
                        outputs: 1,
                    })
                    .collect();
                let picks = task
                    .cache
                    .take(&mut state, opts.policy, task.node, &mut idle, free)?;
                for &src in &picks {
                    let i = task.pending.iter().position(|s| s.node == src).unwrap();
                    task.pending[i].outputs -= 1;
                    if task.pending[i].outputs == 0 {
                        task.pending.remove(i);
                    }
                }
                picks
            } else {
                task.cache
                    .take(&mut state, opts.policy, task.node, &mut task.pending, free)?
            };
            select_s += t0.elapsed().as_secs_f64();
            decisions += task.cache.requests() - before;
            requests += 1;
            if requests.is_multiple_of(OBSERVE_EVERY) {
                seen(PullProgress {
                    time_s: t,
                    fetches_done,
                    fetches,
                    decisions,
                    evaluations: state.evaluations(),
                });
            }
            for src in picks {
                // `sizes` is sorted by node.
                let at = task.sizes.binary_search_by_key(&src, |(n, _)| *n).unwrap();
                let list = &mut task.sizes[at].1;
                let bytes = list.pop().expect("a selected source holds an output");
                task.running += 1;
                task.busy.push(src);
                active.push(Active {
                    task: id,
                    src,
                    bytes,
                    left: bytes,
                });
            }
        }

        if active.is_empty() {
            match order.get(next_job) {
                Some(&j) => {
                    t = t.max(jobs[j].arrival_s);
                    continue;
                }
                None => break,
            }
        }
        events += 1;

        // Max-min rates of the running fetches.
        demands.clear();
        demands.extend(active.iter().map(|a| Demand {
            src: a.src,
            dst: tasks[a.task].node,
            weight: 1.0,
        }));
        rates.clear();
        rates.resize(active.len(), 0.0);
        fill.fill_rates(&demands, &budget, &mut rates);
        fill_work += demands.len() as u64;

        let mut dt = f64::INFINITY;
        for (a, &r) in active.iter().zip(&rates) {
            if r > 0.0 {
                dt = dt.min(a.left / r);
            } else if a.left <= 0.0 {
                dt = 0.0;
            }
        }
        let next_arrival = order.get(next_job).map(|&j| jobs[j].arrival_s);
        if let Some(at) = next_arrival {
            dt = dt.min((at - t).max(0.0));
        }
        if !dt.is_finite() {
            return Err(PullError::Stalled {
                time_s: t,
                fetches: active.len(),
            });
        }
        // Everything due within a hair of `dt` finishes now (equal rates, equal sizes).
        let horizon = dt * (1.0 + SAME);
        t += dt;
        // Land exactly on an arrival that `t + dt` misses by rounding (else it never comes).
        if let Some(at) = next_arrival {
            if at - t <= SAME * t.abs().max(1.0) {
                t = t.max(at);
            }
        }
        busy_integral += dt * rates.iter().sum::<f64>();
        done.clear();
        for (a, &r) in active.iter_mut().zip(&rates) {
            let finished = a.left <= SAME * a.bytes || (r > 0.0 && a.left / r <= horizon);
            if !finished {
                a.left -= r * dt;
            }
            done.push(finished);
        }
        for (a, _) in active.iter().zip(&done).filter(|(_, &d)| d) {
            done_bytes += a.bytes;
            fetches_done += 1;
            let task = &mut tasks[a.task];
            state.release(a.src, task.node)?;
            task.running -= 1;
            let b = task.busy.iter().position(|&n| n == a.src).unwrap();
            task.busy.swap_remove(b);
            task.left -= 1;
            if task.left == 0 {
                task.finish_s = t;
            }
            wanting.push_back(a.task);
        }
        let mut i = 0;
        active.retain(|_| {
            i += 1;
            !done[i - 1]
        });
        if total > 0.0 {
            let frac = done_bytes / total;
            if frac - curve.last().map_or(0.0, |p| p.1) >= 1.0 / CURVE_POINTS as f64 || frac >= 1.0
            {
                curve.push((t, frac));
            }
        }
        if events.is_multiple_of(OBSERVE_EVERY) {
            seen(PullProgress {
                time_s: t,
                fetches_done,
                fetches,
                decisions,
                evaluations: state.evaluations(),
            });
        }
    }

    let last_done = tasks.iter().map(|t| t.finish_s).fold(first_ready, f64::max);
    let shuffle_time_s = last_done - first_ready;
    let capacity: f64 = fabric
        .up_bytes_per_s
        .iter()
        .sum::<f64>()
        .min(fabric.down_bytes_per_s.iter().sum());
    let task_outcomes: Vec<TaskOutcome> = tasks
        .iter()
        .map(|t| TaskOutcome {
            job: jobs[t.job].id,
            node: t.node,
            start_s: t.start_s,
            finish_s: t.finish_s,
            bytes: t.bytes,
        })
        .collect();
    // A job ends with the last task of its id (a scan of every task per job was O(J T)).
    let mut last_of: HashMap<u64, f64> = HashMap::new();
    for o in &task_outcomes {
        let f = last_of.entry(o.job).or_insert(f64::NEG_INFINITY);
        *f = f.max(o.finish_s);
    }
    let job_outcomes = order
        .iter()
        .map(|&j| {
            let finish = (last_of.get(&jobs[j].id).copied())
                .map_or(jobs[j].arrival_s, |f| f.max(jobs[j].arrival_s));
            JobOutcome {
                id: jobs[j].id,
                arrival_s: jobs[j].arrival_s,
                shuffle_time_s: finish - jobs[j].arrival_s,
            }
        })
        .collect();
    Ok(PullOutput {
        policy: opts.policy.name().to_string(),
        shuffle_time_s,
        total_bytes: total,
        capacity_bytes_per_s: capacity,
        mean_rate_bytes_per_s: if shuffle_time_s > 0.0 {
            busy_integral / shuffle_time_s
        } else {
            0.0
        },
        decisions,
        events,
        rate_work: fill_work + budget.ports_reset() + state.evaluation_work(),
        evaluations: state.evaluations(),
        select_wall_s: select_s,
        wall_s: started.elapsed().as_secs_f64(),
        tasks: task_outcomes,
        jobs: job_outcomes,
        completion_curve: curve,
    })
}

fn validate(fabric: &Fabric, jobs: &[Job], opts: &PullOptions) -> Result<(), PullError> {
    if opts.fetchers == 0 {
        return Err(PullError::NoFetchers);
    }
    if opts.one_fetch_per_host && opts.batch > 1 {
        return Err(PullError::ExclusiveWithBatch);
    }
    for (node, &c) in fabric
        .up_bytes_per_s
        .iter()
        .chain(&fabric.down_bytes_per_s)
        .enumerate()
    {
        if !(c > 0.0 && c.is_finite()) {
            return Err(PullError::BadCapacity {
                node: node % fabric.ports().max(1),
                bytes_per_s: c,
            });
        }
    }
    let nodes = fabric.ports();
    for j in jobs {
        if !(j.arrival_s >= 0.0 && j.arrival_s.is_finite()) {
            return Err(PullError::BadArrival {
                job: j.id,
                arrival_s: j.arrival_s,
            });
        }
        for r in &j.reducers {
            let bad = std::iter::once(r.node)
                .chain(r.fetches.iter().map(|f| f.src))
                .find(|&n| n as usize >= nodes);
            if let Some(node) = bad {
                return Err(PullError::NodeOutOfRange {
                    job: j.id,
                    node,
                    nodes,
                });
            }
            if let Some(f) = r
                .fetches
                .iter()
                .find(|f| !(f.bytes >= 0.0 && f.bytes.is_finite()))
            {
                return Err(PullError::BadSize {
                    job: j.id,
                    bytes: f.bytes,
                });
            }
        }
    }
    Ok(())
}
