//! `coflowkit replay --local N`: replay a trace as real transfers between N daemons on this
//! machine (real sockets on loopback, or with `--netns` one network namespace per host behind
//! `tc` rate limits), and beside it the simulated CCTs of the very same scaled workload under the
//! same scheduler.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_flowsim::{simulate, CoflowOutcome, SimOutput};
use coflowkit_model::bins::Bin;
use coflowkit_model::units::short_num;
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_runtime::replay::{replay, ReplayConfig, Replayed};
use coflowkit_sched::blind::Blind;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};
use coflowkit_simcmd::flag_range::{f64_in, wait};
use coflowkit_testbed as netns;
use serde_json::json;

use crate::fabric_args::WorkloadArgs;
use crate::report::{self, Run};
use crate::sched_args::SchedArgs;
use crate::spill_dir::SpillDir;

#[derive(Args, Debug)]
#[command(mut_arg("scheduler", |a| a.default_value("varys,aalo,fair")))]
#[command(mut_arg("coflows", |a| a.default_value("60")))]
pub struct ReplayArgs {
    /// Start a coordinator and N daemons on this machine (loopback sockets); trace ports map
    /// onto daemons as port mod N
    #[arg(long, value_name = "N")]
    pub local: Option<usize>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub sched: SchedArgs,
    /// Multiply every flow's bytes by this
    #[arg(long, default_value_t = 0.001, value_name = "X")]
    pub scale_bytes: f64,
    /// Multiply every arrival time by this; the emulated NIC rate is --port-rate × scale-bytes
    /// / scale-time, so the fabric is as loaded as the unscaled trace's
    #[arg(long, default_value_t = 0.01, value_name = "X")]
    pub scale_time: f64,
    /// Scheduler the speed-ups are measured against (run too if not selected)
    #[arg(long, default_value = "fair", value_name = "NAME")]
    pub baseline: String,
    /// Most put data each daemon keeps in memory, MiB (the rest spills to a temporary dir)
    #[arg(long, default_value_t = 512, value_name = "MIB")]
    pub mem_limit_mib: u64,
    /// Coordinator safety-net tick in milliseconds (0 = events and wake-ups only; at most
    /// 60,000)
    #[arg(long, default_value_t = 100.0, value_name = "MS",
          value_parser = f64_in(wait::TICK_MS.0, wait::TICK_MS.1))]
    pub tick_ms: f64,
    /// Put each daemon in its own network namespace, joined by veth pairs and a bridge, with a
    /// tc rate limit on each host's NIC (--port-rate, or per host with --port-rates); the
    /// coordinator's traffic goes over a second, unshaped veth per host. Needs root; without
    /// it, rates are emulated by pacing inside the daemons (and it says so)
    #[arg(long)]
    pub netns: bool,
    /// Register every coflow without its flow sizes (non-clairvoyant): hug, drf and psp then
    /// use the vector --hug-vectors chooses (flows, ones, or rates: measured by the
    /// coordinator) instead of MADD's; the simulation beside it hides the sizes from the
    /// policy the same way. Refused for policies that need sizes (varys, sebf...)
    #[arg(long)]
    pub non_clairvoyant: bool,
    /// How hug, drf and psp's per-coflow uplink reservations and caps are enforced: `pacing`
    /// (the daemons pace every flow at the coordinator's rate) or `htb` (with --netns: one
    /// htb class per coflow on each host's shaped NIC, rate = reservation, ceil = cap; the
    /// daemons pace only the downlink ceilings)
    #[arg(long, value_enum, default_value = "pacing", value_name = "HOW")]
    pub enforce: Enforce,
    /// Give every coflow a deadline Γ_empty × (1 + U(0, X)) (Varys §5.7), Γ on the emulated
    /// NICs, at least the thesis' 200 ms scaled like the trace (× --scale-time): registered with the coflow (Varys's deadline mode
    /// admits or rejects it) and reported as met when its real CCT is within it
    #[arg(long, value_name = "X", value_parser = f64_in(0.0, 1e6))]
    pub deadlines: Option<f64>,
    /// Multiply every synthesized deadline by this (2: the thesis' "doubled deadlines")
    #[arg(long, default_value_t = 1.0, value_name = "K", requires = "deadlines",
          value_parser = coflowkit_simcmd::flag_range::f64_positive(1e6))]
    pub deadline_scale: f64,
    /// Seed of the deadline synthesis (as `sim --seed`)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Write results as JSON (as `sim --json`, each coflow also carrying `sim_cct_s`)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforce {
    Pacing,
    Htb,
}

