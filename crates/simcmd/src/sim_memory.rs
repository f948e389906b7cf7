//! What `sim` will hold, estimated before it simulates: a trace within `--max-flows` (2^25
//! flows, 0.5 GB as read) can still need gigabytes to simulate, and the schedulers differ by
//! five times per flow. Past what this process may use (its address-space limit, `ulimit -v`,
//! or the machine's memory) the run is refused with the estimate, instead of an allocation
//! abort part way (a 79 KB trace of one 5,792 x 5,792 coflow aborted at 1.69 GB under a 2 GB
//! limit). `shuffle sim` checks its n^2 messages the same way.

use coflowkit_sched::SchedulerKind;

/// Bytes one flow adds to the peak while `kind` simulates it, with the trace as read. Peak RSS
/// slopes of `sim --trace T -s KIND --jobs 1` between one coflow of 500 x 500 and one of
/// 1,000 x 1,000 flows (fair, sebf, varys: 1,000 x 1,000 and 2,000 x 2,000), rounded up; pfp
/// and sincronia did not finish the larger one in 60 s, so theirs are guesses above the lower
/// bound measured (216 and 47). See docs/reliability.md.
pub fn run_bytes_per_flow(kind: SchedulerKind) -> u64 {
    use SchedulerKind::*;
    match kind {
        Fifo | FifoStrict | Scf | Ncf | Tcf | Sebf | Varys => 80,
        Hug | Drf | Psp => 90,
        // aalo-uncoord: 114 measured (24.8 and 46.1 MB at 250 x 250 and 500 x 500). It was
        // 12,000 (2.96 GB at 500 x 500) while each sender's view kept a whole coflow's flows.
        FifoLm | Vc | Saath | AaloUncoord => 160,
        Sincronia => 200,
        Aalo => 220,
        Fair | Pfp | Wss => 370,
    }
}

/// Address space each simulating thread may add beyond its flows (stack, allocator arena).
const THREAD_BYTES: u64 = 72 << 20;

/// Bytes the runs add at their peak: `jobs` at a time, the costliest together.
pub fn run_bytes(flows: u64, kinds: &[SchedulerKind], jobs: usize) -> u64 {
    let mut per: Vec<u64> = kinds.iter().map(|&k| run_bytes_per_flow(k)).collect();
    per.sort_unstable_by(|a, b| b.cmp(a));
    let at_once: u64 = per.iter().take(jobs.max(1)).sum();
    flows.saturating_mul(at_once)
}

