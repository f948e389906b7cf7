//! Results for humans (a table on stdout) and for scripts (JSON and CSV).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use coflowkit_flowsim::{SimOutput, Summary};
use coflowkit_model::bins::Bin;
use coflowkit_model::Fabric;
use coflowkit_sched::SchedOptions;
use serde::Serialize;
use serde_json::json;

/// One scheduler's run with its summary.
pub struct Run {
    pub output: SimOutput,
    pub summary: Summary,
}

impl Run {
    pub fn new(output: SimOutput) -> Self {
        let summary = Summary::of(&output);
        Run { output, summary }
    }

    pub fn name(&self) -> &str {
        &self.output.scheduler
    }
}

/// Speed-ups of `run` over `base`: (average CCT, p95 CCT); above 1 means `run` is faster.
fn speedups(run: &Summary, base: &Summary) -> (f64, f64) {
    (
        base.avg_cct_s / run.avg_cct_s,
        base.p95_cct_s / run.p95_cct_s,
    )
}

/// A ratio to two decimals, or `-` where it is undefined (no baseline, a CCT of 0): NaN never
/// reaches the table (nor the JSON, where serde_json writes it as null).
pub fn ratio(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "-".into()
    }
}

fn secs(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.3}"),
        _ => "-".into(),
    }
}

/// The comparison table: one row per scheduler.
pub fn table(runs: &[Run], baseline: &str) -> String {
    let base = runs
        .iter()
        .find(|r| r.name() == baseline)
        .map(|r| &r.summary);
    let with_deadlines = runs.iter().any(|r| r.summary.deadlines.is_some());
    let mut header = vec![
        "scheduler",
        "coflows",
        "avg CCT s",
        "p50 s",
        "p95 s",
        "p99 s",
        "SN s",
        "LN s",
        "SW s",
        "LW s",
    ];
    let avg_head = format!("avg x {baseline}");
    let p95_head = format!("p95 x {baseline}");
    header.push(&avg_head);
    header.push(&p95_head);
    if with_deadlines {
        header.push("met deadline");
    }
    header.push("wall s");
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for r in runs {
        let s = &r.summary;
        let mut row = vec![
            r.name().to_string(),
            s.coflows.to_string(),
            secs(Some(s.avg_cct_s)),
            secs(Some(s.p50_cct_s)),
            secs(Some(s.p95_cct_s)),
            secs(Some(s.p99_cct_s)),
        ];
        for bin in Bin::ALL {
            row.push(secs(s.avg_cct_by_bin_s.get(bin.name()).copied()));
        }
        let (avg, p95) = base.map_or((f64::NAN, f64::NAN), |b| speedups(s, b));
        row.push(ratio(avg));
        row.push(ratio(p95));
        if with_deadlines {
            row.push(match s.deadlines {
                Some(d) => format!(
                    "{:.1}% ({}/{})",
                    100.0 * d.met_fraction,
                    d.met,
                    d.with_deadline
                ),
                None => "-".into(),
            });
        }
        row.push(format!("{:.3}", s.wall_s));
        rows.push(row);
    }
    aligned(&rows)
}

/// Rows of cells as an aligned table under a rule (first column left, the rest right).
pub fn aligned(rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| {
                if c == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        if i == 0 {
            let _ = writeln!(
                out,
                "{}",
                "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1))
            );
        }
    }
    out
}

#[derive(Serialize)]
struct JsonSummary<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    speedup_avg_cct: f64,
    speedup_p95_cct: f64,
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::plot::make_dir(dir)?;
    }
    let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    Ok(BufWriter::new(f))
}

/// `{"trace": ..., "results": [{"scheduler", "summary", "coflows": [...]}, ...]}`.
pub fn write_json(
    path: &Path,
    trace: &str,
    fabric: &Fabric,
    opts: &SchedOptions,
    runs: &[Run],
    baseline: &str,
) -> Result<()> {
    write_value(path, &json_doc(trace, fabric, opts, runs, baseline))
}

/// The document [`write_json`] writes, for callers that add fields to it.
pub fn json_doc(
    trace: &str,
    fabric: &Fabric,
    opts: &SchedOptions,
    runs: &[Run],
    baseline: &str,
) -> serde_json::Value {
    let base = runs
        .iter()
        .find(|r| r.name() == baseline)
        .map(|r| &r.summary);
    let results: Vec<_> = runs
        .iter()
        .map(|r| {
            let (a, p) = base.map_or((f64::NAN, f64::NAN), |b| speedups(&r.summary, b));
            json!({
                "scheduler": r.name(),
                "summary": JsonSummary { summary: &r.summary, speedup_avg_cct: a, speedup_p95_cct: p },
                "coflows": r.output.coflows,
            })
        })
        .collect();
    json!({
        "trace": trace,
        "ports": fabric.ports(),
        "fabric": fabric,
        "baseline": baseline,
        "options": opts,
        "results": results,
    })
}

