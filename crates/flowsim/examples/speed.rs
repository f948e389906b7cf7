//! Replay the bundled FB trace (or its 10x upscale) under one scheduler, print the wall time,
//! and optionally dump every coflow's CCT (as f64 bits) to compare builds bit for bit:
//! `cargo run --release -p coflowkit-flowsim --example speed -- fair 1 [out.txt]`.
//! In place of the upscale, a trace file's path replays that trace on 1 Gbit/s ports
//! (`speed pfp incast8000.txt`).
//! A small binary over the simulator's crates only, so old and new code build side by side.

use std::io::Write;
use std::time::Instant;

use coflowkit_flowsim::simulate;
use coflowkit_model::gen::FbScaleSpec;
use coflowkit_model::trace::read_path;
use coflowkit_model::Fabric;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let kind: SchedulerKind = args.get(1).map_or("fair", String::as_str).parse()?;
    let arg = args.get(2).map_or("1", String::as_str);
    let (upscale, path): (usize, &str) = match arg.parse() {
        Ok(n) => (
            n,
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../data/traces/FB2010-1Hr-150-0.txt"
            ),
        ),
        Err(_) => (1, arg),
    };
    let mut trace = read_path(std::path::Path::new(path))?;
    if upscale > 1 {
        trace = FbScaleSpec {
            coflows: trace.coflows.len() * upscale,
            load: 1.0,
            ports: None,
            seed: 1,
        }
        .generate(&trace)?;
    }
    let fabric = Fabric::uniform_bps(trace.ports as usize, 1e9);
    let mut s = build(kind, &SchedOptions::default());
    let t0 = Instant::now();
    let out = simulate(&trace, &fabric, s.as_mut())?;
    let wall = t0.elapsed().as_secs_f64();
    let avg = out.coflows.iter().map(|c| c.cct_s).sum::<f64>() / out.coflows.len() as f64;
    println!(
        "{} {}: {:.3} s wall, avg CCT {:.4} s, {} decisions, {} redistributions",
        kind.name(),
        arg,
        wall,
        avg,
        out.decisions,
        out.redistributions
    );
    if let Some(p) = args.get(3) {
        let mut f = std::io::BufWriter::new(std::fs::File::create(p)?);
        let mut cs: Vec<_> = out.coflows.iter().map(|c| (c.id, c.cct_s)).collect();
        cs.sort_by_key(|c| c.0);
        for (id, cct) in cs {
            writeln!(f, "{} {:016x} {}", id, cct.to_bits(), cct)?;
        }
    }
    Ok(())
}
