//! `coflowkit reproduce`: regenerate a paper's results document from the simulator, every
//! number beside the command that made it and a verdict judged by a stated tolerance.

mod charts;
mod doc;
mod overheads;
mod rows;
mod runs;
mod testbed;
mod verdict;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

#[derive(Subcommand, Debug)]
pub enum ReproduceCmd {
    /// The key results table of the coflow thesis (rows 1-33) on the FB trace:
    /// writes docs/coflow-thesis-results.md and its charts (takes tens of minutes;
    /// --quick runs a slice in seconds)
    CoflowThesis(ThesisArgs),
}

#[derive(Args, Debug)]
pub struct ThesisArgs {
    /// Replay only the first --quick-coflows coflows (a smoke test, not results)
    #[arg(long)]
    pub quick: bool,
    /// Coflows replayed by --quick (at least 1)
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub quick_coflows: usize,
    /// Coflow trace [default: the bundled FB trace]
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The document to write
    #[arg(
        long,
        default_value = "docs/coflow-thesis-results.md",
        value_name = "FILE"
    )]
    pub out: PathBuf,
    /// Directory of the charts (SVG)
    #[arg(long, default_value = "docs/coflow-thesis", value_name = "DIR")]
    pub charts: PathBuf,
    /// Skip the default-vs-recompute comparison (the slow part: a full decision per flow end)
    #[arg(long)]
    pub no_recompute: bool,
    /// Compare default and recompute on the first N coflows only (0 = the whole trace; ignored
    /// with --quick, which is a slice already)
    #[arg(long, default_value_t = 150, value_name = "N")]
    pub recompute_coflows: usize,
    /// Also measure rows 8, 9, 13, 19 and 20 on the emulated cluster: `coflowkit replay --local
    /// --netns` (root, `ip` and `tc`) of the FB hour on 10 daemons, each command twice (about
    /// 20 minutes; with --quick 4 daemons, 30 coflows, once: seconds). Without it those rows
    /// cite the last such run
    #[arg(long)]
    pub testbed: bool,
    /// Simulations run at once [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub jobs: Option<usize>,
}

pub fn run(cmd: ReproduceCmd) -> Result<()> {
    match cmd {
        ReproduceCmd::CoflowThesis(a) => coflow_thesis(a),
    }
}

