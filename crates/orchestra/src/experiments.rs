//! The chapter's shuffle-side experiments on real bytes (`coflowkit transfers --experiment`):
//! random fetching against the optimum (key results row 3, Fig 4.5), MADD against the standard
//! shuffle on Fig 4.13's topologies (row 4, Table 4.2), Orchestra's high-priority transfer under
//! the inter-transfer controller (spec §2.0, 1.7x), and an iterative job's broadcast + shuffle
//! before and after Orchestra (rows 6-7). Each builds transfers, runs them on real processes
//! ([`crate::transfers`], [`crate::run`]) and returns rows; the CLI prints them.

use std::process::Command;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::itc::{self, Policy};
use crate::select::{self, BroadcastRule, ShuffleMechanism};
use crate::topology::Cluster;
use crate::transfers::{run_transfers, Flow, TransferResult, TransferSpec, TransfersConfig};
use crate::{run_broadcast_on, BroadcastConfig, Mechanism, Options, OrchestraError, Racks};

/// What every experiment shares: where it runs and how fast each host's link is.
pub struct Bench<'a> {
    pub cluster: Option<&'a Cluster>,
    pub rate_bps: f64,
    pub seed: u64,
    pub timeout_s: f64,
    /// Runs a host of `coflowkit transfers`.
    pub flow_node: &'a dyn Fn() -> Command,
}

impl Bench<'_> {
    fn config(&self, hosts: u32, policy: Option<Policy>) -> TransfersConfig {
        TransfersConfig {
            hosts,
            rate_bps: Some(self.rate_bps),
            policy,
            seed: self.seed,
            timeout_s: self.timeout_s,
        }
    }

    fn run(
        &self,
        hosts: u32,
        policy: Option<Policy>,
        t: &[TransferSpec],
    ) -> Result<Vec<TransferResult>, OrchestraError> {
        run_transfers(&self.config(hosts, policy), self.cluster, self.flow_node, t)
    }
}

fn shuffle(
    name: &str,
    flows: Vec<Flow>,
    mechanism: ShuffleMechanism,
    connections: u32,
) -> TransferSpec {
    TransferSpec {
        name: name.into(),
        arrival_s: 0.0,
        priority: 0,
        weight: 1.0,
        flows,
        mechanism,
        connections,
    }
}

/// `bytes` split as evenly as whole bytes allow into `parts`.
fn split(bytes: u64, parts: u32) -> impl Iterator<Item = u64> {
    let (q, r) = (bytes / parts as u64, bytes % parts as u64);
    (0..parts as u64).map(move |i| q + (i < r) as u64)
}

/// Hosts `0..senders` send, `senders..senders+receivers` receive; each receiver fetches
/// `bytes` spread evenly over every sender (Fig 4.5's setting).
pub fn spread_flows(senders: u32, receivers: u32, bytes: u64) -> Vec<Flow> {
    (0..receivers)
        .flat_map(|j| {
            split(bytes, senders).enumerate().map(move |(i, b)| Flow {
                src: i as u32,
                dst: senders + j,
                bytes: b,
            })
        })
        .collect()
}

/// Row 3: one run per (receivers, connections).
#[derive(Debug, Clone, Serialize)]
pub struct FetchRow {
    pub senders: u32,
    pub receivers: u32,
    pub connections: u32,
    pub bytes_per_receiver: u64,
    pub completion_s: Option<f64>,
    /// Each receiver's bytes over its own time, averaged; and the slowest.
    pub mean_receiver_mbps: Option<f64>,
    pub min_receiver_mbps: Option<f64>,
    pub link_mbps: f64,
    pub error: Option<String>,
}

pub fn fetch(
    b: &Bench,
    senders: u32,
    receivers: &[u32],
    connections: &[u32],
    bytes: u64,
) -> Result<Vec<FetchRow>, OrchestraError> {
    let mut rows = Vec::new();
    for &r in receivers {
        for &k in connections {
            let t = shuffle(
                &format!("fetch r{r} k{k}"),
                spread_flows(senders, r, bytes),
                ShuffleMechanism::Fair,
                k,
            );
            let out = b.run(senders + r, None, &[t])?.remove(0);
            let rates: Vec<f64> = out
                .receiver_times_s
                .iter()
                .map(|&(_, s)| bytes as f64 * 8.0 / s / 1e6)
                .collect();
            let ok = out.error.is_none() && !rates.is_empty();
            rows.push(FetchRow {
                senders,
                receivers: r,
                connections: k,
                bytes_per_receiver: bytes,
                completion_s: out.completion_s,
                mean_receiver_mbps: ok.then(|| rates.iter().sum::<f64>() / rates.len() as f64),
                min_receiver_mbps: ok.then(|| rates.iter().copied().fold(f64::INFINITY, f64::min)),
                link_mbps: b.rate_bps / 1e6,
                error: out.error,
            });
        }
    }
    Ok(rows)
}

