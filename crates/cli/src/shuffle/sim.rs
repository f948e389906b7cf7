//! `coflowkit shuffle sim`: the report printed (the run is `coflowkit_simcmd`'s); and
//! `coflowkit shuffle bench`: how fast the simulator runs (release builds only make sense).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use coflowkit_pktsim::{try_run, Progress, SimReport};
pub use coflowkit_simcmd::shuffle::sim::SimArgs;
use coflowkit_simcmd::shuffle::sim::{finish, matrix, simulate_observed};

use super::matrix_args::MatrixArgs;
use super::sim_opts::SimOpts;

pub fn run(args: SimArgs) -> Result<()> {
    let r = simulate_observed(&args, progress_printer())?;
    print_report(&r)?;
    finish(&args, &r)
}

/// A run longer than a few seconds (`--nodes 5000`) says on stderr every few seconds how far
/// it has come.
fn progress_printer() -> impl FnMut(Progress) {
    let mut every = crate::every::Every::new();
    move |p| {
        if let Some(t) = every.due() {
            errln!(
                "  {:.0} s: timestep {}, {} of {} data packets delivered ({:.1}%)",
                t.as_secs_f64(),
                p.steps,
                p.delivered,
                p.total,
                100.0 * p.delivered as f64 / p.total.max(1) as f64
            );
        }
    }
}

fn print_report(r: &SimReport) -> Result<(), crate::out::StdoutError> {
    let kb = |b: u64| b as f64 / 1000.0;
    outln!("protocol          {}", r.protocol)?;
    outln!("nodes             {} in {} rack(s)", r.nodes, r.racks)?;
    outln!("skewness          {:.3}", r.skewness)?;
    outln!("data packets      {}", r.data_packets)?;
    if r.complete {
        outln!(
            "completion        {:.4} ms ({} timesteps)",
            r.completion_s * 1e3,
            r.completion_steps
        )?;
    } else {
        outln!("completion        did not finish")?;
    }
    outln!("throughput        {:.3} Gbps per node", r.throughput_gbps)?;
    outln!(
        "bound             {:.3} Gbps (host {:.0}, core {:.0} timesteps)",
        r.bound_gbps,
        r.ideal_bound_steps,
        r.core_bound_steps
    )?;
    if let (Some(g), Some(o)) = (r.oracle_gbps, r.oracle_steps) {
        outln!(
            "oracle bound      {:.3} Gbps (sender {}, receiver {}, message {} timesteps; preempted {:.1}% of the time)",
            g,
            o.sender,
            o.receiver,
            o.message,
            100.0 * r.preempted_fraction
        )?;
    }
    outln!("optimality        {:.4}", r.optimality)?;
    outln!(
        "peak buffer       {:.1} KB in one switch (ToR {:.1} KB, core {:.1} KB); {:.1} KB in one port",
        kb(r.peak_buffer_bytes),
        kb(r.peak_tor_bytes),
        kb(r.peak_core_bytes),
        kb(r.peak_port_bytes)
    )?;
    outln!(
        "port peaks        ToR->host {:.1} KB, ToR->core {:.1} KB, core->ToR {:.1} KB",
        kb(r.peak_tor_down_port_bytes),
        kb(r.peak_tor_up_port_bytes),
        kb(r.peak_core_port_bytes)
    )?;
    outln!(
        "average buffer    {:.1} KB per ToR, {:.1} KB at the core; {:.1}% of ToR queueing at uplinks",
        r.avg_tor_buffer_bytes / 1000.0,
        r.avg_core_buffer_bytes / 1000.0,
        100.0 * r.tor_uplink_share
    )?;
    if let Some(l) = &r.loss {
        outln!(
            "wire              {} dropped, {} duplicated, {} reordered",
            l.dropped,
            l.duplicated,
            l.reordered
        )?;
        outln!(
            "loss recovery     {} retransmissions, {} duplicates received, {} dead peers",
            l.retransmissions,
            l.duplicates_received,
            l.dead_peers
        )?;
    }
    outln!("invariant breaks  {}", r.violations)?;
    Ok(())
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// A packet matrix file instead of a generated one (for comparing builds).
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    #[arg(long, default_value_t = 320)]
    pub nodes: usize,
    #[arg(long, default_value_t = 0.5)]
    pub skew: f64,
    #[arg(long, short, default_value = "grpf")]
    pub protocol: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs; the table reports the fastest and the median (1 to 100000).
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub repeat: usize,
    #[command(flatten)]
    pub gen: MatrixArgs,
    #[command(flatten)]
    pub sim: SimOpts,
}

/// Times `run` alone (the matrix is generated once, outside the clock).
pub fn bench(args: BenchArgs) -> Result<()> {
    if cfg!(debug_assertions) {
        errln!("warning: debug build; run `cargo run --release -- shuffle bench` for real numbers");
    }
    let m = matrix(&args.matrix, args.nodes, args.skew, args.seed, &args.gen)?;
    let cfg = args.sim.to_config(&args.protocol, args.seed)?;
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut last = None;
    for _ in 0..args.repeat.max(1) {
        let (t, c) = (Instant::now(), thread_cpu_s());
        let r = try_run(&m, &cfg)?;
        walls.push(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c, thread_cpu_s()) {
            cpus.push(b - a);
        }
        last = Some(r);
    }
    let r = last.expect("one run");
    walls.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    let (best, median) = (walls[0], walls[walls.len() / 2]);
    outln!(
        "{} nodes, {} racks, skewness {:.3}, {}: {} data packets, {} packet-hops, {} timesteps, optimality {:.4}",
        r.nodes,
        r.racks,
        r.skewness,
        r.protocol,
        r.data_packets,
        r.packet_hops,
        r.completion_steps,
        r.optimality
    )?;
    outln!(
        "wall: best {:.3} s, median {:.3} s over {} runs; {:.2} M packet-hops/s, {:.2} M data packets/s (best)",
        best,
        median,
        walls.len(),
        r.packet_hops as f64 / best / 1e6,
        r.data_packets as f64 / best / 1e6
    )?;
    if let (Some(c), Some(cm)) = (cpus.first(), cpus.get(cpus.len() / 2)) {
        outln!(
            "cpu:  best {c:.3} s, median {cm:.3} s (this thread; wall exceeds it when the cores are shared); {:.2} M packet-hops per CPU-second",
            r.packet_hops as f64 / c / 1e6
        )?;
    }
    Ok(())
}

/// CPU time of the calling thread (Linux: /proc/thread-self/schedstat, nanoseconds on CPU).
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}
