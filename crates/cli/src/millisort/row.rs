//! One configuration's result over its runs: issue 20's JSON object (medians over runs).

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use coflowkit_millisort::burst::Report;
use coflowkit_millisort::sort::Config;
use coflowkit_millisort::validate::Validation;
use coflowkit_model::stats::percentile;
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct PhaseOut {
    pub mean_ms: f64,
    pub max_ms: f64,
    pub messages: u64,
    pub bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub records: u64,
    pub records_per_rank: u64,
    pub ranks: usize,
    pub levels: u8,
    pub splitters: String,
    pub protocol: String,
    /// Median over runs, from the synchronised start to the last rank's end.
    pub wall_ms: f64,
    pub runs_ms: Vec<f64>,
    /// Median of each phase's mean and max over ranks.
    pub phases: BTreeMap<String, PhaseOut>,
    pub messages: u64,
    pub bytes: u64,
    pub partition_excess: f64,
    pub records_per_ms_per_core: f64,
    pub cores: usize,
    pub max_late_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_ms: Option<f64>,
    pub validation: Validation,
}

/// Median (interpolated between the middle two for an even count).
pub fn median(v: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    percentile(&v, 50.0)
}

impl Row {
    pub fn of(
        reports: &[Report],
        cfg: &Config,
        cores: usize,
        budget_ms: Option<f64>,
    ) -> Result<Row> {
        let Some(first) = reports.first() else {
            bail!("no measured runs")
        };
        let wall = median(reports.iter().map(|r| r.wall_ms));
        let mut phases = BTreeMap::new();
        for (i, (name, _)) in first.phases.iter().enumerate() {
            phases.insert(
                name.clone(),
                PhaseOut {
                    mean_ms: median(reports.iter().map(|r| r.phases[i].1.mean_ms)),
                    max_ms: median(reports.iter().map(|r| r.phases[i].1.max_ms)),
                    messages: median(reports.iter().map(|r| r.phases[i].1.messages as f64)) as u64,
                    bytes: median(reports.iter().map(|r| r.phases[i].1.bytes as f64)) as u64,
                },
            );
        }
        // The verdict over every run: the first failing run's, else the last run's.
        let validation = reports
            .iter()
            .filter_map(|r| r.validation.clone())
            .find(|v| !v.ok)
            .or_else(|| reports.last().and_then(|r| r.validation.clone()))
            .unwrap_or(Validation {
                ok: true,
                records: first.records,
                checksum: "not checked".into(),
                input_records: first.records,
                input_checksum: "not checked".into(),
                duplicates: 0,
                unordered: 0,
                composite_unordered: 0,
                unpaired: 0,
                full: false,
            });
        Ok(Row {
            records: first.records,
            records_per_rank: first.records / first.ranks as u64,
            ranks: first.ranks,
            levels: cfg.levels,
            splitters: cfg.rule.name().into(),
            protocol: cfg.protocol.name(),
            wall_ms: wall,
            runs_ms: reports.iter().map(|r| r.wall_ms).collect(),
            phases,
            messages: median(reports.iter().map(|r| r.messages as f64)) as u64,
            bytes: median(reports.iter().map(|r| r.bytes as f64)) as u64,
            partition_excess: median(reports.iter().map(|r| r.partition_excess)),
            records_per_ms_per_core: first.records as f64 / wall / cores as f64,
            cores,
            max_late_ms: reports.iter().map(|r| r.max_late_ms).fold(0.0, f64::max),
            budget_ms,
            validation,
        })
    }

    pub fn print(&self) -> Result<(), crate::out::StdoutError> {
        let budget = self
            .budget_ms
            .map(|b| format!("budget {b} ms  "))
            .unwrap_or_default();
        outln!(
            "{budget}ranks {} levels {} splitters {} protocol {}: {} records ({} per rank) in {:.3} ms (median of {}), {:.0} records/ms/core on {} cores, excess {:.1} %, {} messages, {} bytes, validation {}",
            self.ranks, self.levels, self.splitters, self.protocol, self.records, self.records_per_rank,
            self.wall_ms, self.runs_ms.len(), self.records_per_ms_per_core, self.cores,
            100.0 * self.partition_excess, self.messages, self.bytes,
            if self.validation.ok { "ok" } else { "FAILED" }
        )?;
        for name in coflowkit_millisort::phases::PHASES {
            let p = &self.phases[name];
            if p.max_ms > 0.0 || p.messages > 0 {
                outln!(
                    "  {name:<20} mean {:>9.3} ms  max {:>9.3} ms  messages {:>7}  bytes {:>10}",
                    p.mean_ms,
                    p.max_ms,
                    p.messages,
                    p.bytes
                )?;
            }
        }
        Ok(())
    }
}
