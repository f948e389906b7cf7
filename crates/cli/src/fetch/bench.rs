//! `coflowkit fetch bench`: wall time of one source-selection decision as the cluster grows
//! (Table 1: RSS O(1), GSS O(M (N+F)), PGSS O(K (N+F)), opt O(C(P+M-1, P) (N+F))). The state is
//! the §4.3 setting in steady state: every node runs a shuffle over all other nodes with all
//! fetchers busy, reached by random decisions; then each timed turn frees one fetch of the next
//! node and asks the policy for its replacement. Release builds only make sense here.

use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use coflowkit_model::units::parse_rate_bps;
use coflowkit_model::Fabric;
use coflowkit_sched::select::{
    multisets, ClusterState, Policy, SelectError, SelectOptions, Source,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::rates::parse_policies;

#[derive(Args, Debug)]
pub struct FetchBenchArgs {
    /// Cluster sizes (half slow, half fast nodes)
    #[arg(long, default_value = "16,150,1000", value_name = "LIST")]
    pub nodes: String,
    /// Policies to time
    #[arg(long, default_value = "random,gss,pgss,opt", value_name = "LIST")]
    pub policy: String,
    /// Concurrent fetches per reduce task (1 to 1024)
    #[arg(long, default_value_t = 5, value_name = "F", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    pub fetchers: usize,
    /// Timed decisions per policy and size (opt: joint requests for all fetchers, at most 5)
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub decisions: usize,
    /// Stop timing a policy at a size after this many seconds (at least 3 decisions)
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    pub max_seconds: f64,
    #[arg(long, default_value = "512mbit", value_name = "RATE")]
    pub low_rate: String,
    #[arg(long, default_value = "1024mbit", value_name = "RATE")]
    pub high_rate: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The steady state: every node's fetchers busy, load counts worn down by random decisions.
struct Steady {
    state: ClusterState,
    pending: Vec<Vec<Source>>,
    running: Vec<Vec<u32>>,
    rng: ChaCha8Rng,
}

impl Steady {
    fn new(fabric: Fabric, fetchers: usize, seed: u64) -> Result<Steady, SelectError> {
        let n = fabric.ports();
        let mut s = Steady {
            state: ClusterState::new(fabric, seed, SelectOptions::default()),
            pending: vec![Vec::new(); n],
            running: vec![Vec::new(); n],
            rng: ChaCha8Rng::seed_from_u64(seed),
        };
        for node in 0..n {
            while s.running[node].len() < fetchers {
                s.refill(node)?;
                s.pick(Policy::Random, node)?;
            }
        }
        for turn in 0..2 * n {
            s.turn(Policy::Random, turn % n)?;
        }
        Ok(s)
    }

    fn refill(&mut self, node: usize) -> Result<(), SelectError> {
        if self.pending[node].is_empty() {
            let n = self.running.len() as u32;
            let others: Vec<u32> = (0..n).filter(|&s| s as usize != node).collect();
            self.pending[node] = Source::each(&others);
            self.state.on_shuffle_start(&self.pending[node])?;
        }
        Ok(())
    }

    fn pick(&mut self, policy: Policy, node: usize) -> Result<(), SelectError> {
        for src in self
            .state
            .select(policy, node as u32, &self.pending[node], 1)?
        {
            self.pending[node].retain(|s| s.node != src);
            self.running[node].push(src);
        }
        Ok(())
    }

    /// Free one fetch of `node`, then time the choice of its replacement.
    fn turn(&mut self, policy: Policy, node: usize) -> Result<f64, SelectError> {
        let i = self.rng.gen_range(0..self.running[node].len());
        let src = self.running[node].swap_remove(i);
        self.state.release(src, node as u32)?;
        self.refill(node)?;
        let t0 = Instant::now();
        self.pick(policy, node)?;
        Ok(t0.elapsed().as_secs_f64())
    }
}

pub fn run(args: FetchBenchArgs) -> Result<()> {
    if cfg!(debug_assertions) {
        errln!("warning: debug build; run `cargo run --release -- fetch bench` for real numbers");
    }
    let sizes: Vec<usize> = args
        .nodes
        .split(',')
        .map(|s| s.trim().parse().ok().filter(|&n: &usize| n >= 2))
        .collect::<Option<_>>()
        .context("--nodes: expected a list of node counts, each at least 2")?;
    for &n in &sizes {
        super::rates::check_pair_nodes(n, "--nodes")?;
    }
    let policies = parse_policies(&args.policy)?;
    let low = parse_rate_bps(&args.low_rate).context("--low-rate")? / 8.0;
    let high = parse_rate_bps(&args.high_rate).context("--high-rate")? / 8.0;
    let fetchers = args.fetchers.max(1);
    outln!(
        "{:>6} {:>8} {:<8} {:>10} {:>14} {:>14}",
        "nodes",
        "flows",
        "policy",
        "decisions",
        "µs/decision",
        "evals/decision"
    )?;
    for &n in &sizes {
        let caps: Vec<f64> = (0..n).map(|i| if i < n / 2 { low } else { high }).collect();
        let fabric = Fabric {
            up_bytes_per_s: caps.clone(),
            down_bytes_per_s: caps,
        };
        let steady = Steady::new(fabric, fetchers, args.seed)?;
        let flows = steady.state.pattern().len();
        for &policy in &policies {
            let mut s = Steady {
                state: steady.state.clone(),
                pending: steady.pending.clone(),
                running: steady.running.clone(),
                rng: steady.rng.clone(),
            };
            if policy == Policy::Opt {
                // A shuffle start: all fetchers of one node ask at once, from all other nodes.
                let m = (n - 1) as u64;
                let combos = multisets(m, fetchers as u64);
                if combos > u128::from(SelectOptions::default().max_combinations) {
                    outln!(
                        "{n:>6} {flows:>8} {:<8} {:>10} {:>14} {combos:>14}",
                        "opt",
                        "-",
                        "refused"
                    )?;
                    continue;
                }
                let others = Source::each(&(1..n as u32).collect::<Vec<_>>());
                let reps = args.decisions.clamp(1, 5);
                let mut total = 0.0;
                for _ in 0..reps {
                    let mut st = s.state.clone();
                    let t0 = Instant::now();
                    st.select(Policy::Opt, 0, &others, fetchers)?;
                    total += t0.elapsed().as_secs_f64();
                }
                outln!(
                    "{n:>6} {flows:>8} {:<8} {reps:>10} {:>14.1} {combos:>14}",
                    "opt",
                    1e6 * total / reps as f64
                )?;
                continue;
            }
            let mut total = 0.0;
            let mut done = 0;
            let evals0 = s.state.evaluations();
            while done < args.decisions && (done < 3 || total < args.max_seconds) {
                total += s.turn(policy, done % n)?;
                done += 1;
            }
            let evals = (s.state.evaluations() - evals0) as f64 / done.max(1) as f64;
            outln!(
                "{n:>6} {flows:>8} {:<8} {done:>10} {:>14.1} {evals:>14.1}",
                policy.name(),
                1e6 * total / done.max(1) as f64
            )?;
        }
    }
    Ok(())
}
