//! `coflowkit hug alloc --vectors v.json [--mode ...] [--json out.json]`.
//!
//! Input: `{"capacities": [..] (optional, 1 per link), "ports": P (optional: the links are a
//! P-port fabric's uplinks then downlinks, and each tenant's uplink and downlink demands must
//! balance), "tenants": [{"name", "vector": [..], "weight" (optional, 1), "bounded"
//! (optional, false)}]}`. Vectors are in capacity units, one entry per link.
//! Output: `{"p_star", "tenants": [{"name", "guarantee", "consumption", "progress"}],
//! "link_use"}`, shares as fractions of each link's capacity.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use coflowkit_model::echo::{echo, visible};
use coflowkit_sched::tenant::{
    drf, hug, psp, Allocation, HugOptions, Links, Mode, Stage1, TenantSpec, Tenants,
};
use serde::{Deserialize, Serialize};

use crate::read_limited::read_limited;

/// Largest `--vectors` file read (bytes).
pub const MAX_VECTORS_BYTES: u64 = 256 << 20;

#[derive(Args)]
pub struct AllocArgs {
    /// The tenants' correlation vectors (JSON, see `coflowkit hug alloc --help`; at most
    /// 256 MiB).
    #[arg(long)]
    pub vectors: PathBuf,
    /// Non-cooperative (public cloud): spare capacity only up to each tenant's share of its
    /// own bottleneck, so no lie pays. Cooperative (private datacenter): work-conserving.
    #[arg(long, value_enum, default_value = "noncooperative")]
    pub mode: ModeArg,
    /// HUG's stage 1: as the thesis (Eq 7.2 if every tenant is elastic, multi-round DRF if one
    /// is bounded), or always one of them.
    #[arg(long, value_enum, default_value = "auto")]
    pub stage1: Stage1Arg,
    /// The policy: HUG, or the DRF and PS-P baselines (which ignore --mode and --stage1).
    #[arg(long, value_enum, default_value = "hug")]
    pub policy: Policy,
    /// Write the result here as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Noncooperative,
    Cooperative,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Stage1Arg {
    Auto,
    ClosedForm,
    MultiRound,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Policy {
    Hug,
    Drf,
    Psp,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    capacities: Option<Vec<f64>>,
    ports: Option<usize>,
    tenants: Vec<TenantIn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantIn {
    name: String,
    vector: Vec<f64>,
    weight: Option<f64>,
    bounded: Option<bool>,
}

#[derive(Serialize)]
struct Output {
    p_star: f64,
    tenants: Vec<TenantOut>,
    link_use: Vec<f64>,
}

#[derive(Serialize)]
struct TenantOut {
    name: String,
    guarantee: Vec<f64>,
    consumption: Vec<f64>,
    progress: f64,
}

pub fn run(a: AllocArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    let path = a.vectors.display();
    let text = read_limited(&a.vectors, MAX_VECTORS_BYTES)?;
    let input: Input = serde_json::from_slice(&text).with_context(|| format!("{path}"))?;
    let t = tenants(input).with_context(|| format!("{path}"))?;
    let opts = HugOptions {
        mode: match a.mode {
            ModeArg::Noncooperative => Mode::NonCooperative,
            ModeArg::Cooperative => Mode::Cooperative,
        },
        stage1: match a.stage1 {
            Stage1Arg::Auto => Stage1::Auto,
            Stage1Arg::ClosedForm => Stage1::ClosedForm,
            Stage1Arg::MultiRound => Stage1::MultiRound,
        },
    };
    let alloc = match a.policy {
        Policy::Hug => hug(&t, opts),
        Policy::Drf => drf(&t),
        Policy::Psp => psp(&t),
    };
    let out = output(&t, &alloc);
    print(&out, alloc.utilization(&t))?;
    if let Some(p) = &a.json {
        std::fs::write(p, serde_json::to_string_pretty(&out)? + "\n")
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

/// Weights set shares by their ratios; past this range P* and the progress under- or overflow
/// (weights of 1e308 and 1e-308 gave P* = 0 with every tenant at progress 1).
const WEIGHTS: std::ops::RangeInclusive<f64> = 1e-6..=1e6;

fn tenants(input: Input) -> Result<Tenants> {
    if input.tenants.is_empty() {
        anyhow::bail!("no tenants: an allocation needs at least one");
    }
    // Names identify the output's rows, so two tenants may not share one.
    let mut seen = std::collections::HashMap::new();
    for (k, t) in input.tenants.iter().enumerate() {
        if let Some(first) = seen.insert(t.name.as_str(), k) {
            anyhow::bail!(
                "tenant '{}' is named twice (tenants {first} and {k}): names identify the output's rows",
                echo(&t.name)
            );
        }
        if let Some(w) = t.weight {
            if w.is_finite() && w > 0.0 && !WEIGHTS.contains(&w) {
                anyhow::bail!(
                    "tenant '{}': weight {w:e} is outside {:e} to {:e} (weights share by their \
                     ratios; wider ones under- or overflow P*)",
                    echo(&t.name),
                    WEIGHTS.start(),
                    WEIGHTS.end()
                );
            }
        }
    }
    let n = match (&input.capacities, input.ports) {
        (Some(c), _) => c.len(),
        (None, Some(p)) => p.saturating_mul(2),
        (None, None) => input.tenants[0].vector.len(),
    };
    // Capacities made here (1 per link) are only as many as a tenant's vector lists, so a
    // declared "ports" costs nothing the file does not hold.
    if let (None, Some(p)) = (&input.capacities, input.ports) {
        if let Some(t) = input.tenants.iter().find(|t| t.vector.len() != n) {
            anyhow::bail!(
                "tenant '{}': vector has {} entries, but \"ports\": {p} means {} links (one \
                 entry per uplink, then per downlink)",
                echo(&t.name),
                t.vector.len(),
                2 * p as u128
            );
        }
    }
    let caps = input.capacities.unwrap_or_else(|| vec![1.0; n]);
    let links = match input.ports {
        Some(p) => Links::fabric(p, caps)?,
        None => Links::independent(caps)?,
    };
    let specs: Vec<TenantSpec> = input
        .tenants
        .into_iter()
        .map(|t| TenantSpec {
            name: t.name,
            vector: t.vector,
            weight: t.weight.unwrap_or(1.0),
            bounded: t.bounded.unwrap_or(false),
        })
        .collect();
    Ok(Tenants::new(links, &specs)?)
}

fn output(t: &Tenants, a: &Allocation) -> Output {
    Output {
        p_star: a.p_star,
        tenants: (0..t.len())
            .map(|k| TenantOut {
                name: t.tenants[k].name.clone(),
                guarantee: a.dense_guarantee(t, k),
                consumption: a.dense_consumption(t, k),
                progress: a.progress(t, k),
            })
            .collect(),
        link_use: a.link_use(t),
    }
}

fn print(o: &Output, utilization: f64) -> Result<(), crate::out::StdoutError> {
    outln!(
        "P* = {:.6}   utilization = {:.6} of all capacity",
        o.p_star,
        utilization
    )?;
    let row = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.4}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for t in &o.tenants {
        // Escaped: an ESC sequence or a newline in a name reached the terminal or forged a
        // line (pass 34, C10). `--json` keeps the name as given (JSON escapes it).
        outln!(
            "{:<12} progress {:.6}  guarantee [{}]  consumption [{}]",
            visible(&t.name),
            t.progress,
            row(&t.guarantee),
            row(&t.consumption)
        )?;
    }
    outln!("{:<12} [{}]", "link use", row(&o.link_use))?;
    Ok(())
}
