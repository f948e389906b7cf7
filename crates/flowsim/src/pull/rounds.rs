//! The paper's §4.3 simulation, which scores decisions rather than moving bytes: every node
//! runs one shuffle that fetches one output from each other node with a fixed number of
//! fetchers. Nodes take turns round-robin; on its turn a node whose fetchers are all busy has a
//! random one finish (its flow is released), then it fills its free fetchers with the policy.
//! A shuffle whose every source has been handed to a fetcher is replaced by a new one on the
//! same node. The score is the pattern's max-min utilization, averaged over the turns.

use coflowkit_model::Fabric;
use coflowkit_sched::select::{ClusterState, Policy, SelectError, SelectOptions, Source};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsSpec {
    /// Node capacities in bytes per second (same up and down in the paper).
    pub fabric: Fabric,
    pub policy: Policy,
    pub fetchers: usize,
    /// Rounds (every node takes one turn per round).
    pub rounds: usize,
    /// Rounds run before utilization is sampled (the start-up fill is not steady state).
    pub warmup: usize,
    pub seed: u64,
    pub select: SelectOptions,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsOutput {
    /// Mean utilization over the sampled turns, bytes per second.
    pub mean_util_bytes_per_s: f64,
    /// min(sum of uplinks, sum of downlinks), bytes per second.
    pub capacity_bytes_per_s: f64,
    pub samples: usize,
}

/// Run the §4.3 simulation once. Fails only if `opt` meets a request above its search limit.
pub fn simulate_rounds(spec: &RoundsSpec) -> Result<RoundsOutput, SelectError> {
    let n = spec.fabric.ports();
    let fetchers = spec.fetchers.max(1);
    let mut state = ClusterState::new(spec.fabric.clone(), spec.seed, spec.select);
    // Fetcher completions draw from their own stream so that they do not shift with the
    // policy's own use of randomness.
    let mut finish_rng = ChaCha8Rng::seed_from_u64(spec.seed ^ 0x9e37_79b9_7f4a_7c15);
    let others = |node: usize| -> Vec<Source> {
        Source::each(
            &(0..n as u32)
                .filter(|&s| s as usize != node)
                .collect::<Vec<_>>(),
        )
    };
    let mut pending: Vec<Vec<Source>> = (0..n).map(others).collect();
    for p in &pending {
        state.on_shuffle_start(p)?;
    }
    let mut running: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut sum = 0.0;
    let mut samples = 0;
    if n < 2 {
        return Ok(RoundsOutput {
            mean_util_bytes_per_s: 0.0,
            capacity_bytes_per_s: capacity(&spec.fabric),
            samples: 0,
        });
    }
    for round in 0..spec.rounds {
        for node in 0..n {
            if running[node].len() >= fetchers {
                let i = finish_rng.gen_range(0..running[node].len());
                let src = running[node].swap_remove(i);
                state.release(src, node as u32)?;
            }
            while running[node].len() < fetchers {
                if pending[node].is_empty() {
                    pending[node] = others(node);
                    state.on_shuffle_start(&pending[node])?;
                }
                let free = fetchers - running[node].len();
                let picks = state.select(spec.policy, node as u32, &pending[node], free)?;
                for src in picks {
                    pending[node].retain(|s| s.node != src);
                    running[node].push(src);
                }
            }
            if round >= spec.warmup {
                sum += state.utilization();
                samples += 1;
            }
        }
    }
    Ok(RoundsOutput {
        mean_util_bytes_per_s: if samples > 0 {
            sum / samples as f64
        } else {
            0.0
        },
        capacity_bytes_per_s: capacity(&spec.fabric),
        samples,
    })
}

fn capacity(f: &Fabric) -> f64 {
    f.up_bytes_per_s
        .iter()
        .sum::<f64>()
        .min(f.down_bytes_per_s.iter().sum())
}
