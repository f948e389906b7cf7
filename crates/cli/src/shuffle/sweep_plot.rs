//! Thesis-style sweep charts (Figures 6.1, 6.2): a metric against skewness with a p10..p90
//! band and the median per protocol, and utilization over time for one run per protocol.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use coflowkit_pktsim::UtilSample;
use plotters::prelude::*;

use crate::plot::{color, legend, named_line, render};

use super::sweep_rows::{Band, Point};

/// Which summarized metric a chart shows.
#[derive(Clone, Copy)]
pub enum Metric {
    Throughput,
    Optimality,
}

impl Metric {
    fn band(self, p: &Point) -> Band {
        match self {
            Metric::Throughput => p.throughput,
            Metric::Optimality => p.optimality,
        }
    }
    fn labels(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Metric::Throughput => (
                "throughput_vs_skew.svg",
                "Shuffle throughput vs message skewness (median, p10-p90 band)",
                "throughput (Gbps per node)",
            ),
            Metric::Optimality => (
                "optimality_vs_skew.svg",
                "Optimality vs message skewness (median, p10-p90 band)",
                "optimality (throughput / bound)",
            ),
        }
    }
}

/// Draws `metric` against skewness target for every protocol in `protocols`; returns the file.
pub fn band_chart(
    dir: &Path,
    metric: Metric,
    points: &[Point],
    protocols: &[String],
) -> Result<PathBuf> {
    let (name, title, y_desc) = metric.labels();
    let file = dir.join(name);
    let finite = |x: f64| x.is_finite();
    let ys = points
        .iter()
        .flat_map(|p| {
            let b = metric.band(p);
            [b.p10, b.p90]
        })
        .filter(|&x| finite(x));
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    if !lo.is_finite() {
        return Err(anyhow!("no finite {y_desc} to plot"));
    }
    let pad = ((hi - lo) * 0.08).max(1e-3 * hi.abs().max(1.0));
    let (y0, y1) = ((lo - pad).max(0.0), hi + pad);
    let xs = points.iter().map(|p| p.skew_target);
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 0.05, x0 + 0.05)
    };
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(&file, (900, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("message skewness (target)")
            .y_desc(y_desc)
            .draw()?;
        for (i, proto) in protocols.iter().enumerate() {
            let pts: Vec<&Point> = points.iter().filter(|p| &p.protocol == proto).collect();
            if pts.is_empty() {
                continue;
            }
            let color = color(i);
            let mut band: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.skew_target, metric.band(p).p90))
                .collect();
            band.extend(
                pts.iter()
                    .rev()
                    .map(|p| (p.skew_target, metric.band(p).p10)),
            );
            chart.draw_series(std::iter::once(Polygon::new(
                band,
                color.mix(0.18).filled(),
            )))?;
            let median = pts.iter().map(|p| (p.skew_target, metric.band(p).p50));
            named_line(&mut chart, i, proto, median)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
        root.present()?;
        Ok(())
    };
    render(&file, draw)?;
    Ok(file)
}

/// One representative run: its protocol, the skewness simulated, its samples and the ideal
/// completion time that normalizes the x axis.
pub struct UtilRun {
    pub protocol: String,
    pub skew: f64,
    pub samples: Vec<UtilSample>,
    pub ideal_s: f64,
}

/// Uplink (top) and downlink (bottom) utilization over time normalized to the ideal
/// completion time (1.0 = optimal), one line per protocol.
pub fn utilization_chart(dir: &Path, runs: &[UtilRun]) -> Result<PathBuf> {
    let file = dir.join("utilization.svg");
    let x1 = runs
        .iter()
        .flat_map(|r| r.samples.iter().map(move |s| s.time_s / r.ideal_s))
        .filter(|x| x.is_finite())
        .fold(1.0f64, f64::max);
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(&file, (900, 800)).into_drawing_area();
        root.fill(&WHITE)?;
        let panels = root.split_evenly((2, 1));
        for (panel, (label, up)) in panels.iter().zip([("uplink", true), ("downlink", false)]) {
            let skew = runs.first().map_or(0.0, |r| r.skew);
            let mut chart = ChartBuilder::on(panel)
                .caption(
                    format!(
                        "Aggregate {label} utilization, one run per protocol (skewness {skew:.2})"
                    ),
                    ("sans-serif", 18),
                )
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(55)
                .build_cartesian_2d(0.0..x1 * 1.02, 0.0..1.05)?;
            chart
                .configure_mesh()
                .x_desc("time / ideal completion time")
                .y_desc("fraction of host links busy")
                .draw()?;
            for (i, r) in runs.iter().enumerate() {
                let pts = r
                    .samples
                    .iter()
                    .map(|s| (s.time_s / r.ideal_s, if up { s.up } else { s.down }));
                named_line(&mut chart, i, &r.protocol, pts)?;
            }
            legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
        }
        root.present()?;
        Ok(())
    };
    render(&file, draw)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shuffle::sweep_rows::{summarize, tests::synthetic_rows};

    #[test]
    fn charts_from_synthetic_rows() {
        let dir = tempfile::tempdir().unwrap();
        let protos = vec!["grpf".to_string(), "hadoop-5".to_string()];
        let pts = summarize(&synthetic_rows(), &protos, &[0.0, 0.5, 1.0]);
        for m in [Metric::Throughput, Metric::Optimality] {
            let f = band_chart(dir.path(), m, &pts, &protos).unwrap();
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(
                svg.contains("hadoop-5") && svg.contains("<polygon"),
                "legend and bands"
            );
        }
        let runs: Vec<UtilRun> = protos
            .iter()
            .map(|p| UtilRun {
                protocol: p.clone(),
                skew: 0.5,
                samples: (0..50)
                    .map(|k| UtilSample {
                        time_s: k as f64 * 1e-5,
                        up: 0.9,
                        down: 0.8,
                    })
                    .collect(),
                ideal_s: 4e-4,
            })
            .collect();
        let f = utilization_chart(dir.path(), &runs).unwrap();
        assert!(std::fs::read_to_string(f).unwrap().contains("downlink"));
    }
}