/// `path` as written from `from_dir` when it lies below it, else as given.
fn relative(path: &Path, from_dir: &Path) -> String {
    path.strip_prefix(from_dir)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn coflow_thesis(a: ThesisArgs) -> Result<()> {
    // Before the runs (tens of minutes without --quick), not after them (pass 34, C9).
    crate::out::check_outputs(&[
        crate::out::Out::file_in_new_dirs("--out", Some(&a.out)),
        crate::out::Out::dir("--charts", Some(&a.charts)),
    ])?;
    let mut workload: Vec<String> = Vec::new();
    let mut command = "coflowkit reproduce coflow-thesis".to_string();
    if let Some(t) = &a.trace {
        workload.extend(["--trace".into(), t.display().to_string()]);
        command += &format!(" --trace {}", t.display());
    }
    if a.quick {
        workload.extend(["--coflows".into(), a.quick_coflows.to_string()]);
        command += " --quick";
        if a.quick_coflows != 10 {
            command += &format!(" --quick-coflows {}", a.quick_coflows);
        }
    }
    if a.no_recompute {
        command += " --no-recompute";
    }
    if a.testbed {
        command += " --testbed";
    }
    let slice = (!a.quick && a.recompute_coflows > 0).then_some(a.recompute_coflows);
    if !a.quick && a.recompute_coflows != 150 {
        command += &format!(" --recompute-coflows {}", a.recompute_coflows);
    }
    let (path, trace, fabric) = runs::load(&workload)?;
    let mut specs = rows::specs(!a.no_recompute, slice, trace.coflows.len());
    // The slowest first, so the pool ends together.
    specs.sort_by_key(|s| !s.key.starts_with("recompute-"));
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let progress = std::io::stderr().is_terminal();
    if progress {
        errln!("{} simulations, {jobs} at a time", specs.len());
    }
    let (results, tenants, dags) =
        runs::run_all(&specs, &workload, &trace, &fabric, jobs, progress)?;
    // Row 32: `hug bench` in this process, after the simulations so it has the cores.
    let machines: &[usize] = if a.quick {
        &rows::BENCH_MACHINES_QUICK
    } else {
        &rows::BENCH_MACHINES
    };
    let hug_bench = (machines.iter())
        .map(|&p| crate::hug::bench::measure_fabric(p, 10, 2.0, 21, 1))
        .collect::<Result<Vec<_>>>()
        .context("row 32: hug bench")?;
    // Rows 16 and 25: the coordinator's overheads on the live coordinator (seconds).
    let overheads = overheads::measure(a.quick).context("rows 16 and 25: coordinator overheads")?;
    // Rows 8, 9, 13, 19, 20: the emulated cluster, after the simulations (it wants the cores
    // quiet, so the links and not the CPU are its bottleneck).
    let testbed = if a.testbed {
        let setting = if a.quick {
            &testbed::QUICK
        } else {
            &testbed::FULL
        };
        Some(testbed::run(setting, a.trace.as_deref(), progress).context("--testbed")?)
    } else {
        None
    };
    let extra = rows::Extra {
        tenants,
        jobs: dags,
        hug_bench,
        optimized: !cfg!(debug_assertions),
        overheads: Some(overheads),
        testbed,
        trace: a.trace.clone(),
    };
    let rows = rows::rows(&results, &extra);

    let doc_dir = a.out.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut charts = Vec::new();
    let exact = [
        ("fair", "fair"),
        ("pfp", "pfp"),
        ("fifo", "fifo"),
        ("fifo-strict", "fifo-strict"),
        ("varys", "varys"),
        ("aalo", "aalo"),
    ];
    let f = charts::cdf(
        &a.charts,
        "cct_cdf_exact.svg",
        "CCT CDF, exact model",
        &results,
        &exact,
    )?;
    charts.push((relative(&f, &doc_dir), "CCT CDFs, exact model.".to_string()));
    let reference = [
        ("ref-fair", "FAIR"),
        ("ref-pfp", "PFP"),
        ("ref-fifo", "FIFO"),
        ("ref-sebf", "SEBF"),
        ("ref-aalo", "DARK"),
    ];
    let f = charts::cdf(
        &a.charts,
        "cct_cdf_reference.svg",
        "CCT CDF, reference rules (--model coflowsim)",
        &results,
        &reference,
    )?;
    charts.push((
        relative(&f, &doc_dir),
        "CCT CDFs under the reference rules.".to_string(),
    ));
    let f = charts::per_bin(
        &a.charts,
        "per_bin.svg",
        "Average CCT per bin over Varys's, exact model",
        &results,
        "varys",
        &[
            ("fair", "fair"),
            ("pfp", "pfp"),
            ("fifo", "fifo"),
            ("aalo", "aalo"),
        ],
    )?;
    charts.push((
        relative(&f, &doc_dir),
        "Average CCT per bin over Varys's (rows 10, 12, 21, 22), exact model.".to_string(),
    ));
    let f = charts::per_bin(
        &a.charts,
        "per_bin_reference.svg",
        "Average CCT per bin over SEBF's, reference rules",
        &results,
        "ref-sebf",
        &[
            ("ref-fair", "FAIR"),
            ("ref-pfp", "PFP"),
            ("ref-fifo", "FIFO"),
            ("ref-aalo", "DARK"),
        ],
    )?;
    charts.push((
        relative(&f, &doc_dir),
        "Average CCT per bin over SEBF's, reference rules.".to_string(),
    ));

    let ctx = doc::Context {
        command,
        trace: path.display().to_string(),
        coflows: trace.coflows.len(),
        flows: trace.flows(),
        quick: a.quick,
        specs: &specs,
        workload: &workload,
        charts,
        recompute_slice: slice,
    };
    let text = doc::render(&ctx, &rows, &results);
    if !doc_dir.as_os_str().is_empty() {
        std::fs::create_dir_all(&doc_dir)
            .with_context(|| format!("creating {}", doc_dir.display()))?;
    }
    std::fs::write(&a.out, text).with_context(|| format!("writing {}", a.out.display()))?;
    for r in &rows {
        outln!(
            "row {:>2}: exact {:<10}  reference rules {:<10}  {}",
            r.n,
            r.verdict_exact().to_string(),
            r.verdict_reference().to_string(),
            r.what
        )?;
    }
    outln!(
        "wrote {} and charts in {}",
        a.out.display(),
        a.charts.display()
    )?;
    Ok(())
}