/// Fig 4.6 with `n` senders per receiver (spec §2.5): senders `0..2n` send `unit` each, the
/// first n to receiver `2n+1`, the rest to `2n+2`; sender `2n` sends `n` units to both.
/// Fig 4.13's topologies A, B, C are "variations of Fig 4.6"; n = 2, 3, 4 give exactly the
/// theoretical gains Table 4.2 lists (25%, 33%, 38%), so those are taken to be them.
pub fn figure_4_6(n: u32, unit: u64) -> Vec<Flow> {
    let (r1, r2) = (2 * n + 1, 2 * n + 2);
    let mut v: Vec<Flow> = (0..2 * n)
        .map(|i| Flow {
            src: i,
            dst: if i < n { r1 } else { r2 },
            bytes: unit,
        })
        .collect();
    for dst in [r1, r2] {
        v.push(Flow {
            src: 2 * n,
            dst,
            bytes: n as u64 * unit,
        });
    }
    v
}

/// Row 4: one topology's standard shuffle against MADD.
#[derive(Debug, Clone, Serialize)]
pub struct MaddRow {
    pub topology: String,
    pub n: u32,
    pub unit_bytes: u64,
    /// At most `connections` fetches per reducer, TCP sharing the links.
    pub standard_s: Option<f64>,
    pub madd_s: Option<f64>,
    /// standard / MADD - 1 (Table 4.2's "speedup").
    pub speedup: Option<f64>,
    /// The same on the hose model with per-flow max-min fairness: (3n - 1) / 2n - 1.
    pub theory: f64,
    /// MADD's Γ at the link rate.
    pub bound_s: Option<f64>,
    pub error: Option<String>,
}

pub fn madd(
    b: &Bench,
    ns: &[u32],
    unit: u64,
    connections: u32,
) -> Result<Vec<MaddRow>, OrchestraError> {
    let mut rows = Vec::new();
    for &n in ns {
        let flows = figure_4_6(n, unit);
        let hosts = 2 * n + 3;
        let std = b
            .run(
                hosts,
                None,
                &[shuffle(
                    "standard",
                    flows.clone(),
                    ShuffleMechanism::Fair,
                    connections,
                )],
            )?
            .remove(0);
        let madd = b
            .run(
                hosts,
                None,
                &[shuffle("madd", flows.clone(), ShuffleMechanism::Madd, 0)],
            )?
            .remove(0);
        let mut d = vec![vec![0.0; 2]; 2 * n as usize + 1];
        for f in &flows {
            d[f.src as usize][(f.dst - 2 * n - 1) as usize] += f.bytes as f64;
        }
        let theory = select::fair_time(&d) / select::bottleneck(&d) - 1.0;
        let topology = match n {
            2 => "A".to_string(),
            3 => "B".to_string(),
            4 => "C".to_string(),
            _ => format!("fig4.6 n={n}"),
        };
        rows.push(MaddRow {
            topology,
            n,
            unit_bytes: unit,
            speedup: std
                .completion_s
                .zip(madd.completion_s)
                .map(|(s, m)| s / m - 1.0),
            standard_s: std.completion_s,
            madd_s: madd.completion_s,
            theory,
            bound_s: madd.bound_s,
            error: std.error.or(madd.error),
        });
    }
    Ok(rows)
}

/// Orchestra's experiment in kind (spec §2.0): a batch shuffle, and an ad hoc one arriving
/// `adhoc_at_s` later with a higher priority, on the same senders and receivers.
#[derive(Debug, Clone, Serialize)]
pub struct ItcRow {
    pub policy: Policy,
    pub batch_s: Option<f64>,
    pub adhoc_s: Option<f64>,
    /// When each ended, from the start.
    pub batch_end_s: Option<f64>,
    pub adhoc_end_s: Option<f64>,
    /// The fluid model (`itc::completion_times`) on the senders' aggregate uplink.
    pub model_batch_s: f64,
    pub model_adhoc_s: f64,
    /// The ad hoc transfer's share of the bytes sent while it ran (`TransferResult::own_share`):
    /// the ITC's decision, measured apart from how fast the CPUs let the bytes go.
    pub adhoc_share: Option<f64>,
    /// The fluid model's share for it (its bytes over all bytes sent during its life).
    pub model_adhoc_share: f64,
    pub error: Option<String>,
}

