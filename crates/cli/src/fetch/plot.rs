//! Charts for the `fetch` commands: cumulative completion ratio over time (the paper's Fig. 5
//! and 9) and the utilization gain over random (Fig. 13 and 14).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use serde::Serialize;

use crate::plot::{legend, linear, named_line, render};

type Series = Vec<(String, Vec<(f64, f64)>)>;

fn lines(file: &Path, title: &str, x_desc: &str, y_desc: &str, series: &Series) -> Result<()> {
    let pts = series.iter().flat_map(|(_, v)| v.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return Err(anyhow!("nothing to plot"));
    }
    let pad = |a: f64, b: f64| if b > a { (b - a) * 0.05 } else { 1.0 };
    let (px, py) = (pad(x0, x1), pad(y0, y1));
    render(file, || {
        let root = SVGBackend::new(file, (900, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = linear(&root, title, x0 - px..x1 + px, y0 - py..y1 + py)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()?;
        for (i, (name, v)) in series.iter().enumerate() {
            named_line(&mut chart, i, name, v.iter().copied())?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present()?;
        Ok(())
    })
}

/// `fetch_completion_ratio.svg`: fraction of shuffle bytes fetched over time, per policy.
pub fn completion_ratio(dir: &Path, curves: &[(&str, &[(f64, f64)])]) -> Result<PathBuf> {
    coflowkit_simcmd::plot::make_dir(dir)?;
    let file = dir.join("fetch_completion_ratio.svg");
    let series: Series = curves
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_vec()))
        .collect();
    lines(
        &file,
        "Cumulative completion ratio of the shuffle",
        "time (s)",
        "fraction of bytes fetched",
        &series,
    )?;
    Ok(file)
}

/// One point of `fetch util`: a policy's mean utilization at one cluster shape.
#[derive(Serialize, Clone)]
pub struct UtilPoint {
    pub nodes: usize,
    pub low_share: f64,
    pub policy: String,
    pub runs: u64,
    pub mean_util_bps: f64,
    pub capacity_bps: f64,
    /// Mean utilization over capacity.
    pub of_capacity: f64,
    /// (util - util_random) / util_random, percent.
    pub gain_pct: f64,
}

/// `fetch_util_gain.svg`: gain of each policy over random, against node count (`by_nodes`) or
/// against the share of slow nodes.
pub fn gain(dir: &Path, points: &[UtilPoint], by_nodes: bool) -> Result<PathBuf> {
    coflowkit_simcmd::plot::make_dir(dir)?;
    let file = dir.join("fetch_util_gain.svg");
    let mut series: Series = Vec::new();
    for p in points.iter().filter(|p| p.policy != "random") {
        let name = if by_nodes {
            format!("{} (low share {})", p.policy, p.low_share)
        } else {
            format!("{} ({} nodes)", p.policy, p.nodes)
        };
        let x = if by_nodes {
            p.nodes as f64
        } else {
            p.low_share
        };
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push((x, p.gain_pct)),
            None => series.push((name, vec![(x, p.gain_pct)])),
        }
    }
    let x_desc = if by_nodes {
        "nodes"
    } else {
        "share of slow nodes"
    };
    lines(
        &file,
        "Mean max-min utilization: gain over random",
        x_desc,
        "gain over random (%)",
        &series,
    )?;
    Ok(file)
}
