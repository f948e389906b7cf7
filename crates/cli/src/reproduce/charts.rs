//! The reproduction's charts: CCT CDFs (log x) and average CCT per bin over Varys's (log y).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use super::runs::Results;
use coflowkit_simcmd::plot::{ccts, cdf_svg, color, legend, render};

/// A CDF of CCTs of the runs `keys` (legend: `label`) into `dir/file`.
pub fn cdf(
    dir: &Path,
    file: &str,
    title: &str,
    results: &Results,
    keys: &[(&str, &str)],
) -> Result<PathBuf> {
    coflowkit_simcmd::plot::make_dir(dir)?;
    let path = dir.join(file);
    let series: Vec<(&str, Vec<f64>)> = keys
        .iter()
        .filter_map(|&(key, label)| {
            let r = results.get(key)?;
            Some((label, ccts(r)))
        })
        .collect();
    cdf_svg(&path, title, &series)?;
    Ok(path)
}

/// Grouped bars: for each bin, each run's average CCT over `base`'s (log y).
pub fn per_bin(
    dir: &Path,
    file: &str,
    title: &str,
    results: &Results,
    base: &str,
    keys: &[(&str, &str)],
) -> Result<PathBuf> {
    coflowkit_simcmd::plot::make_dir(dir)?;
    let path = dir.join(file);
    let bins = ["SN", "LN", "SW", "LW"];
    let base_run = results
        .get(base)
        .ok_or_else(|| anyhow!("{file}: no run {base}"))?;
    let ratio = |key: &str, bin: &str| -> Option<f64> {
        let b = base_run.summary.avg_cct_by_bin_s.get(bin)?;
        let v = results.get(key)?.summary.avg_cct_by_bin_s.get(bin)?;
        (b > &0.0 && v > &0.0).then(|| v / b)
    };
    let values: Vec<f64> = keys
        .iter()
        .flat_map(|&(k, _)| bins.iter().filter_map(move |b| ratio(k, b)))
        .collect();
    let lo = values.iter().copied().fold(1.0f64, f64::min) * 0.8;
    let hi = values.iter().copied().fold(1.0f64, f64::max) * 1.5;
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(&path, (900, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..bins.len() as f64 - 0.5, (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(bins.len() + 1)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < bins.len() {
                    bins[i as usize].to_string()
                } else {
                    String::new()
                }
            })
            .y_desc(format!("avg CCT / {base}'s (log scale)"))
            .draw()?;
        let width = 0.8 / keys.len().max(1) as f64;
        for (i, &(key, label)) in keys.iter().enumerate() {
            let style = color(i).filled();
            let bars: Vec<_> = bins
                .iter()
                .enumerate()
                .filter_map(|(b, bin)| {
                    let v = ratio(key, bin)?;
                    let x0 = b as f64 - 0.4 + i as f64 * width;
                    Some(Rectangle::new([(x0, lo), (x0 + width * 0.9, v)], style))
                })
                .collect();
            chart
                .draw_series(bars)?
                .label(label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], style));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present()?;
        Ok(())
    };
    render(&path, draw)?;
    Ok(path)
}