pub fn write_value(path: &Path, doc: &serde_json::Value) -> Result<()> {
    let mut w = create(path)?;
    serde_json::to_writer(&mut w, doc)
        .map_err(anyhow::Error::from)
        .and_then(|()| Ok(w.flush()?))
        .with_context(|| format!("writing {}", path.display()))
}

/// One row per (scheduler, coflow).
pub fn write_csv(path: &Path, runs: &[Run]) -> Result<()> {
    let mut w = create(path)?;
    csv_rows(&mut w, runs).with_context(|| format!("writing {}", path.display()))
}

fn csv_rows(w: &mut BufWriter<File>, runs: &[Run]) -> Result<()> {
    writeln!(
        w,
        "scheduler,id,arrival_s,finish_s,cct_s,isolated_cct_s,bytes,flows,length_bytes,bin,deadline_s,met_deadline,avg_fct_s"
    )?;
    for r in runs {
        for c in &r.output.coflows {
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{},{},{},{},{}",
                r.name(),
                c.id,
                c.arrival_s,
                c.finish_s,
                c.cct_s,
                c.isolated_cct_s,
                c.bytes,
                c.flows,
                c.length_bytes,
                c.bin.name(),
                c.deadline_s.map(|d| d.to_string()).unwrap_or_default(),
                c.met_deadline.map(|m| m.to_string()).unwrap_or_default(),
                c.avg_fct_s,
            )?;
        }
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_flowsim::CoflowOutcome;

    /// Adversarial pass 32, A9: a write that fails (`/dev/full`) did not name the file.
    #[test]
    fn a_failed_write_names_the_file() {
        let full = Path::new("/dev/full");
        if !full.exists() {
            println!("skipped: no /dev/full");
            return;
        }
        let e = format!("{:#}", write_value(full, &json!({"x": 1})).unwrap_err());
        assert!(
            e.contains("writing /dev/full") && e.contains("No space"),
            "{e}"
        );
        let e = format!("{:#}", write_csv(full, &[run("varys", 1.0)]).unwrap_err());
        assert!(
            e.contains("writing /dev/full") && e.contains("No space"),
            "{e}"
        );
    }

    /// A run of one coflow of this CCT (0 is what a coflow of no bytes would give).
    fn run(name: &str, cct_s: f64) -> Run {
        Run::new(SimOutput {
            scheduler: name.into(),
            coflows: vec![CoflowOutcome {
                id: 1,
                arrival_s: 0.0,
                finish_s: cct_s,
                cct_s,
                isolated_cct_s: cct_s,
                bytes: 0.0,
                flows: 1,
                length_bytes: 0.0,
                bin: Bin::ALL[0],
                deadline_s: None,
                met_deadline: None,
                avg_fct_s: cct_s,
                fct_spread: 0.0,
            }],
            decisions: 1,
            redistributions: 0,
            makespan_s: cct_s,
            wall_s: 0.0,
        })
    }

    #[test]
    fn undefined_speed_ups_are_a_dash_in_the_table_and_null_in_the_json() {
        let runs = [run("fifo", 0.0), run("fair", 0.0)];
        let t = table(&runs, "fair");
        assert!(!t.contains("NaN") && !t.contains("inf"), "{t}");
        let fifo = t.lines().find(|l| l.starts_with("fifo")).unwrap();
        let cells: Vec<&str> = fifo.split_whitespace().collect();
        // avg x fair and p95 x fair, before the wall time.
        assert_eq!(cells[cells.len() - 3..cells.len() - 1], ["-", "-"], "{t}");
        let doc = json_doc(
            "t",
            &Fabric::uniform_bps(2, 1e9),
            &SchedOptions::default(),
            &runs,
            "fair",
        );
        let text = serde_json::to_string(&doc).unwrap();
        assert!(!text.contains("NaN"), "{text}");
        assert!(doc["results"][0]["summary"]["speedup_avg_cct"].is_null());
        // A defined ratio is still a number.
        let t = table(&[run("fifo", 1.0), run("fair", 2.0)], "fair");
        assert!(t.contains("2.00"), "{t}");
    }
}
