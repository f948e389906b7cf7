//! `coflowkit bench`: how fast the simulator replays the FB trace (and an upscaled copy) under
//! each scheduler. Release builds only make sense here.

use std::time::Instant;

use anyhow::Result;
use clap::Args;
use coflowkit_flowsim::simulate_with;
use coflowkit_model::gen::FbScaleSpec;
use coflowkit_sched::build;

use crate::engine_args::EngineArgs;
use crate::fabric_args::WorkloadArgs;
use crate::sched_args::SchedArgs;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub sched: SchedArgs,
    /// Also replay the trace upscaled to this many times its coflows (FB-derived, same load);
    /// 0 to skip, at most 1000
    #[arg(long, default_value_t = 10, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1000))]
    pub upscale: usize,
    /// Runs per scheduler; the table reports the fastest and the median (1 to 100000)
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub repeat: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
}

pub fn run(args: BenchArgs) -> Result<()> {
    if cfg!(debug_assertions) {
        errln!("warning: debug build; run `cargo run --release -- bench` for real numbers");
    }
    let (path, trace, fabric) = args.workload.load()?;
    let kinds = args.sched.kinds()?;
    let opts = args.sched.options()?;
    let sim = args.engine.options()?;
    let mut workloads = vec![(path.display().to_string(), trace.clone(), fabric.clone())];
    if args.upscale > 0 {
        let t0 = Instant::now();
        let up = FbScaleSpec {
            coflows: trace.coflows.len() * args.upscale,
            load: 1.0,
            ports: None,
            seed: args.seed,
        }
        .generate(&trace)?;
        errln!(
            "generated the {}x workload in {:.2} s",
            args.upscale,
            t0.elapsed().as_secs_f64()
        );
        workloads.push((format!("{}x upscaled", args.upscale), up, fabric));
    }
    outln!(
        "{:<22} {:<10} {:>8} {:>10} {:>10} {:>10} {:>10} {:>16}",
        "workload",
        "scheduler",
        "coflows",
        "flows",
        "best s",
        "median s",
        "decisions",
        "redistributions"
    )?;
    for (name, t, f) in &workloads {
        for &kind in &kinds {
            let mut times = Vec::new();
            let (mut decisions, mut redistributions) = (0, 0);
            for _ in 0..args.repeat.max(1) {
                let mut s = build(kind, &opts);
                let out = simulate_with(t, f, s.as_mut(), &sim)?;
                times.push(out.wall_s);
                (decisions, redistributions) = (out.decisions, out.redistributions);
            }
            times.sort_by(f64::total_cmp);
            let best = times[0];
            let median = times[times.len() / 2];
            outln!(
                "{:<22} {:<10} {:>8} {:>10} {:>10.3} {:>10.3} {:>10} {:>16}",
                short(name),
                kind.name(),
                t.coflows.len(),
                t.flows(),
                best,
                median,
                decisions,
                redistributions
            )?;
        }
    }
    Ok(())
}

fn short(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}
