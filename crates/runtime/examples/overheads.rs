//! The coordinator's overheads (coflow thesis key results rows 16 and 25): Varys's schedule,
//! distribution, READY and message rate on the real coordinator with 100 in-process protocol
//! daemons on loopback, Aalo's coordination round on the same, and the coordinator's side of an
//! Aalo round up to 100,000 daemons (synthetic reports). See `coflowkit_runtime::overheads`.
//!
//! ```text
//! cargo run --release -p coflowkit-runtime --example overheads [-- --quick]
//! ```

use std::time::Duration;

use coflowkit_runtime::overheads::{self, AaloSetting, Stats, VarysSetting};

fn line(what: &str, s: &Stats) {
    println!(
        "{what:<34} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        s.n, s.avg, s.p50, s.p95, s.p99, s.max
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut v = VarysSetting::default();
    let mut a = AaloSetting::default();
    let mut scale = vec![100usize, 1_000, 10_000, 100_000];
    if quick {
        v.coflows = 20;
        v.blast = Duration::from_millis(300);
        a.rounds = 20;
        scale.truncate(3);
    }
    let r = overheads::varys(&v)?;
    println!(
        "Varys, {} protocol daemons, {} coflows ({} flows), {} large ones active behind (ms)",
        r.daemons, v.coflows, r.flows, v.background
    );
    println!(
        "{:<34} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "n", "avg", "p50", "p95", "p99", "max"
    );
    line("schedule (last round, /metrics)", &r.schedule_ms);
    line("distribute (all rates - schedule)", &r.distribute_ms);
    line("register -> READY acknowledged", &r.ready_ms);
    line("READY -> first daemon's rates", &r.first_rates_ms);
    line("READY -> every sender's rates", &r.all_rates_ms);
    println!(
        "messages/s answered (ReportProgress, {} daemons at once): {:.0}",
        r.daemons, r.msgs_per_s
    );
    let ar = overheads::aalo_rounds(&a)?;
    println!();
    println!(
        "Aalo coordination round, {} protocol daemons, {} rounds (ms)",
        ar.daemons, a.rounds
    );
    line("report -> every daemon's new rates", &ar.round_ms);
    println!();
    println!("Aalo round, coordinator's side only (synthetic reports, 100 coflows; ms per round)");
    println!(
        "{:>8} {:>8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "daemons", "coflows", "rounds", "reports", "decide", "encode", "total", "max"
    );
    for d in scale {
        let rounds = if d >= 100_000 { 5 } else { 20 };
        let s = overheads::aalo_scale(d, 100.min(d), rounds)?;
        println!(
            "{:>8} {:>8} {:>7} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
            s.daemons,
            s.coflows,
            s.rounds,
            s.reports_ms,
            s.decide_ms,
            s.encode_ms,
            s.total_ms,
            s.max_total_ms
        );
    }
    Ok(())
}
