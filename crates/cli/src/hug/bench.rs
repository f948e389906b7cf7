//! `coflowkit hug bench`: how long HUG takes to compute on a P-machine fabric (2P links), as
//! the thesis measured (§7.7.2: under 5 µs for 100 machines, 8.6 ms for 100,000). Tenants
//! sit on random machines (seeded): `--load` tenant VMs per machine on average, `--vms` each.
//! Run it from a release build. Times are this thread's CPU time (median), so that a loaded
//! machine's preemptions do not count, beside the best wall time.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use clap::Args;
use coflowkit_sched::tenant::drf::closed_form;
use coflowkit_sched::tenant::gen::random_fabric;
use coflowkit_sched::tenant::{hug, HugOptions};
use coflowkit_simcmd::flag_range::f64_positive;
use serde::Serialize;

#[derive(Args)]
pub struct BenchArgs {
    /// Fabric sizes in machines (each an uplink and a downlink; 1 to 1000000 each).
    #[arg(long, value_delimiter = ',', default_value = "100,10000,100000",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub machines: Vec<usize>,
    /// VMs (machines) per tenant (1 to 1000000).
    #[arg(long, default_value_t = 10, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub vms: usize,
    /// Tenant VMs per machine on average: tenants = load x machines / vms (above 0, at most
    /// 1000).
    #[arg(long, default_value_t = 2.0, value_parser = f64_positive(1000.0))]
    pub load: f64,
    /// Runs per measurement; the median is reported (1 to 100000).
    #[arg(long, default_value_t = 21, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub repeat: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the rows here as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

#[derive(Serialize)]
pub struct Row {
    pub machines: usize,
    pub links: usize,
    pub tenants: usize,
    pub entries: usize,
    /// Eq 7.2 (P*) alone: median CPU time, best wall time.
    pub p_star_cpu_us: f64,
    pub p_star_wall_us: f64,
    /// Algorithm 6 whole (guarantees and every link's capped max-min): the same.
    pub hug_cpu_us: f64,
    pub hug_wall_us: f64,
}

/// One measurement: `p` machines, tenants of `vms` VMs at `load` tenant VMs per machine,
/// median of `repeat` runs (also what `reproduce coflow-thesis` runs for row 32).
pub fn measure_fabric(p: usize, vms: usize, load: f64, repeat: usize, seed: u64) -> Result<Row> {
    ensure!(
        vms >= 1 && repeat >= 1,
        "--vms and --repeat must be at least 1"
    );
    ensure!(p >= vms, "{p} machines cannot host a tenant of {vms} VMs");
    let m = ((load * p as f64) / vms as f64).round().max(1.0) as usize;
    let need = fabric_bytes(m, vms);
    coflowkit_simcmd::sim_memory::fits(need, 0).map_err(|short| {
        anyhow::anyhow!(
            "--machines {p} --load {load} --vms {vms}: {m} tenants of {} demand entries would \
             need {} (about {TENANT_BYTES} bytes a tenant and {ENTRY_BYTES} an entry): lower \
             --load or --machines, or raise the limit",
            2 * vms,
            short.describe()
        )
    })?;
    let t = random_fabric(p, m, vms, seed ^ p as u64)?;
    let entries = t.tenants.iter().map(|x| x.d.len()).sum();
    let (p_star_cpu_us, p_star_wall_us) = measure(repeat, || {
        black_box(closed_form(black_box(&t)));
    });
    let (hug_cpu_us, hug_wall_us) = measure(repeat, || {
        black_box(hug(black_box(&t), HugOptions::default()));
    });
    Ok(Row {
        machines: p,
        links: 2 * p,
        tenants: t.len(),
        entries,
        p_star_cpu_us,
        p_star_wall_us,
        hug_cpu_us,
        hug_wall_us,
    })
}

pub fn run(a: BenchArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    ensure!(
        a.vms >= 1 && a.repeat >= 1,
        "--vms and --repeat must be at least 1"
    );
    if cfg!(debug_assertions) {
        errln!("warning: a debug build; times mean little (cargo run --release)");
    }
    outln!(
        "hug bench: {} VMs per tenant, {} tenant VMs per machine, median of {} runs",
        a.vms,
        a.load,
        a.repeat
    )?;
    outln!(
        "{:>9} {:>8} {:>8} {:>9} {:>12} {:>12} {:>12} {:>12}",
        "machines",
        "links",
        "tenants",
        "entries",
        "P* cpu us",
        "P* wall us",
        "HUG cpu us",
        "HUG wall us"
    )?;
    let mut rows = Vec::new();
    for &p in &a.machines {
        let row = measure_fabric(p, a.vms, a.load, a.repeat, a.seed)?;
        outln!(
            "{:>9} {:>8} {:>8} {:>9} {:>12.2} {:>12.2} {:>12.1} {:>12.1}",
            row.machines,
            row.links,
            row.tenants,
            row.entries,
            row.p_star_cpu_us,
            row.p_star_wall_us,
            row.hug_cpu_us,
            row.hug_wall_us
        )?;
        rows.push(row);
    }
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Bytes a tenant of the random fabric and each of its demand entries (2 a VM) add to the
/// peak of `hug bench` (the fabric, HUG's and DRF's allocations). Peak RSS, debug build, 10^5
/// machines: `--vms 1 --load 5|20` 218 and 816 MB (398 bytes a tenant of 2 entries), `--vms
/// 10 --load 2|8` 52 and 150 MB (1,640 bytes a tenant of 20): 260 + 69 an entry, rounded up.
/// (`--machines 1000000 --vms 1 --load 1000` is 10^9 tenants, 460 GB; it aborted.)
const TENANT_BYTES: u64 = 300;
const ENTRY_BYTES: u64 = 80;

fn fabric_bytes(tenants: usize, vms: usize) -> u64 {
    let entries = (2 * vms as u64).saturating_mul(ENTRY_BYTES);
    (tenants as u64).saturating_mul(TENANT_BYTES.saturating_add(entries))
}

/// Median thread CPU time and best wall time of `f`, in microseconds.
fn measure(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    f(); // warm the caches
    let mut cpu = Vec::with_capacity(n);
    let mut wall = f64::INFINITY;
    for _ in 0..n {
        let (c, w) = (thread_cpu_s(), Instant::now());
        f();
        wall = wall.min(w.elapsed().as_secs_f64() * 1e6);
        cpu.push((thread_cpu_s() - c) * 1e6);
    }
    cpu.sort_by(f64::total_cmp);
    (cpu[n / 2], wall)
}

/// This thread's CPU time in seconds.
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
