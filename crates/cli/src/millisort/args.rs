//! The flags of `coflowkit millisort`.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use coflowkit_group::{ShuffleProto, BCAST_K, GATHER_K};
use coflowkit_millisort::sort::Config;
use coflowkit_millisort::validate::Depth;
use coflowkit_millisort::Rule;
use coflowkit_simcmd::flag_range::{f64_in, f64_positive, wait};
use coflowkit_sortdata::RecordKind;

use crate::ranks::RanksArgs;

#[derive(Args, Debug, Clone)]
pub struct MilliSortArgs {
    #[command(flatten)]
    pub ranks: RanksArgs,
    /// Records each rank generates (rank r: records [r·n, (r+1)·n) of the gensort sequence).
    #[arg(long, default_value_t = 7000, value_parser = clap::value_parser!(u64).range(1..=u32::MAX as u64))]
    pub records_per_rank: u64,
    /// Partitioning levels, comma-separated: 1, 2 (each is a configuration).
    #[arg(long, value_delimiter = ',', default_value = "2")]
    pub levels: Vec<u8>,
    /// Splitter selection, comma-separated: naive, weighted (each is a configuration).
    #[arg(long, value_delimiter = ',', default_value = "weighted")]
    pub splitters: Vec<String>,
    /// Reduction factor of two-level partitioning (ranks per pivot sorter).
    #[arg(long, default_value_t = 10)]
    pub reduction: usize,
    /// Pivots per rank (s·M); default M (s = 1, the paper's setting); at most 2^20 (0 is 1).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1 << 20))]
    pub pivots_per_rank: Option<usize>,
    /// The record shuffle's protocol: high-entropy, grpf, grpt, srpt, hadoop-C, madd, lockstep.
    #[arg(long, default_value = "high-entropy")]
    pub protocol: String,
    /// The pivot shuffle's protocol (small messages among the pivot sorters).
    #[arg(long, default_value = "grpf")]
    pub pivot_protocol: String,
    /// gensort -s keys (skewed) instead of uniform binary ones.
    #[arg(long)]
    pub skewed: bool,
    /// Measured sorts per configuration (and per probe of a budget search); the median counts.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Unmeasured sorts first.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Time budgets (ms, comma-separated): for each, the largest records per rank whose median
    /// time is within it (each above 0 and at most 60,000).
    #[arg(long, value_delimiter = ',', value_parser = f64_positive(60_000.0))]
    pub budget_ms: Vec<f64>,
    /// Lead time of the synchronised start (ms): rank 0 broadcasts a start this far ahead (at
    /// most 60,000).
    #[arg(long, default_value_t = 20.0,
          value_parser = f64_in(wait::START_MARGIN_MS.0, wait::START_MARGIN_MS.1))]
    pub start_margin_ms: f64,
    /// Validation after every sort (untimed): full (also regenerate every record from its
    /// origin: keys paired with values), sums (order, count, checksum), none.
    #[arg(long, default_value = "full")]
    pub validate: String,
    /// Shuffle keys and values in two all-to-alls and merge the keys while the values travel
    /// (the group's all-to-all returns every message at once, so one shuffle cannot overlap).
    #[arg(long)]
    pub overlap_merge: bool,
    /// Threads of each rank's local sort (1 to 1024).
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    pub threads: usize,
    /// Cores the ranks share, for records per ms per core (default: min(ranks · threads, this
    /// host's cores), right for --local; set it under mpirun across hosts).
    #[arg(long)]
    pub cores: Option<usize>,
    /// Radix of the k-nomial gather (at least 2; checked here, not by every rank after start)
    #[arg(long, default_value_t = GATHER_K, value_parser = clap::value_parser!(u32).range(2..))]
    pub gather_k: u32,
    /// Radix of the k-nomial broadcast (at least 2)
    #[arg(long, default_value_t = BCAST_K, value_parser = clap::value_parser!(u32).range(2..))]
    pub bcast_k: u32,
    /// Seed of the transport's loss injection.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the results as JSON (one object for one configuration, else an array).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Testing: this rank leaves right after joining the world.
    #[arg(long, hide = true)]
    pub fail_rank: Option<u32>,
}

impl MilliSortArgs {
    pub fn configs(&self) -> Result<Vec<Config>> {
        let protocol = ShuffleProto::parse(&self.protocol)?;
        let pivot_protocol = ShuffleProto::parse(&self.pivot_protocol)?;
        self.depth()?;
        if self.threads == 0 {
            bail!("--threads must be at least 1");
        }
        if let Some(t) = self
            .budget_ms
            .iter()
            .find(|t| !(**t > 0.0 && t.is_finite()))
        {
            bail!("--budget-ms {t}: budgets must be positive");
        }
        let mut out = Vec::new();
        for &levels in &self.levels {
            if !(1..=2).contains(&levels) {
                bail!("--levels {levels}: 1 or 2 (three levels were never implemented, spec §2.5)");
            }
            if levels == 2 && self.reduction < 2 {
                bail!("--reduction {}: at least 2", self.reduction);
            }
            for s in &self.splitters {
                out.push(Config {
                    levels,
                    r: self.reduction,
                    rule: Rule::parse(s)?,
                    pivots: self.pivots_per_rank,
                    protocol: protocol.clone(),
                    pivot_protocol: pivot_protocol.clone(),
                    gather_k: self.gather_k,
                    bcast_k: self.bcast_k,
                    threads: self.threads,
                    overlap_merge: self.overlap_merge,
                });
            }
        }
        Ok(out)
    }

    pub fn depth(&self) -> Result<Option<Depth>> {
        Ok(match self.validate.to_ascii_lowercase().as_str() {
            "full" => Some(Depth::Full),
            "sums" => Some(Depth::Sums),
            "none" => None,
            v => bail!("--validate {v}: full, sums or none"),
        })
    }

    pub fn kind(&self) -> RecordKind {
        RecordKind::from_flags(false, self.skewed)
    }

    pub fn cores(&self, ranks: usize) -> usize {
        self.cores.unwrap_or_else(|| {
            let here = std::thread::available_parallelism().map_or(1, |n| n.get());
            (ranks * self.threads).min(here)
        })
    }
}