/// The trace as it runs: ports folded onto `hosts`, the flows of a coflow between the same two
/// hosts merged into one (a reducer fetches a host's partitions in one go), bytes scaled and
/// rounded to whole bytes, arrivals scaled.
pub fn scaled_workload(trace: &Trace, hosts: usize, scale_bytes: f64, scale_time: f64) -> Trace {
    let coflows = trace
        .coflows
        .iter()
        .map(|c| {
            let mut index: HashMap<(u32, u32), usize> = HashMap::new();
            let mut flows: Vec<Flow> = Vec::new();
            for f in &c.flows {
                let key = (f.src % hosts as u32, f.dst % hosts as u32);
                let i = *index.entry(key).or_insert_with(|| {
                    flows.push(Flow {
                        src: key.0,
                        dst: key.1,
                        bytes: 0.0,
                    });
                    flows.len() - 1
                });
                flows[i].bytes += f.bytes * scale_bytes;
            }
            for f in &mut flows {
                f.bytes = f.bytes.round();
            }
            flows.retain(|f| f.bytes >= 1.0);
            let mut s = Coflow::new(c.id, c.arrival_s * scale_time, flows);
            s.weight = c.weight;
            s
        })
        .collect();
    Trace {
        ports: hosts as u32,
        coflows,
    }
}

