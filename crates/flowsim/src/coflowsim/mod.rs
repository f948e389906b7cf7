//! `--model coflowsim`: the assumptions of the public reference simulator CoflowSim
//! (github.com/coflow/coflowsim at b61f209), reproduced rule by rule so that results can be
//! checked against it and against the papers that used it. Nothing of its code is copied; each
//! rule is written from reading it and named in the module that implements it:
//!
//! - [`units`]: 1 Gbps taken as 1024·2^20 bit/s, 8 ms steps (one MB at full rate), a simulated
//!   second of 1024 ms;
//! - [`jobs`]: reducers rounded up to whole MB and then to a multiple of the mapper count, flows
//!   of at least 1 MB, self-flows kept, the static keys of SCF/NCF/SEBF, and the deadlines
//!   (Java's `Random(17)`) that order its work conservation even with deadlines off;
//! - [`clock`]: arrivals admitted at the start of the 10.24 s epoch in which they arrive, the CCT
//!   counted from that epoch's start;
//! - [`order`], [`madd`]: FIFO/SCF/NCF/LCF/SEBF, its MADD with skipped coflows sharing the
//!   leftovers and its work conservation by deadline, rates recomputed only when coflows are
//!   admitted or leave;
//! - [`dark`]: DARK (its Aalo) with strict priority across queues;
//! - [`fair`], [`pfp`]: per-flow FAIR and PFP as its step loop does them.
//!
//! Times: the reference's clock unit is reported as a millisecond (`cct_s` = its CCT in ms /
//! 1000), so numbers compare one to one with its output. In this model `cct_s` counts from the
//! admission epoch's start, not from the arrival.
//!
//! It runs event to event (nothing changes between the events each policy cares about), so a
//! policy on the FB trace takes about a second where the reference takes minutes.

pub mod book;
pub mod clock;
pub mod dark;
pub mod fair;
pub mod java_random;
pub mod jobs;
pub mod madd;
pub mod order;
pub mod pfp;
pub mod units;

use std::time::Instant;

use coflowkit_model::bins::Bin;
use coflowkit_model::{CoflowId, Fabric, Trace};
use thiserror::Error;

use crate::outcome::{CoflowOutcome, SimOutput};

/// The reference's algorithms (its `SHARING_ALGO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algo {
    Fair,
    Pfp,
    Fifo,
    Scf,
    Ncf,
    Lcf,
    Sebf,
    Dark,
}

impl Algo {
    pub const ALL: [Algo; 8] = [
        Algo::Fair,
        Algo::Pfp,
        Algo::Fifo,
        Algo::Scf,
        Algo::Ncf,
        Algo::Lcf,
        Algo::Sebf,
        Algo::Dark,
    ];

    /// Its name in the reference (`FAIR`, ... `DARK`).
    pub fn reference_name(self) -> &'static str {
        match self {
            Algo::Fair => "FAIR",
            Algo::Pfp => "PFP",
            Algo::Fifo => "FIFO",
            Algo::Scf => "SCF",
            Algo::Ncf => "NCF",
            Algo::Lcf => "LCF",
            Algo::Sebf => "SEBF",
            Algo::Dark => "DARK",
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum CoflowSimError {
    #[error("coflow {coflow}: not a coflow-benchmark coflow (CoflowSim reads only those): {why}")]
    NotBenchmark { coflow: CoflowId, why: String },
    #[error(
        "coflow {coflow}: arrival {arrival_s} s is not a whole number of ms CoflowSim can read"
    )]
    Arrival { coflow: CoflowId, arrival_s: f64 },
    #[error(
        "{algo}: coflow {coflow} did not finish by CoflowSim's end of time (86400 simulated s)"
    )]
    Unfinished {
        algo: &'static str,
        coflow: CoflowId,
    },
}