pub struct ItcSetup {
    pub senders: u32,
    pub receivers: u32,
    /// Bytes per receiver of each transfer.
    pub batch_bytes: u64,
    pub adhoc_bytes: u64,
    pub adhoc_at_s: f64,
    pub connections: u32,
}

impl ItcSetup {
    pub fn transfers(&self) -> Vec<TransferSpec> {
        let mut batch = shuffle(
            "batch",
            spread_flows(self.senders, self.receivers, self.batch_bytes),
            ShuffleMechanism::Fair,
            self.connections,
        );
        batch.priority = 0;
        let mut adhoc = shuffle(
            "adhoc",
            spread_flows(self.senders, self.receivers, self.adhoc_bytes),
            ShuffleMechanism::Fair,
            self.connections,
        );
        adhoc.arrival_s = self.adhoc_at_s;
        adhoc.priority = 1;
        vec![batch, adhoc]
    }
}

pub fn itc_policies(
    b: &Bench,
    s: &ItcSetup,
    policies: &[Policy],
) -> Result<Vec<ItcRow>, OrchestraError> {
    let hosts = s.senders + s.receivers;
    let ts = s.transfers();
    let model_in: Vec<itc::Transfer> = ts
        .iter()
        .map(|t| itc::Transfer {
            arrival_s: t.arrival_s,
            bytes: t.flows.iter().map(|f| f.bytes as f64).sum(),
            priority: t.priority,
            weight: t.weight,
        })
        .collect();
    // Balanced spread: the senders' uplinks together are the bottleneck.
    let capacity = s.senders.min(s.receivers) as f64 * b.rate_bps / 8.0;
    let mut rows = Vec::new();
    for &p in policies {
        let out = b.run(hosts, Some(p), &ts)?;
        let model = itc::completion_times(p, &model_in, capacity);
        let end = |r: &TransferResult| r.completion_s.map(|c| c + r.arrival_s);
        rows.push(ItcRow {
            policy: p,
            batch_s: out[0].completion_s,
            adhoc_s: out[1].completion_s,
            batch_end_s: end(&out[0]),
            adhoc_end_s: end(&out[1]),
            model_batch_s: model[0] - ts[0].arrival_s,
            model_adhoc_s: model[1] - ts[1].arrival_s,
            adhoc_share: out[1].own_share,
            // The link is full throughout, so the bytes sent during its life are its duration
            // at the capacity.
            model_adhoc_share: model_in[1].bytes / ((model[1] - ts[1].arrival_s) * capacity),
            error: out[0].error.clone().or(out[1].error.clone()),
        });
    }
    Ok(rows)
}

/// Rows 6-7: one iteration's communication, broadcast then shuffle.
#[derive(Debug, Clone, Serialize)]
pub struct IterRow {
    pub workers: u32,
    pub phase: String,
    pub broadcast: String,
    pub broadcast_s: Option<f64>,
    pub shuffle: String,
    pub shuffle_s: Option<f64>,
    pub comm_s: Option<f64>,
    pub error: Option<String>,
}

pub struct IterSetup {
    pub workers: Vec<u32>,
    pub broadcast_bytes: u64,
    /// Bytes each reducer fetches (0: no shuffle, the ALS job of row 7).
    pub shuffle_bytes: u64,
    /// Each flow's size is the even share times a uniform factor in [1 - skew, 1 + skew].
    pub skew: f64,
    pub block_bytes: u32,
    pub iterations: u32,
}

/// The shuffle among workers `1..=w` (host 0, the driver, only broadcasts): each reducer gets
/// about `per_reducer` bytes from the other workers, skewed by a seeded factor.
pub fn worker_shuffle(w: u32, per_reducer: u64, skew: f64, seed: u64) -> Vec<Flow> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5F);
    let mut v = Vec::new();
    if w < 2 || per_reducer == 0 {
        return v;
    }
    let even = per_reducer as f64 / (w - 1) as f64;
    for dst in 1..=w {
        for src in (1..=w).filter(|&s| s != dst) {
            let f = 1.0 + skew * (2.0 * rng.gen::<f64>() - 1.0);
            v.push(Flow {
                src,
                dst,
                bytes: ((even * f).round() as u64).max(1),
            });
        }
    }
    v
}

