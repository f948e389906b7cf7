//! Charts people would rather look at than read: the CCT CDF of every scheduler, log x axis.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;

use crate::report::Run;

/// Draw `cct_cdf.svg` into `dir`; returns the file written.
pub fn cct_cdf(dir: &Path, runs: &[Run]) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("cct_cdf.svg");
    let series: Vec<(&str, Vec<f64>)> = runs
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = r.output.coflows.iter().map(|c| c.cct_s).collect();
            v.sort_by(f64::total_cmp);
            (r.name(), v)
        })
        .collect();
    let positive = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|&x| x > 0.0);
    let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    if !lo.is_finite() {
        return Err(anyhow!("no coflow with a positive CCT to plot"));
    }
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(&file, (900, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Coflow completion time CDF", ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d((lo * 0.9..hi * 1.1).log_scale(), 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc("CCT (s, log scale)")
            .y_desc("fraction of coflows")
            .draw()?;
        for (i, (name, v)) in series.iter().enumerate() {
            let color = Palette99::pick(i).stroke_width(2);
            let n = v.len() as f64;
            let pts = v
                .iter()
                .enumerate()
                .map(|(k, &x)| (x.max(lo), (k + 1) as f64 / n));
            chart
                .draw_series(LineSeries::new(pts, color))?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow!("drawing {}: {e}", file.display()))?;
    Ok(file)
}
