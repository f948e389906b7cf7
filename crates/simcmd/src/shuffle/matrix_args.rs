//! Generator flags shared by `shuffle gen` and `shuffle sweep`.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use coflowkit_shuffle::matrix::{
    sort_bytes, CdfInterp, GenOptions, GeneralOptions, Generator, Placement, RowFill, SkewMethod,
    SortOptions, MAX_CDF_POINTS, MAX_KEYS,
};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GeneratorArg {
    /// Random CDF, row filling, greedy placement, interval walk (thesis §5.2).
    General,
    /// Bucket sort of duplicate-heavy keys (thesis §5.1).
    Sort,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SkewMethodArg {
    /// Bisection over the CDF's spread on fixed random numbers (close to the target).
    Bisect,
    /// Fresh random CDFs until one lands within the tolerance (the thesis' sampling).
    Sample,
    /// One random CDF on the thesis' linear axis; the target is ignored.
    Literal,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RowFillArg {
    Truncate,
    Scale,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum WalkOrderArg {
    Greedy,
    Random,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CdfArg {
    Step,
    Linear,
}

#[derive(Args, Debug, Clone)]
pub struct MatrixArgs {
    /// Which generator builds the matrix.
    #[arg(long, value_enum, default_value = "general", help_heading = "Matrix")]
    pub generator: GeneratorArg,
    /// Average message size in full packets (at least 1: a shuffle of no data measures
    /// nothing; at most 2^30, the most one message may have).
    #[arg(long, default_value_t = 16, help_heading = "Matrix",
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=1 << 30))]
    pub avg_packets: u64,
    /// General generator: how the target skewness is reached.
    #[arg(long, value_enum, default_value = "bisect", help_heading = "Matrix")]
    pub skew_method: SkewMethodArg,
    /// General generator: stop the search within this absolute skewness error (10^-6 to 1:
    /// below that the search only runs out its tries).
    #[arg(long, default_value_t = 0.002, help_heading = "Matrix",
          value_parser = crate::flag_range::f64_in(1e-6, 1.0))]
    pub skew_tolerance: f64,
    /// General generator: re-aims on the final skewness (bisect) or CDFs to try (sample), at
    /// most 10,000 (2^64 - 1 ran for ever).
    #[arg(long, help_heading = "Matrix",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=10_000))]
    pub skew_tries: Option<usize>,
    /// General generator: how a row reaches N.
    #[arg(long, value_enum, default_value = "truncate", help_heading = "Matrix")]
    pub row_fill: RowFillArg,
    /// General generator: message order before the interval walk (greedy = Figure 5.5).
    #[arg(long, value_enum, default_value = "greedy", help_heading = "Matrix")]
    pub walk_order: WalkOrderArg,
    /// General generator: how the random CDF joins its points.
    #[arg(long, value_enum, default_value = "step", help_heading = "Matrix")]
    pub cdf: CdfArg,
    /// General generator: fewest and most random CDF points, as MIN:MAX (1 to 10,000).
    #[arg(long, default_value = "1:10", help_heading = "Matrix")]
    pub cdf_points: String,
    /// General generator: sizes reach down to N^-FLOOR average messages (log axis).
    #[arg(long, default_value_t = 1.0, help_heading = "Matrix")]
    pub log_floor: f64,
    /// Sort generator: keys per node = this x nodes (1 to 2^31; at most 2^31 keys in all, 8
    /// bytes each, and what this process may hold).
    #[arg(long, default_value_t = 100, help_heading = "Matrix",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_KEYS as u64))]
    pub keys_factor: usize,
    /// Sort generator: probability of the hot key, 0 to 1 (default: derived from --skew).
    #[arg(long, help_heading = "Matrix", value_parser = crate::flag_range::f64_in(0.0, 1.0))]
    pub hot_fraction: Option<f64>,
    /// Sort generator: keep rows and columns in sort order (data mostly local).
    #[arg(long, help_heading = "Matrix")]
    pub no_shuffle: bool,
}

