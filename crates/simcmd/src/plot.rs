//! Charts people would rather look at than read: the CCT CDF of every scheduler (log x axis),
//! and the pieces every chart of the CLI shares (colors, named lines, the legend box).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::Run;

pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Matplotlib's tab10: distinct on white, unlike Palette99's pale yellow.
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

pub fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Draw into `file` with `body`, naming the file in any error.
pub fn render(file: &Path, body: impl FnOnce() -> DrawResult) -> Result<()> {
    body().map_err(|e| anyhow!("drawing {}: {e}", file.display()))
}

/// Line `i` of a chart, in the i-th color, with its legend entry.
pub fn named_line<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    i: usize,
    name: &str,
    pts: impl IntoIterator<Item = (f64, f64)>,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let style = color(i).stroke_width(2);
    chart
        .draw_series(LineSeries::new(pts, style))?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    Ok(())
}

/// The legend box every chart uses.
pub fn legend<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    at: SeriesLabelPosition,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(at)
        .draw()?;
    Ok(())
}

/// A titled chart with linear axes on `area`.
pub fn linear<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Result<
    ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    Box<dyn std::error::Error>,
> {
    Ok(ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(x, y)?)
}

/// Why `dir` cannot be a directory to write into (the shared check,
/// [`coflowkit_model::out_path::dir_problem`]).
pub use coflowkit_model::out_path::dir_problem;

/// `create_dir_all(dir)`, saying what `dir` is when that is why it fails.
pub fn make_dir(dir: &Path) -> Result<()> {
    if let Some(why) = dir_problem(dir) {
        return Err(anyhow!("creating {}: {why}", dir.display()));
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

/// Draw `cct_cdf.svg` into `dir`; returns the file written.
pub fn cct_cdf(dir: &Path, runs: &[Run]) -> Result<PathBuf> {
    make_dir(dir)?;
    let file = dir.join("cct_cdf.svg");
    let series: Vec<(&str, Vec<f64>)> = runs.iter().map(|r| (r.name(), ccts(r))).collect();
    cdf_svg(&file, "Coflow completion time CDF", &series)?;
    Ok(file)
}

/// A run's CCTs, sorted.
pub fn ccts(r: &Run) -> Vec<f64> {
    let mut v: Vec<f64> = r.output.coflows.iter().map(|c| c.cct_s).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// CDFs of sorted CCTs, one line per named series, log x, into `file`.
pub fn cdf_svg(file: &Path, title: &str, series: &[(&str, Vec<f64>)]) -> Result<()> {
    let positive = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|&x| x > 0.0);
    let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    if !lo.is_finite() {
        return Err(anyhow!(
            "{}: no coflow with a positive CCT to plot",
            file.display()
        ));
    }
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(file, (900, 600)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
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
            let n = v.len() as f64;
            // At most ~600 points a line keeps the SVG small on large traces.
            let step = (v.len() / 600).max(1);
            let pts = v
                .iter()
                .enumerate()
                .filter(|(k, _)| k % step == 0 || k + 1 == v.len())
                .map(|(k, &x)| (x.max(lo), (k + 1) as f64 / n));
            named_line(&mut chart, i, name, pts)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present()?;
        Ok(())
    };
    render(file, draw)
}