/// Departures from the reference's rules, each off by default: ablations that show what one of
/// its rules does to the numbers (docs/fb-results.md). FIFO, SCF, NCF, LCF and SEBF read the
/// first two, DARK only `dark_queues`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ablation {
    /// Work conservation in the policy's own order (FIFO: arrival) instead of the reference's
    /// order of earliest (synthetic) deadline.
    pub backfill_in_order: bool,
    /// No leftover share for the skipped coflows (step 2 of its allocation).
    pub no_skipped_share: bool,
    /// DARK with this many queues instead of its 10 (same first limit and spacing).
    pub dark_queues: Option<usize>,
}

/// Replay `trace` under the reference's `algo`. Coflows without flows are left out, as the
/// reference ignores coflows without mappers. `fabric` only serves the isolated CCT reported
/// beside each coflow.
pub fn simulate(trace: &Trace, fabric: &Fabric, algo: Algo) -> Result<SimOutput, CoflowSimError> {
    simulate_ablated(trace, fabric, algo, Ablation::default())
}

/// [`simulate`] with some of the reference's rules changed (see [`Ablation`]).
pub fn simulate_ablated(
    trace: &Trace,
    fabric: &Fabric,
    algo: Algo,
    ablation: Ablation,
) -> Result<SimOutput, CoflowSimError> {
    let started = Instant::now();
    let deadline_factor = if algo == Algo::Dark { 0.0 } else { 1.0 };
    let jobs = jobs::jobs_of(trace, deadline_factor)?;
    let ports = trace.ports as usize;
    let n = jobs.len();
    let mut book = book::Book::new(jobs);
    let mut madd;
    let mut dark;
    let mut fair;
    let mut pfp;
    let engine: &mut dyn clock::Engine = match algo {
        Algo::Fair => {
            fair = fair::Fair::new(ports);
            &mut fair
        }
        Algo::Pfp => {
            pfp = pfp::Pfp::new(ports);
            &mut pfp
        }
        Algo::Dark => {
            dark = dark::Dark::new(n, ports, ablation.dark_queues.unwrap_or(dark::QUEUES));
            &mut dark
        }
        _ => {
            madd = madd::Madd::new(algo, ports, ablation);
            &mut madd
        }
    };
    let run = clock::run(&mut book, engine);
    let mut coflows = Vec::with_capacity(n);
    let mut makespan_s: f64 = 0.0;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&j| book.jobs[j].trace_index);
    for j in order {
        let job = &book.jobs[j];
        let c = &trace.coflows[job.trace_index];
        let s = &book.state[j];
        let (Some(start), Some(finish)) = (s.start_ms, s.finish_ms) else {
            return Err(CoflowSimError::Unfinished {
                algo: algo.reference_name(),
                coflow: c.id,
            });
        };
        let cct_s = (finish - start) as f64 / 1000.0;
        makespan_s = makespan_s.max(finish as f64 / 1000.0);
        let flows = book
            .reducers_of(j as u32)
            .map(|r| book.reducers[r].flows.len())
            .sum::<usize>();
        coflows.push(CoflowOutcome {
            id: c.id,
            arrival_s: c.arrival_s,
            finish_s: finish as f64 / 1000.0,
            cct_s,
            isolated_cct_s: c.isolated_cct_s(fabric),
            bytes: c.bytes(),
            flows: c.flows.len(),
            length_bytes: c.length_bytes(),
            bin: Bin::of(c),
            deadline_s: None,
            met_deadline: None,
            avg_fct_s: s.fct_sum_ms / flows.max(1) as f64 / 1000.0,
            fct_spread: if finish > start {
                (s.fct_max_ms - s.fct_min_ms) / (finish - start) as f64
            } else {
                0.0
            },
        });
    }
    Ok(SimOutput {
        scheduler: algo.reference_name().to_ascii_lowercase(),
        coflows,
        decisions: run.events,
        redistributions: 0,
        makespan_s,
        wall_s: started.elapsed().as_secs_f64(),
    })
}