/// What this process may hold: its address-space limit (soft) and the machine's memory, the
/// smaller, with what each is called in a message. `None` where neither can be read.
fn memory_limit() -> Option<(u64, &'static str)> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let address_space = (limits.lines())
        .find_map(|l| l.strip_prefix("Max address space"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|b| (b, "this process's address-space limit (ulimit -v)"));
    let machine = proc_kb("/proc/meminfo", "MemTotal:").map(|b| (b, "the machine's memory"));
    [address_space, machine].into_iter().flatten().min()
}

/// A `kB` field of a /proc file, in bytes.
fn proc_kb(file: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let v = text.lines().find_map(|l| l.strip_prefix(field))?;
    let kb: u64 = v.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

fn gb(b: u64) -> f64 {
    b as f64 / 1e9
}

/// Why `more` bytes do not fit: all the process would hold, what it holds now, and the limit.
pub struct Shortfall {
    pub need: u64,
    pub now: u64,
    pub limit: u64,
    pub what: &'static str,
}

impl Shortfall {
    /// "about N GB (M GB held now), over LIMIT of L GB".
    pub fn describe(&self) -> String {
        let held = if self.now > 0 {
            format!(" ({:.1} GB held now)", gb(self.now))
        } else {
            String::new()
        };
        format!(
            "about {:.1} GB{held}, over {} of {:.1} GB",
            gb(self.need),
            self.what,
            gb(self.limit)
        )
    }
}

/// Whether `more` bytes, and `threads` more threads, fit beside what this process holds now,
/// under its limit.
pub fn fits(more: u64, threads: usize) -> Result<(), Shortfall> {
    let Some((limit, what)) = memory_limit() else {
        return Ok(());
    };
    // Against an address-space limit what is mapped counts (the binary, what was read);
    // against the machine's memory, what is resident.
    let field = if what.starts_with("this process") {
        "VmSize:"
    } else {
        "VmRSS:"
    };
    let now = proc_kb("/proc/self/status", field).unwrap_or(0);
    let need = (now.saturating_add(more)).saturating_add(THREAD_BYTES * threads as u64);
    if need <= limit {
        return Ok(());
    }
    Err(Shortfall {
        need,
        now,
        limit,
        what,
    })
}

/// Address space a rank started by a launcher maps before its work (the binary, its threads'
/// stacks and allocator arenas), beside what its work holds.
pub const RANK_BASE_BYTES: u64 = 256 << 20;

/// Whether `ranks` processes on this machine, each holding `per_rank` bytes of work, fit: each
/// under the address-space limit it inherits (`ulimit -v`), all of them together (and this
/// process) in the machine's memory. For the launchers of real runs (`collective bench`,
/// `millisort`, `broadcast`, `milliquery run`), checked before any process starts.
pub fn fits_ranks(per_rank: u64, ranks: u64) -> Result<(), Shortfall> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let address_space = (limits.lines())
        .find_map(|l| l.strip_prefix("Max address space"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    let one = per_rank.saturating_add(RANK_BASE_BYTES);
    if let Some(limit) = address_space.filter(|&l| one > l) {
        return Err(Shortfall {
            need: one,
            now: 0,
            limit,
            what: "each process's address-space limit (ulimit -v)",
        });
    }
    if let Some(limit) = proc_kb("/proc/meminfo", "MemTotal:") {
        let now = proc_kb("/proc/self/status", "VmRSS:").unwrap_or(0);
        let need = one.saturating_mul(ranks.max(1)).saturating_add(now);
        if need > limit {
            return Err(Shortfall {
                need,
                now,
                limit,
                what: "the machine's memory",
            });
        }
    }
    Ok(())
}

/// Refuse to simulate `flows` flows under `kinds`, `jobs` at a time, when the estimate passes
/// what this process may use; the message names the estimate, the limit and what to change.
pub fn check(flows: u64, kinds: &[SchedulerKind], jobs: usize) -> Result<(), String> {
    let jobs = jobs.clamp(1, kinds.len().max(1));
    let runs = run_bytes(flows, kinds, jobs);
    fits(runs, jobs).map_err(|short| {
        format!(
            "simulating {flows} flows would need {} (about {} bytes a flow for {jobs} \
             scheduler run(s) at a time): run fewer schedulers at once (--jobs 1, or fewer in \
             -s; fair, pfp and wss cost the most), simulate fewer flows \
             (--coflows), or raise the limit",
            short.describe(),
            runs / flows.max(1),
        )
    })
}

/// Refuse to simulate a shuffle of `nodes` nodes when its n^2 messages, at `bytes_per_message`,
/// pass what this process may use.
pub fn check_shuffle(nodes: usize, bytes_per_message: f64) -> Result<(), String> {
    let msgs = (nodes as u64).saturating_mul(nodes as u64);
    let more = (msgs as f64 * bytes_per_message) as u64;
    fits(more, 1).map_err(|short| {
        format!(
            "{nodes} nodes would need {} to simulate their n^2 messages (about \
             {bytes_per_message} bytes each): simulate fewer nodes, or raise the limit",
            short.describe()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The costliest `jobs` schedulers count together; more jobs than schedulers count once.
    #[test]
    fn runs_at_once_add_up_from_the_costliest() {
        use SchedulerKind::*;
        let kinds = [Fifo, Fair, Aalo];
        assert_eq!(run_bytes(1000, &kinds, 1), 1000 * run_bytes_per_flow(Fair));
        assert_eq!(
            run_bytes(1000, &kinds, 2),
            1000 * (run_bytes_per_flow(Fair) + run_bytes_per_flow(Aalo))
        );
        assert_eq!(run_bytes(1000, &kinds, 9), run_bytes(1000, &kinds, 3));
        assert_eq!(run_bytes(u64::MAX, &kinds, 3), u64::MAX, "saturates");
        assert!(check(10, &kinds, 1).is_ok(), "ten flows fit anywhere");
        let e = check(1 << 50, &kinds, 2).unwrap_err();
        assert!(
            e.contains("simulating 1125899906842624 flows would need about"),
            "{e}"
        );
        assert!(e.contains("--jobs 1"), "{e}");
        let e = check_shuffle(1 << 30, 200.0).unwrap_err();
        assert!(e.starts_with("1073741824 nodes would need about"), "{e}");
        assert!(check_shuffle(100, 200.0).is_ok());
        // Ranks: a small one fits; one past any machine names the estimate.
        assert!(fits_ranks(1 << 20, 2).is_ok());
        let e = fits_ranks(u64::MAX / 2, 4).unwrap_err().describe();
        assert!(e.starts_with("about ") && e.contains(" GB"), "{e}");
        let e = fits_ranks(1 << 40, 1 << 20).unwrap_err();
        assert!(e.need >= 1 << 40, "{}", e.need);
    }
}
