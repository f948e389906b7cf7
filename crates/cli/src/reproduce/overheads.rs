//! Rows 16 and 25: the coordinator's overheads, measured by this command on the real
//! coordinator (`coflowkit_runtime::overheads`): Varys's schedule, distribution, READY and
//! message rate, and Aalo's coordination round, with 100 in-process protocol daemons on
//! loopback; Aalo's round towards 100,000 daemons on the coordinator's side only.

use std::time::Duration;

use anyhow::{Context as _, Result};
use coflowkit_runtime::overheads::{
    self, AaloRounds, AaloSetting, ScaleRow, VarysOverheads, VarysSetting,
};

use super::rows::Row;
use super::verdict::{fmt_num, Check};

/// What rows 16 and 25 read.
pub struct Measured {
    pub varys: VarysOverheads,
    pub varys_setting: VarysSetting,
    pub aalo: AaloRounds,
    pub aalo_setting: AaloSetting,
    /// The coordinator's side of an Aalo round, fewest daemons first.
    pub scale: Vec<ScaleRow>,
    /// An optimized build (the times mean little otherwise).
    pub optimized: bool,
}

/// Daemons of the coordinator-side bench (full run / --quick).
pub const SCALE_DAEMONS: [usize; 4] = [100, 1_000, 10_000, 100_000];
pub const SCALE_DAEMONS_QUICK: [usize; 2] = [100, 10_000];
/// Concurrent coflows in the coordinator-side bench (the thesis: about 100).
const SCALE_COFLOWS: usize = 100;

/// The example that prints the same tables.
const EXAMPLE: &str = "cargo run --release -p coflowkit-runtime --example overheads";