pub fn run(args: ReplayArgs) -> Result<()> {
    let Some(hosts) = args.local else {
        bail!(
            "replay needs --local N (a cluster on this machine); on real machines start \
             `coflowkit coordinator` and `coflowkit daemon` and use the client API"
        );
    };
    if hosts == 0 || hosts > 256 {
        bail!("--local must be between 1 and 256 daemons");
    }
    crate::out::check_outputs(&[crate::out::Out::file_in_new_dirs(
        "--json",
        args.json.as_deref(),
    )])?;
    for (name, v) in [
        ("--scale-bytes", args.scale_bytes),
        ("--scale-time", args.scale_time),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            bail!("{name} must be a positive number, got {v}");
        }
    }
    let min_mem = coflowkit_runtime::daemon::MIN_MEM_LIMIT_BYTES;
    if args.mem_limit_mib.saturating_mul(1 << 20) < min_mem {
        bail!(
            "--mem-limit-mib {}: each daemon needs at least {min_mem} bytes (two blocks), so at \
             least 1 MiB",
            args.mem_limit_mib
        );
    }
    crate::logs();
    // Servers take as many descriptors as the hard limit allows (the limits scale with it).
    coflowkit_runtime::listen::raise_nofile_limit();
    let (path, trace, _) = args.workload.load()?;
    // Refused, not ignored (pass 34, C6).
    coflowkit_simcmd::sim::refuse_dags(
        &path,
        &trace,
        "`replay` starts every coflow at its arrival on the cluster, with no dependencies \
         between coflows and no compute time",
    )?;
    // Everything the scaling could make unusable is refused here, naming the flag, before a
    // daemon starts or anything is simulated.
    let nics = host_rates(&args, hosts)?;
    let mut work = scaled_workload(&trace, hosts, args.scale_bytes, args.scale_time);
    check_scaled(&trace, &work, args.scale_bytes, args.scale_time)?;
    let fabric = Fabric {
        up_bytes_per_s: nics.clone(),
        down_bytes_per_s: nics.clone(),
    };
    if let Some(x) = args.deadlines {
        // Synthesized in the trace's time (Γ on NICs --scale-time slower, the 200 ms floor
        // the trace's), then scaled back with the rest of the trace: the floor is 200 ms x
        // --scale-time here, as light against the coflows as in the unscaled trace.
        let slow = Fabric {
            up_bytes_per_s: nics.iter().map(|r| r * args.scale_time).collect(),
            down_bytes_per_s: nics.iter().map(|r| r * args.scale_time).collect(),
        };
        coflowkit_model::deadlines::synthesize(&mut work, &slow, x, args.seed);
        for c in &mut work.coflows {
            c.deadline_s = c
                .deadline_s
                .map(|d| d * args.scale_time * args.deadline_scale);
        }
    }
    let use_netns = args.netns
        && match netns::available() {
            Ok(()) => true,
            Err(why) => {
                outln!(
                    "--netns: {why}; falling back to rate emulation by pacing inside the daemons"
                )?;
                false
            }
        };
    if args.enforce == Enforce::Htb && !use_netns {
        bail!("--enforce htb: needs --netns and root (htb classes go on the namespaces' NICs)");
    }
    let mut kinds = args.sched.kinds()?;
    let baseline: SchedulerKind = args.baseline.parse().context("--baseline")?;
    if !kinds.contains(&baseline) {
        kinds.push(baseline);
    }
    let opts = args.sched.options()?;
    if args.non_clairvoyant {
        let multi_tenant = |k: &SchedulerKind| {
            matches!(
                k,
                SchedulerKind::Hug | SchedulerKind::Drf | SchedulerKind::Psp
            )
        };
        if let Some(k) =
            (kinds.iter()).find(|k| build(**k, &opts).clairvoyant() && !multi_tenant(k))
        {
            bail!(
                "--non-clairvoyant: scheduler {k} needs flow sizes; replay non-clairvoyant \
                 under hug, drf, psp (vectors from --hug-vectors) or a non-clairvoyant \
                 scheduler (aalo, fair...)"
            );
        }
    }
    let spill = SpillDir::create(&std::env::temp_dir())?;
    let (lo, hi) = nics.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| {
        (lo.min(r), hi.max(r))
    });
    outln!(
        "{}: first {} coflows ({} flows, {:.1} MB after scaling bytes by {} and time by {}) on {} \
         local daemons at {} each ({})",
        path.display(),
        work.coflows.len(),
        work.flows(),
        work.bytes() / 1e6,
        args.scale_bytes,
        args.scale_time,
        hosts,
        if lo == hi {
            format!("{:.1} Mbit/s", lo * 8.0 / 1e6)
        } else {
            format!("{:.1} to {:.1} Mbit/s", lo * 8.0 / 1e6, hi * 8.0 / 1e6)
        },
        if use_netns && args.enforce == Enforce::Htb {
            "one network namespace per host, veth + bridge, tc htb per uplink (a class per \
             coflow: --enforce htb) and tbf per downlink, unshaped control veth"
        } else if use_netns {
            "one network namespace per host, veth + bridge, tc tbf per NIC, unshaped control veth"
        } else {
            "emulated by pacing in the daemons; no --netns"
        }
    )?;
    let rt = crate::async_rt::new()?;
    {
        // Ctrl-C or SIGTERM must not leave namespaces, links or spilled objects behind. The
        // handlers are in place before the first namespace or spill file is made.
        use tokio::signal::unix::{signal, SignalKind};
        let (mut int, mut term) = rt.block_on(async {
            Ok::<_, std::io::Error>((
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ))
        })?;
        let spilled = spill.path().to_path_buf();
        rt.spawn(async move {
            // The shell's convention: 128 + the signal's number.
            let code = tokio::select! {
                _ = int.recv() => 128 + libc::SIGINT,
                _ = term.recv() => 128 + libc::SIGTERM,
            };
            if use_netns {
                errln!("interrupted: removing the network namespaces and spilled objects");
                netns::teardown_all();
            } else {
                errln!("interrupted: removing spilled objects");
            }
            crate::spill_dir::remove_racing(&spilled);
            std::process::exit(code);
        });
    }
    let mut real_runs = Vec::new();
    let mut sim_runs = Vec::new();
    for &kind in &kinds {
        let cfg = ReplayConfig {
            scheduler: kind,
            options: opts.clone(),
            nic_bytes_per_s: nics.clone(),
            netns: use_netns,
            mem_limit_bytes: args.mem_limit_mib.saturating_mul(1 << 20),
            data_dir: Some(spill.path().join(kind.name())),
            tick: (args.tick_ms > 0.0).then(|| Duration::from_secs_f64(args.tick_ms / 1000.0)),
            non_clairvoyant: args.non_clairvoyant,
            htb: args.enforce == Enforce::Htb,
        };
        errln!("replaying under {kind} ...");
        let t = Instant::now();
        let real = rt
            .block_on(replay(&work, &cfg))
            .with_context(|| format!("replaying under {kind}"))?;
        let wall = t.elapsed().as_secs_f64();
        let late = real.iter().filter(|r| r.late_put_s > 0.0).count();
        errln!(
            "  {kind}: {:.1} s{}",
            wall,
            if late > 0 {
                format!(", {late} coflows' data was still being put at their arrival")
            } else {
                String::new()
            }
        );
        // The coordinator decides in full at every flow completion; so does its simulation.
        let mut sched = build(kind, &opts);
        if args.non_clairvoyant {
            sched = Box::new(Blind::new(sched));
        }
        let sim = simulate(&work, &fabric, sched.as_mut())
            .with_context(|| format!("simulating {kind}"))?;
        real_runs.push(Run::new(real_output(kind, &work, &fabric, &real, wall)));
        sim_runs.push(Run::new(sim));
    }
    drop(spill);

    outln!(
        "\nreal ({}, {hosts} daemons):",
        if use_netns { "netns" } else { "loopback" }
    )?;
    out!("{}", report::table(&real_runs, baseline.name()))?;
    outln!("\nsimulated (same scaled workload, flowsim):")?;
    out!("{}", report::table(&sim_runs, baseline.name()))?;
    outln!("\nreal vs simulated:")?;
    let base_real = real_runs.iter().find(|r| r.name() == baseline.name());
    let base_sim = sim_runs.iter().find(|r| r.name() == baseline.name());
    outln!(
        "{:<10} {:>12} {:>12} {:>8} {:>14} {:>14}",
        "scheduler",
        "real avg s",
        "sim avg s",
        "diff",
        format!("real x {}", baseline.name()),
        format!("sim x {}", baseline.name())
    )?;
    for (r, s) in real_runs.iter().zip(&sim_runs) {
        let (ra, sa) = (r.summary.avg_cct_s, s.summary.avg_cct_s);
        let sp = |b: Option<&Run>, x: &Run| {
            b.map_or(f64::NAN, |b| b.summary.avg_cct_s / x.summary.avg_cct_s)
        };
        let diff = 100.0 * (ra - sa) / sa;
        let secs = |v: f64| {
            if v.is_finite() {
                format!("{v:.3}")
            } else {
                "-".into()
            }
        };
        outln!(
            "{:<10} {:>12} {:>12} {:>8} {:>14} {:>14}",
            r.name(),
            secs(ra),
            secs(sa),
            if diff.is_finite() {
                format!("{diff:.1}%")
            } else {
                "-".into()
            },
            report::ratio(sp(base_real, r)),
            report::ratio(sp(base_sim, s))
        )?;
    }
    if let Some(p) = &args.json {
        write_json(
            p,
            &path.display().to_string(),
            &fabric,
            &opts,
            &real_runs,
            &sim_runs,
            baseline.name(),
        )?;
    }
    Ok(())
}

