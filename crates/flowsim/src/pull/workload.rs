//! What a pull-based shuffle simulation replays: jobs whose reduce tasks each pull one
//! partition from every map output. Built synthetically (maps on every node, reducers spread
//! round-robin) or from a coflow trace (coflow = job; see [`from_trace`] for the mapping).

use std::collections::HashMap;

use coflowkit_model::units::MB;
use coflowkit_model::Trace;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// One fetch: a reducer's partition of one map output, pulled as one flow.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fetch {
    /// Node holding the map output.
    pub src: u32,
    pub bytes: f64,
}

/// A reduce task ("shuffle") on `node`, pulling every fetch in `fetches`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReduceTask {
    pub node: u32,
    pub fetches: Vec<Fetch>,
}

/// A job: its map outputs are all ready at `arrival_s`, when all its reduce tasks start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: u64,
    pub arrival_s: f64,
    pub reducers: Vec<ReduceTask>,
}

/// Whether a reducer's fetch of a map output on its own node crosses the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LocalFetch {
    /// Dropped: Hadoop serves it from the local disk through loopback, never the NIC.
    #[default]
    Skip,
    /// Kept as a flow over the node's own uplink and downlink (CoflowSim's self-flows).
    Network,
}

impl std::str::FromStr for LocalFetch {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "skip" => Ok(LocalFetch::Skip),
            "network" => Ok(LocalFetch::Network),
            _ => Err(format!(
                "unknown local-fetch mode `{s}` (use skip or network)"
            )),
        }
    }
}

/// A synthetic shuffle-heavy workload (the paper's testbed shape: every node runs maps, one
/// reduce task per node).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyntheticSpec {
    pub nodes: u32,
    pub maps_per_node: u32,
    /// Reduce tasks per job, placed on nodes `0, 1, ..` round-robin (job j starts at node j).
    pub reducers: u32,
    pub jobs: u32,
    /// Seconds between job arrivals.
    pub job_gap_s: f64,
    /// Mean bytes of one partition (one map output for one reducer).
    pub partition_bytes: f64,
    /// Partition sizes are uniform in mean x [1 - spread, 1 + spread] (0 = all equal).
    pub size_spread: f64,
    pub local: LocalFetch,
    pub seed: u64,
}

impl Default for SyntheticSpec {
    fn default() -> Self {
        SyntheticSpec {
            nodes: 16,
            maps_per_node: 4,
            reducers: 16,
            jobs: 1,
            job_gap_s: 0.0,
            partition_bytes: 16.0 * MB,
            size_spread: 0.5,
            local: LocalFetch::Skip,
            seed: 1,
        }
    }
}

impl SyntheticSpec {
    pub fn generate(&self) -> Vec<Job> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let spread = self.size_spread.clamp(0.0, 1.0);
        (0..self.jobs)
            .map(|j| {
                let reducers = (0..self.reducers)
                    .map(|r| {
                        let node = (j + r) % self.nodes.max(1);
                        let mut fetches = Vec::new();
                        for src in 0..self.nodes {
                            for _ in 0..self.maps_per_node {
                                // Draw for every map output, kept or not, so that the sizes do
                                // not depend on the local-fetch mode.
                                let f = if spread > 0.0 {
                                    rng.gen_range(1.0 - spread..=1.0 + spread)
                                } else {
                                    1.0
                                };
                                if src != node || self.local == LocalFetch::Network {
                                    fetches.push(Fetch {
                                        src,
                                        bytes: self.partition_bytes * f,
                                    });
                                }
                            }
                        }
                        ReduceTask { node, fetches }
                    })
                    .collect();
                Job {
                    id: u64::from(j) + 1,
                    arrival_s: f64::from(j) * self.job_gap_s,
                    reducers,
                }
            })
            .collect()
    }
}

/// A coflow trace as pull-based jobs: each coflow is a job arriving at the coflow's arrival;
/// each distinct destination port is one reduce task on that node; each flow is one fetch of a
/// map output on the flow's source port, of the flow's size. (The coflow-benchmark format has
/// at most one mapper per port, so a reducer fetches once from each mapper node.) Reducers are
/// listed in order of their first flow.
pub fn from_trace(trace: &Trace, local: LocalFetch) -> Vec<Job> {
    let mut coflows: Vec<_> = trace.coflows.iter().collect();
    coflows.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    coflows
        .into_iter()
        .map(|c| {
            let mut reducers: Vec<ReduceTask> = Vec::new();
            // Each port's reducer (a search of the reducers per flow made a coflow of R
            // reducers O(R) per flow).
            let mut of_port: HashMap<u32, usize> = HashMap::new();
            for f in &c.flows {
                if f.src == f.dst && local == LocalFetch::Skip {
                    continue;
                }
                let fetch = Fetch {
                    src: f.src,
                    bytes: f.bytes,
                };
                let r = *of_port.entry(f.dst).or_insert_with(|| {
                    reducers.push(ReduceTask {
                        node: f.dst,
                        fetches: Vec::new(),
                    });
                    reducers.len() - 1
                });
                reducers[r].fetches.push(fetch);
            }
            Job {
                id: c.id,
                arrival_s: c.arrival_s,
                reducers,
            }
        })
        .collect()
}

/// Total bytes to fetch.
pub fn total_bytes(jobs: &[Job]) -> f64 {
    jobs.iter()
        .flat_map(|j| &j.reducers)
        .flat_map(|r| &r.fetches)
        .map(|f| f.bytes)
        .sum()
}