impl MatrixArgs {
    pub fn generator(&self) -> Generator {
        match self.generator {
            GeneratorArg::General => Generator::General,
            GeneratorArg::Sort => Generator::Sort,
        }
    }

    /// The generator's options for a matrix of `nodes` nodes; the sort generator's keys are
    /// checked against what this process may hold (`sim_memory`).
    pub fn options(&self, nodes: usize) -> Result<GenOptions> {
        let (lo, hi) = match self.cdf_points.split_once(':') {
            Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
            None => bail!("--cdf-points `{}`: expected MIN:MAX", self.cdf_points),
        };
        let (Ok(min_points), Ok(max_points)) = (lo, hi) else {
            bail!(
                "--cdf-points `{}`: expected MIN:MAX whole numbers",
                self.cdf_points
            );
        };
        if min_points == 0 || min_points > max_points || max_points > MAX_CDF_POINTS {
            bail!(
                "--cdf-points `{}`: expected MIN:MAX with 1 <= MIN <= MAX <= {MAX_CDF_POINTS} (the \
                 thesis draws 1 to 10)",
                self.cdf_points
            );
        }
        if matches!(self.generator, GeneratorArg::Sort) {
            let need = sort_bytes(nodes, self.keys_factor);
            crate::sim_memory::fits(need, 1).map_err(|short| {
                anyhow::anyhow!(
                    "--keys-factor {}: {nodes} nodes x {} keys per node (8 bytes each) would \
                     need {}: lower --keys-factor or --nodes, or raise the limit",
                    self.keys_factor,
                    (self.keys_factor as u128) * (nodes as u128),
                    short.describe()
                )
            })?;
        }
        if self.skew_tolerance.is_nan() || self.skew_tolerance < 0.0 {
            bail!(
                "--skew-tolerance {}: must be 0 or more",
                self.skew_tolerance
            );
        }
        let skew_method = match self.skew_method {
            SkewMethodArg::Bisect => SkewMethod::Bisect {
                corrections: self.skew_tries.unwrap_or(3),
                shapes: 4,
            },
            SkewMethodArg::Sample => SkewMethod::Sample {
                tries: self.skew_tries.unwrap_or(200),
            },
            SkewMethodArg::Literal => SkewMethod::Literal,
        };
        Ok(GenOptions {
            general: GeneralOptions {
                row_fill: match self.row_fill {
                    RowFillArg::Truncate => RowFill::Truncate,
                    RowFillArg::Scale => RowFill::Scale,
                },
                placement: match self.walk_order {
                    WalkOrderArg::Greedy => Placement::Greedy,
                    WalkOrderArg::Random => Placement::Random,
                },
                interp: match self.cdf {
                    CdfArg::Step => CdfInterp::Step,
                    CdfArg::Linear => CdfInterp::Linear,
                },
                min_points,
                max_points,
                skew_method,
                log_floor: self.log_floor,
                tolerance: self.skew_tolerance,
            },
            sort: SortOptions {
                keys_factor: self.keys_factor,
                hot_fraction: self.hot_fraction,
                shuffle: !self.no_shuffle,
            },
        })
    }

    /// One line for a file header: how the matrix was made.
    pub fn describe(&self) -> String {
        match self.generator {
            GeneratorArg::General => format!(
                "generator=general skew-method={:?} row-fill={:?} walk-order={:?} cdf={:?} cdf-points={} log-floor={}",
                self.skew_method, self.row_fill, self.walk_order, self.cdf, self.cdf_points, self.log_floor
            )
            .to_lowercase(),
            GeneratorArg::Sort => format!(
                "generator=sort keys-factor={} hot-fraction={} shuffle={}",
                self.keys_factor,
                self.hot_fraction
                    .map_or("from-skew".to_string(), |d| d.to_string()),
                !self.no_shuffle
            ),
        }
    }
}