/// The scaled workload is something daemons can move: every flow a whole number of bytes that
/// an f64 counts exactly (2^53), and every coflow left with at least one byte (a coflow whose
/// flows all round to 0 would finish at once, and every ratio with it be 0/0).
fn check_scaled(trace: &Trace, work: &Trace, scale_bytes: f64, scale_time: f64) -> Result<()> {
    if work.coflows.is_empty() {
        bail!("the trace has no coflows to replay");
    }
    let max = 2f64.powi(53);
    for (orig, c) in trace.coflows.iter().zip(&work.coflows) {
        if let Some(f) = c.flows.iter().find(|f| f.bytes > max) {
            bail!(
                "--scale-bytes {}: coflow {} has a flow of {:.3e} bytes after scaling, more \
                 than the 2^53 bytes a put can carry; use a smaller --scale-bytes",
                short_num(scale_bytes),
                c.id,
                f.bytes
            );
        }
        if c.flows.is_empty() {
            bail!(
                "--scale-bytes {}: every flow of coflow {} ({:.3e} bytes) rounds to 0 bytes \
                 after scaling; use a larger --scale-bytes",
                short_num(scale_bytes),
                c.id,
                orig.bytes()
            );
        }
        let at = c.arrival_s;
        if !at.is_finite() || at > 1e9 {
            bail!(
                "--scale-time {}: coflow {} would arrive {at:.3e} s after the start; use a \
                 smaller --scale-time",
                short_num(scale_time),
                c.id
            );
        }
    }
    Ok(())
}