/// Runs the three measurements (seconds: about 10 in an optimized build, fewer with `quick`).
pub fn measure(quick: bool) -> Result<Measured> {
    let mut vs = VarysSetting::default();
    let mut aas = AaloSetting::default();
    let daemons: &[usize] = if quick {
        vs.coflows = 20;
        vs.blast = Duration::from_millis(300);
        aas.rounds = 30;
        &SCALE_DAEMONS_QUICK
    } else {
        &SCALE_DAEMONS
    };
    let varys = overheads::varys(&vs).context("row 16: Varys on the live coordinator")?;
    let aalo =
        overheads::aalo_rounds(&aas).context("row 25: Aalo rounds on the live coordinator")?;
    let scale = (daemons.iter())
        .map(|&d| {
            let rounds = if quick || d >= 100_000 { 5 } else { 20 };
            overheads::aalo_scale(d, SCALE_COFLOWS.min(d), rounds)
                .with_context(|| format!("row 25: the coordinator's side at {d} daemons"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Measured {
        varys,
        varys_setting: vs,
        aalo,
        aalo_setting: aas,
        scale,
        optimized: !cfg!(debug_assertions),
    })
}

/// Row 16's numbers against the thesis', each overhead judged as a bound (the bound rule:
/// reproduced when ours is at most the thesis' times the tolerance). The thesis' 4000+
/// messages/s is the bound 250 µs of the coordinator's time per message.
pub fn checks_16(v: &VarysOverheads) -> Vec<Check> {
    vec![
        Check::at_most("schedule avg, ms", 17.0, v.schedule_ms.avg),
        Check::at_most("distribute avg, ms", 30.0, v.distribute_ms.avg),
        Check::at_most("register→READY avg, ms", 44.0, v.ready_ms.avg),
        Check::at_most("register→READY p95, ms", 151.0, v.ready_ms.p95),
        Check::at_most("µs per message", 1e6 / 4000.0, 1e6 / v.msgs_per_s),
    ]
}

/// Row 25's numbers against the thesis', as bounds; the 100,000-daemon one only when the
/// bench reached it.
pub fn checks_25(a: &AaloRounds, scale: &[ScaleRow]) -> Vec<Check> {
    let mut v = vec![
        Check::at_most("round avg at 100, ms", 8.0, a.round_ms.avg),
        Check::at_most("round p99 at 100, ms", 19.0, a.round_ms.p99),
    ];
    if let Some(r) = scale.iter().find(|r| r.daemons == 100_000) {
        v.push(Check::at_most(
            "coordinator's side at 100k, ms",
            992.0,
            r.total_ms,
        ));
    }
    v
}

fn build(optimized: bool) -> &'static str {
    if optimized {
        "an optimized build"
    } else {
        "a debug build, so the times mean little"
    }
}

const BOUNDS: &str = "Overheads are judged as bounds (the bound rule: reproduced when ours is at \
most the thesis' times 1.15): a lower number means the coordinator costs no more than the \
thesis' did, not that the setting is the same.";

pub fn row_16(m: Option<&Measured>) -> Row {
    let what = "Varys overheads (ms)";
    let thesis = "schedule 17, distribute 30, READY 44 (p95 151), 4000+ msg/s";
    let Some(m) = m else {
        return not_measured(16, what, thesis);
    };
    let v = &m.varys;
    let s = &m.varys_setting;
    let st = |x: &overheads::Stats| {
        format!(
            "avg {} ms, p95 {}, p99 {}",
            fmt_num(x.avg),
            fmt_num(x.p95),
            fmt_num(x.p99)
        )
    };
    Row {
        n: 16,
        what,
        thesis,
        exact: Some(checks_16(v)),
        reference: None,
        note: format!(
            "Measured by this command ({}) on the real coordinator (its own runtime, Varys, \
             default settings) with {} in-process protocol daemons on loopback: each has its \
             own gRPC connection, registers, follows its rate stream and sends StartFlow and \
             ReportProgress as a daemon does, but moves no bytes. {} coflows one after the \
             other ({} flows, 1 to {} each between random daemons, 1 MB to 100 MB a flow, \
             registered with numFlows so they are READY at their last get), behind {} large \
             coflows (10 to 100 GB a flow) active all along; the measured one is the smallest, \
             so SEBF serves it first. The gets of a coflow are sent at once, then the last one \
             (the READY event); a sender holds its rate when its stream brings a table giving \
             the flow a rate above 0. Schedule: the coordinator's last round once every sender holds its rate \
             (`coflowkit_last_round_seconds` of `/metrics`): {}. READY to the first sender \
             holding its rate: {}; to every sender: {}. Distribute: every sender's less the \
             schedule: {}. Register to READY acknowledged: {}; the thesis' 44 ms is mostly the \
             application's own spread of get() calls, which this test does not have (its gets \
             are sent at once), so ours is the control plane's share only. Message rate: {} \
             daemons each sending ReportProgress back to back for {:.1} s: {:.0} messages/s \
             answered, with the senders on the same 2 cores, so a lower bound. {BOUNDS}",
            build(m.optimized),
            v.daemons,
            s.coflows,
            v.flows,
            s.max_width,
            s.background,
            st(&v.schedule_ms),
            st(&v.first_rates_ms),
            st(&v.all_rates_ms),
            st(&v.distribute_ms),
            st(&v.ready_ms),
            v.daemons,
            s.blast.as_secs_f64(),
            v.msgs_per_s
        ),
        runs: vec![],
        other: vec![EXAMPLE.into()],
    }
}

pub fn row_25(m: Option<&Measured>) -> Row {
    let what = "Aalo coordination overhead (ms)";
    let thesis = "8 avg, 19 p99 (100 machines); 992 ms at 100k daemons";
    let Some(m) = m else {
        return not_measured(25, what, thesis);
    };
    let a = &m.aalo;
    let scale = (m.scale.iter())
        .map(|r| {
            format!(
                "{} daemons {} ms (reports {}, decide {}, encode {}; slowest {})",
                r.daemons,
                fmt_num(r.total_ms),
                fmt_num(r.reports_ms),
                fmt_num(r.decide_ms),
                fmt_num(r.encode_ms),
                fmt_num(r.max_total_ms)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    Row {
        n: 25,
        what,
        thesis,
        exact: Some(checks_25(a, &m.scale)),
        reference: None,
        note: format!(
            "Measured by this command ({}). At {} daemons: the real coordinator (Aalo, \
             Δ = 10 ms) with in-process protocol daemons on loopback as in row 16, each with a \
             flow of a large background coflow (in a low queue); {} rounds, in each every \
             daemon at once reports its background flow's bytes and starts one flow of the \
             round's new coflow (Q1, served first); a round is from the first report's sending \
             to every daemon holding a rate table that gives its new flow a rate above 0 (the \
             round's coflow then ends, untimed): avg {} ms, p50 {}, p95 {}, p99 {}, max \
             {}. Towards 100,000 daemons, the coordinator's side only (an in-process bench \
             with synthetic reports, one flow per daemon in {SCALE_COFLOWS} coflows: decode \
             and apply every daemon's report, decide in full, encode every daemon's rate \
             table; no network): {scale}. The thesis' 992 ms also carries 1000 daemons' \
             messages to each of its 100 machines, which this bench does not. {BOUNDS}",
            build(m.optimized),
            a.daemons,
            m.aalo_setting.rounds,
            fmt_num(a.round_ms.avg),
            fmt_num(a.round_ms.p50),
            fmt_num(a.round_ms.p95),
            fmt_num(a.round_ms.p99),
            fmt_num(a.round_ms.max)
        ),
        runs: vec![],
        other: vec![EXAMPLE.into()],
    }
}

fn not_measured(n: u32, what: &'static str, thesis: &'static str) -> Row {
    Row {
        n,
        what,
        thesis,
        exact: None,
        reference: None,
        note: format!(
            "Not measured in this run. `{EXAMPLE}` measures it on the real coordinator with \
             100 in-process protocol daemons on loopback (README, \"Coordinator overheads\")."
        ),
        runs: vec![],
        other: vec![EXAMPLE.into()],
    }
}

#[cfg(test)]
mod tests {
    use super::super::verdict::{combine, Verdict};
    use super::*;
    use coflowkit_runtime::overheads::Stats;

    fn flat(x: f64) -> Stats {
        Stats::of(&[x])
    }

    fn varys(schedule: f64, distribute: f64, ready: f64, msgs: f64) -> VarysOverheads {
        VarysOverheads {
            daemons: 100,
            flows: 10,
            schedule_ms: flat(schedule),
            ready_ms: flat(ready),
            first_rates_ms: flat(1.0),
            all_rates_ms: flat(schedule + distribute),
            distribute_ms: flat(distribute),
            msgs_per_s: msgs,
        }
    }

    #[test]
    fn row_16_follows_its_numbers() {
        // Every overhead under the thesis' and more than 4000 messages/s: reproduced.
        let c = checks_16(&varys(0.5, 2.0, 3.0, 20_000.0));
        assert_eq!(combine(&c), Verdict::Reproduced, "{c:?}");
        // 19 ms against 17 is within the tolerance (17 x 1.15 = 19.55); 20 is not.
        assert_eq!(
            combine(&checks_16(&varys(19.0, 2.0, 3.0, 20_000.0))),
            Verdict::Reproduced
        );
        let c = checks_16(&varys(20.0, 2.0, 3.0, 20_000.0));
        assert_eq!(c[0].verdict(), Verdict::Not);
        assert_eq!(combine(&c), Verdict::Partly);
        // 3000 messages/s is under the thesis' 4000+ (333 µs a message against 250 x 1.15).
        let c = checks_16(&varys(0.5, 2.0, 3.0, 3000.0));
        assert_eq!(c[4].verdict(), Verdict::Not);
        assert_eq!(combine(&c), Verdict::Partly);
        // Everything slower: not; a measurement that failed (NaN): not.
        let c = checks_16(&varys(50.0, 90.0, 500.0, 100.0));
        assert_eq!(combine(&c), Verdict::Not);
        let c = checks_16(&varys(f64::NAN, 2.0, 3.0, 20_000.0));
        assert_eq!(c[0].verdict(), Verdict::Not);
    }

    #[test]
    fn row_25_follows_its_numbers_and_checks_100k_only_when_reached() {
        let rounds = |v: &[f64]| AaloRounds {
            daemons: 100,
            round_ms: Stats::of(v),
        };
        let at = |daemons: usize, total: f64| ScaleRow {
            daemons,
            coflows: 100,
            rounds: 5,
            reports_ms: total / 3.0,
            decide_ms: total / 3.0,
            encode_ms: total / 3.0,
            total_ms: total,
            max_total_ms: total,
        };
        // Fast rounds, 100k not reached: two checks, reproduced.
        let c = checks_25(&rounds(&[2.0, 3.0, 4.0]), &[at(100, 0.1)]);
        assert_eq!(c.len(), 2);
        assert_eq!(combine(&c), Verdict::Reproduced);
        // A slow tail: the p99 (the slowest of 10, 30 ms) fails its bound (19 x 1.15), the
        // average (5.6 ms) holds.
        let tail = [2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 30.0];
        let c = checks_25(&rounds(&tail), &[at(100, 0.1)]);
        assert_eq!(c[0].verdict(), Verdict::Reproduced);
        assert_eq!(c[1].verdict(), Verdict::Not);
        assert_eq!(combine(&c), Verdict::Partly);
        // 100k reached: its bound is checked.
        let c = checks_25(&rounds(&[2.0]), &[at(100, 0.1), at(100_000, 1500.0)]);
        assert_eq!(c.len(), 3);
        assert_eq!(c[2].verdict(), Verdict::Not);
        let c = checks_25(&rounds(&[2.0]), &[at(100_000, 900.0)]);
        assert_eq!(combine(&c), Verdict::Reproduced);
    }

    #[test]
    fn without_a_measurement_the_rows_are_not_run_and_name_the_example() {
        for r in [row_16(None), row_25(None)] {
            assert_eq!(r.verdict_exact(), Verdict::NotRun);
            assert!(r.other.iter().any(|c| c.contains("--example overheads")));
        }
    }
}
