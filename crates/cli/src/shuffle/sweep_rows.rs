//! `shuffle sweep` results: one row per run, percentile summaries, and their CSV files.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

/// One simulated run.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub protocol: String,
    pub skew_target: f64,
    /// Skewness of the packet matrix actually simulated.
    pub skew: f64,
    pub run: usize,
    pub seed: u64,
    pub completion_s: f64,
    pub throughput_gbps: f64,
    pub bound_gbps: f64,
    pub optimality: f64,
    pub peak_buffer_bytes: u64,
    /// Peak data bytes in one switch output port.
    pub peak_port_bytes: u64,
    /// Peak data bytes in the worst ToR, and in the core switch.
    pub peak_tor_bytes: u64,
    pub peak_core_bytes: u64,
}

pub const HEADER: &str = "protocol,skew_target,skew,run,seed,completion_s,throughput_gbps,bound_gbps,optimality,peak_buffer_bytes,peak_port_bytes,peak_tor_bytes,peak_core_bytes";

impl Row {
    pub fn csv(&self) -> String {
        format!(
            "{},{},{:.6},{},{},{:.9},{:.6},{:.6},{:.6},{},{},{},{}",
            self.protocol,
            self.skew_target,
            self.skew,
            self.run,
            self.seed,
            self.completion_s,
            self.throughput_gbps,
            self.bound_gbps,
            self.optimality,
            self.peak_buffer_bytes,
            self.peak_port_bytes,
            self.peak_tor_bytes,
            self.peak_core_bytes
        )
    }
}

/// The q-quantile (q in [0, 1]) of sorted `v`, interpolating linearly between order
/// statistics (numpy's default); NaN for an empty slice.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        len => {
            let pos = q.clamp(0.0, 1.0) * (len - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = (lo + 1).min(len - 1);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

/// p10, p50 and p90.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
}

impl Band {
    pub fn of(values: impl Iterator<Item = f64>) -> Band {
        let mut v: Vec<f64> = values.collect();
        v.sort_by(f64::total_cmp);
        Band {
            p10: quantile(&v, 0.1),
            p50: quantile(&v, 0.5),
            p90: quantile(&v, 0.9),
        }
    }
}

/// The runs of one protocol at one skewness point, summarized.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub protocol: String,
    pub skew_target: f64,
    pub runs: usize,
    pub skew_mean: f64,
    pub throughput: Band,
    pub optimality: Band,
    pub peak_buffer: Band,
}

/// One `Point` per (protocol, skew target), protocols in `protocols` order, targets ascending.
pub fn summarize(rows: &[Row], protocols: &[String], targets: &[f64]) -> Vec<Point> {
    let mut out = Vec::new();
    for p in protocols {
        for &t in targets {
            let sel: Vec<&Row> = rows
                .iter()
                .filter(|r| &r.protocol == p && r.skew_target == t)
                .collect();
            if sel.is_empty() {
                continue;
            }
            out.push(Point {
                protocol: p.clone(),
                skew_target: t,
                runs: sel.len(),
                skew_mean: sel.iter().map(|r| r.skew).sum::<f64>() / sel.len() as f64,
                throughput: Band::of(sel.iter().map(|r| r.throughput_gbps)),
                optimality: Band::of(sel.iter().map(|r| r.optimality)),
                peak_buffer: Band::of(sel.iter().map(|r| r.peak_buffer_bytes as f64)),
            });
        }
    }
    out
}

pub fn write_runs(path: &Path, rows: &[Row]) -> Result<()> {
    let mut s = String::with_capacity(rows.len() * 96 + 128);
    s.push_str(HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&r.csv());
        s.push('\n');
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

pub fn write_summary(path: &Path, points: &[Point]) -> Result<()> {
    let mut s = String::from(
        "protocol,skew_target,runs,skew_mean,throughput_p10,throughput_p50,throughput_p90,optimality_p10,optimality_p50,optimality_p90,peak_buffer_p50\n",
    );
    for p in points {
        let _ = writeln!(
            s,
            "{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.0}",
            p.protocol,
            p.skew_target,
            p.runs,
            p.skew_mean,
            p.throughput.p10,
            p.throughput.p50,
            p.throughput.p90,
            p.optimality.p10,
            p.optimality.p50,
            p.optimality.p90,
            p.peak_buffer.p50
        );
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn synthetic_rows() -> Vec<Row> {
        let mut rows = Vec::new();
        for (pi, p) in ["grpf", "hadoop-5"].iter().enumerate() {
            for t in [0.0, 0.5, 1.0] {
                for run in 0..10 {
                    let tput = 25.0 - 5.0 * pi as f64 * (1.0 - t) - run as f64 * 0.1;
                    rows.push(Row {
                        protocol: p.to_string(),
                        skew_target: t,
                        skew: t + 0.001,
                        run,
                        seed: run as u64,
                        completion_s: 1e-3,
                        throughput_gbps: tput,
                        bound_gbps: 25.0,
                        optimality: tput / 25.0,
                        peak_buffer_bytes: 1500 * run as u64,
                        peak_port_bytes: 1500 * run as u64,
                        peak_tor_bytes: 1500 * run as u64,
                        peak_core_bytes: 0,
                    });
                }
            }
        }
        rows
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.1), 1.4);
        assert!((quantile(&v, 0.9) - 4.6).abs() < 1e-12);
        assert_eq!(quantile(&[7.0], 0.9), 7.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn summary_bands_per_protocol_and_point() {
        let rows = synthetic_rows();
        let protos = vec!["grpf".to_string(), "hadoop-5".to_string()];
        let pts = summarize(&rows, &protos, &[0.0, 0.5, 1.0]);
        assert_eq!(pts.len(), 6);
        let h0 = &pts[3];
        assert_eq!(
            (h0.protocol.as_str(), h0.skew_target, h0.runs),
            ("hadoop-5", 0.0, 10)
        );
        // throughputs 20.0, 19.9, ..., 19.1: median 19.55, p10 19.19, p90 19.91
        assert!((h0.throughput.p50 - 19.55).abs() < 1e-9);
        assert!((h0.throughput.p10 - 19.19).abs() < 1e-9);
        assert!((h0.throughput.p90 - 19.91).abs() < 1e-9);
        assert!((h0.skew_mean - 0.001).abs() < 1e-12);
    }

    #[test]
    fn csv_files_have_one_line_per_row() {
        let dir = tempfile::tempdir().unwrap();
        let rows = synthetic_rows();
        write_runs(&dir.path().join("runs.csv"), &rows).unwrap();
        let text = std::fs::read_to_string(dir.path().join("runs.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), rows.len() + 1);
        assert_eq!(lines[0], HEADER);
        let cols = HEADER.split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == cols));
        assert!(lines[1].starts_with("grpf,0,0.001000,0,0,"));
    }
}