/// Each host's NIC in bytes per second, scaled like the workload (× scale-bytes / scale-time, so
/// the fabric is as loaded as the unscaled trace's): --port-rate, or per host from --port-rates
/// (whose ports are the hosts here; a daemon's NIC is one rate both ways).
fn host_rates(args: &ReplayArgs, hosts: usize) -> Result<Vec<f64>> {
    let scale = args.scale_bytes / args.scale_time;
    let fabric = args.workload.fabric(hosts)?;
    let mut rates = Vec::with_capacity(hosts);
    for (h, (&up, &down)) in fabric
        .up_bytes_per_s
        .iter()
        .zip(&fabric.down_bytes_per_s)
        .enumerate()
    {
        if up != down {
            bail!(
                "--port-rates: host {h} has uplink {} and downlink {} bit/s; replay needs one \
                 rate both ways per host (a daemon's NIC)",
                up * 8.0,
                down * 8.0
            );
        }
        let rate = up * scale;
        let (lo, hi) = (
            coflowkit_runtime::daemon::MIN_NIC_BYTES_PER_S,
            coflowkit_model::units::MAX_RATE_BPS / 8.0,
        );
        if !(lo..=hi).contains(&rate) {
            bail!(
                "--scale-bytes {} / --scale-time {} makes host {h}'s emulated NIC {rate:.3e} \
                 bytes/s (its rate {:.3e} bit/s x scale-bytes / scale-time), outside {lo} bytes/s \
                 to 1 Pbit/s; --scale-bytes must stay within {:.3e}..{:.3e} at this --scale-time",
                short_num(args.scale_bytes),
                short_num(args.scale_time),
                up * 8.0,
                lo / up * args.scale_time,
                hi / up * args.scale_time
            );
        }
        rates.push(rate);
    }
    Ok(rates)
}

/// The real outcomes in the shape the simulator reports them, so one table and one JSON serve
/// both worlds.
fn real_output(
    kind: SchedulerKind,
    work: &Trace,
    fabric: &Fabric,
    real: &[Replayed],
    wall_s: f64,
) -> SimOutput {
    let coflows: Vec<CoflowOutcome> = real
        .iter()
        .map(|r| {
            let c = &work.coflows[r.index];
            let n = r.fcts_s.len().max(1) as f64;
            let (lo, hi) = r
                .fcts_s
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
                    (lo.min(x), hi.max(x))
                });
            CoflowOutcome {
                id: c.id,
                arrival_s: r.arrival_s,
                finish_s: r.finish_s,
                cct_s: r.cct_s,
                isolated_cct_s: c.isolated_cct_s(fabric),
                bytes: c.bytes(),
                flows: c.flows.len(),
                length_bytes: c.length_bytes(),
                bin: Bin::of(c),
                deadline_s: c.deadline_s.map(|d| r.arrival_s + d),
                met_deadline: c.deadline_s.map(|d| r.cct_s <= d * (1.0 + 1e-9)),
                avg_fct_s: r.fcts_s.iter().sum::<f64>() / n,
                fct_spread: if r.cct_s > 0.0 && lo.is_finite() {
                    (hi - lo) / r.cct_s
                } else {
                    0.0
                },
            }
        })
        .collect();
    SimOutput {
        scheduler: kind.name().to_string(),
        makespan_s: coflows.iter().map(|c| c.finish_s).fold(0.0, f64::max),
        coflows,
        decisions: 0,
        redistributions: 0,
        wall_s,
    }
}

/// `coflowkit sim`'s JSON of the real runs, each result also carrying the simulated summary
/// and each coflow its simulated CCT (`sim_cct_s`).
fn write_json(
    path: &std::path::Path,
    trace: &str,
    fabric: &Fabric,
    opts: &SchedOptions,
    real: &[Run],
    sim: &[Run],
    baseline: &str,
) -> Result<()> {
    let mut doc = report::json_doc(trace, fabric, opts, real, baseline);
    if let Some(results) = doc["results"].as_array_mut() {
        for (r, s) in results.iter_mut().zip(sim) {
            r["sim_summary"] = json!(s.summary);
            if let Some(coflows) = r["coflows"].as_array_mut() {
                for (c, sc) in coflows.iter_mut().zip(&s.output.coflows) {
                    c["sim_cct_s"] = json!(sc.cct_s);
                }
            }
        }
    }
    report::write_value(path, &doc)
}