/// "Before": HDFS with 3 replicas and reducers fetching 5 at a time; "after": each transfer
/// controller's choice (`BroadcastRule`, `select::choose_shuffle` with a 10% threshold).
pub fn iterative(
    b: &Bench,
    s: &IterSetup,
    broadcast_node: &dyn Fn() -> Command,
) -> Result<Vec<IterRow>, OrchestraError> {
    let mut rows = Vec::new();
    for &w in &s.workers {
        if w < 3 {
            return Err(OrchestraError::Bad(format!(
                "{w} workers: the iterative job needs at least 3 (HDFS writes 3 replicas)"
            )));
        }
        let after_b = BroadcastRule::default().choose(s.broadcast_bytes, w);
        let flows = worker_shuffle(w, s.shuffle_bytes, s.skew, b.seed ^ w as u64);
        let d: Vec<Vec<f64>> = (0..=w)
            .map(|i| {
                (0..=w)
                    .map(|j| {
                        flows
                            .iter()
                            .filter(|f| f.src == i && f.dst == j)
                            .map(|f| f.bytes as f64)
                            .sum()
                    })
                    .collect()
            })
            .collect();
        let after_s = select::choose_shuffle(&d, 0.1);
        let phases = [
            (
                "before",
                Mechanism::Hdfs { r: 3 },
                ShuffleMechanism::Fair,
                5,
            ),
            ("after", after_b, after_s, 0),
        ];
        for _ in 0..s.iterations.max(1) {
            let bcfg = BroadcastConfig {
                receivers: w,
                bytes: s.broadcast_bytes,
                mechanisms: phases.iter().map(|p| p.1).collect(),
                opts: Options {
                    block_bytes: s.block_bytes,
                    ..Options::default()
                },
                seed: b.seed,
                rate_bps: Some(b.rate_bps),
                netns: b.cluster.is_some(),
                racks: Racks::default(),
                kill: None,
                stall_s: 10.0,
                timeout_s: b.timeout_s,
            };
            let bc = run_broadcast_on(&bcfg, b.cluster, broadcast_node)?;
            for (k, &(phase, bm, sm, conns)) in phases.iter().enumerate() {
                let sh = if flows.is_empty() {
                    None
                } else {
                    Some(
                        b.run(w + 1, None, &[shuffle(phase, flows.clone(), sm, conns)])?
                            .remove(0),
                    )
                };
                let shuffle_s = match &sh {
                    Some(r) => r.completion_s,
                    None => Some(0.0),
                };
                let bs = bc[k].completion_s;
                rows.push(IterRow {
                    workers: w,
                    phase: phase.into(),
                    broadcast: bm.to_string(),
                    broadcast_s: bs,
                    shuffle: match (&sh, sm, conns) {
                        (None, _, _) => "-".into(),
                        (_, ShuffleMechanism::Madd, _) => "madd".into(),
                        (_, ShuffleMechanism::Fair, 0) => "fair (all flows)".into(),
                        (_, ShuffleMechanism::Fair, k) => format!("fair ({k} per reducer)"),
                    },
                    shuffle_s,
                    comm_s: bs.zip(shuffle_s).map(|(a, b)| a + b),
                    error: bc[k].error.clone().or(sh.and_then(|r| r.error)),
                });
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_flows_cover_every_pair_and_every_byte() {
        let f = spread_flows(3, 2, 10);
        assert_eq!(f.len(), 6);
        for dst in [3, 4] {
            let got: u64 = f.iter().filter(|x| x.dst == dst).map(|x| x.bytes).sum();
            assert_eq!(got, 10);
        }
        assert!(f.iter().all(|x| x.src < 3));
    }

    /// Table 4.2's theoretical column from Fig 4.6 at n = 2, 3, 4: 25%, 33%, 38%.
    #[test]
    fn figure_4_6_variants_give_table_4_2_theory() {
        for (n, want) in [(2, 0.25), (3, 1.0 / 3.0), (4, 0.375)] {
            let flows = figure_4_6(n, 1);
            let mut d = vec![vec![0.0; 2]; 2 * n as usize + 1];
            for f in &flows {
                d[f.src as usize][(f.dst - 2 * n - 1) as usize] += f.bytes as f64;
            }
            let g = select::fair_time(&d) / select::bottleneck(&d) - 1.0;
            assert!((g - want).abs() < 1e-9, "n={n}: {g}");
        }
    }

    #[test]
    fn the_worker_shuffle_is_seeded_and_skewed_within_bounds() {
        let a = worker_shuffle(4, 3000, 0.5, 9);
        assert_eq!(a, worker_shuffle(4, 3000, 0.5, 9));
        assert_ne!(a, worker_shuffle(4, 3000, 0.5, 10));
        assert_eq!(a.len(), 12);
        assert!(a
            .iter()
            .all(|f| (500..=1500).contains(&f.bytes) && f.src != f.dst && f.src >= 1));
    }
}
