//! The overheads measurement (key results rows 16 and 25) runs on the live coordinator in a
//! small setting and gives finite, positive numbers; bad settings are refused by name.

use std::time::Duration;

use coflowkit_runtime::overheads::{self, AaloSetting, Stats, VarysSetting};

fn finite_positive(what: &str, s: &Stats, n: usize) {
    assert_eq!(s.n, n, "{what}: {s:?}");
    for x in [s.avg, s.p50, s.p95, s.p99, s.max] {
        assert!(x.is_finite() && x > 0.0, "{what}: {s:?}");
    }
    assert!(
        s.p50 <= s.p95 && s.p95 <= s.p99 && s.p99 <= s.max,
        "{what}: {s:?}"
    );
}

#[test]
fn varys_overheads_are_measured_on_the_live_coordinator() {
    let s = VarysSetting {
        daemons: 6,
        coflows: 8,
        max_width: 5,
        background: 2,
        blast: Duration::from_millis(200),
        seed: 3,
    };
    let r = overheads::varys(&s).unwrap();
    assert_eq!(r.daemons, 6);
    assert!(r.flows >= 8 && r.flows <= 40, "{}", r.flows);
    finite_positive("schedule", &r.schedule_ms, 8);
    finite_positive("ready", &r.ready_ms, 8);
    finite_positive("all rates", &r.all_rates_ms, 8);
    // The first sender's rates come no later than every sender's.
    assert!(r.first_rates_ms.avg <= r.all_rates_ms.avg);
    assert!(r.first_rates_ms.avg >= 0.0 && r.distribute_ms.avg >= 0.0);
    assert!(r.distribute_ms.avg <= r.all_rates_ms.avg);
    assert!(
        r.msgs_per_s.is_finite() && r.msgs_per_s > 10.0,
        "{}",
        r.msgs_per_s
    );
}

#[test]
fn aalo_rounds_and_the_coordinator_side_are_measured() {
    let r = overheads::aalo_rounds(&AaloSetting {
        daemons: 5,
        rounds: 6,
        seed: 2,
    })
    .unwrap();
    finite_positive("round", &r.round_ms, 6);
    let row = overheads::aalo_scale(50, 5, 3).unwrap();
    assert_eq!((row.daemons, row.coflows, row.rounds), (50, 5, 3));
    for x in [row.reports_ms, row.decide_ms, row.encode_ms] {
        assert!(x.is_finite() && x > 0.0, "{row:?}");
    }
    assert!((row.total_ms - (row.reports_ms + row.decide_ms + row.encode_ms)).abs() < 1e-9);
    assert!(row.max_total_ms >= row.total_ms - 1e-9, "{row:?}");
}

#[test]
fn bad_settings_are_refused_by_name() {
    let e = overheads::varys(&VarysSetting {
        daemons: 1,
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("1 daemons"), "{e}");
    let e = overheads::aalo_rounds(&AaloSetting {
        rounds: 0,
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("rounds"), "{e}");
    let e = overheads::aalo_scale(10, 11, 1).unwrap_err();
    assert!(e.to_string().contains("coflows"), "{e}");
    let e = overheads::aalo_scale(1, 1, 1).unwrap_err();
    assert!(e.to_string().contains("1 daemons"), "{e}");
}
