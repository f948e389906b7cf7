//! What the adversarial pass of session 34 found in the simulators and generators (its rows
//! C1-C3, C5, C7, C11's generator part and C13), through the real binary: `shuffle sim`
//! preemption settings that panicked on overflow or aborted on a 320 GB allocation, a DAG trace
//! stripped of its parents by `--concurrent`, a release past 2^53 ms, and `trace gen tpcds`
//! messages naming a flag it does not have or echoing 300-digit numbers. Runs that could
//! allocate are under an address-space limit, so a regression aborts (a signal, caught below)
//! instead of taking the machine; every run has a time limit. (C4, the quadratic DAG release,
//! is counted in `coflowkit_flowsim::dag`'s tests and `coflowkit_model::trace::dag`'s.)

mod common;
use common::bounded::{ok, refused, run, run_with};
use common::write;

use std::time::Duration;

const MAX: &str = "18446744073709551615";

/// No number of 40 digits or more in a message (C11: 300-digit numbers were echoed).
fn no_long_number(err: &str) {
    let longest = err
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(longest < 40, "a {longest}-digit number in: {err}");
}

/// C1: `--preempt 1e-320` made a running interval of about 2^64 steps and `until += len`
/// overflowed (panic); C2: `--preempt-interval-rtt 1e18` overflowed the oracles' horizon.
/// Both flags now have ranges on both sides, refused by the parser naming the flag.
#[test]
fn shuffle_sim_preemption_flags_are_bounded_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for p in [
        "1e-320", "5e-324", "2.2e-308", "1e-7", "0.995", "1", "NaN", "-0.5",
    ] {
        let flag = format!("--preempt={p}");
        let e = refused(d, &["shuffle", "sim", &flag], 2, &["--preempt"]);
        no_long_number(&e);
    }
    refused(
        d,
        &[
            "shuffle",
            "sim",
            "--preempt",
            "1e-250",
            "--preempt-interval-rtt",
            "1e100",
        ],
        2,
        &["--preempt"],
    );
    for r in ["1e18", "1e300", "10001", "1e-320", "0.001", "0", "inf"] {
        let e = refused(
            d,
            &[
                "shuffle",
                "sim",
                "--preempt",
                "0.5",
                "--preempt-interval-rtt",
                r,
            ],
            2,
            &["--preempt-interval-rtt"],
        );
        no_long_number(&e);
    }
    // The ends of the ranges run (a small shuffle), as does 0 (off).
    for args in [
        &["--preempt", "0.000001"][..],
        &["--preempt", "0.99", "--preempt-interval-rtt", "0.5"],
        &["--preempt", "0"],
    ] {
        let mut a = vec!["shuffle", "sim", "--nodes", "4", "--max-steps", "200000"];
        a.extend_from_slice(args);
        let r = run(d, &a);
        assert!(
            r.code == Some(0) || r.err().contains("did not finish"),
            "{a:?}: {:?} {}",
            r.code,
            r.err()
        );
        assert!(!r.err().contains("panicked"), "{a:?}: {}", r.err());
    }
}

/// C3: the preemption oracles replay every node over a horizon of 4 x the mean interval; with
/// `--preempt-interval-rtt 1e9` that asked for 32 GB at once (abort), 1e6 grew to the limit in
/// 12 s. Within the flag's range the replay can still pass the memory this process may use:
/// refused before the run, naming the flag and the estimate.
#[test]
fn shuffle_sim_preemption_replay_is_estimated_and_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 1,000 nodes over a horizon of about 320,000 steps: about 1.6 GB, over a 1 GiB limit.
    let args = [
        "shuffle",
        "sim",
        "--nodes",
        "1000",
        "--avg-packets",
        "1",
        "--preempt",
        "0.5",
        "--preempt-interval-rtt",
        "10000",
    ];
    let r = run_with(d, &args, 1, Duration::from_secs(120), None);
    let err = r.err();
    assert_eq!(r.code, Some(1), "{args:?}: {err}");
    for w in [
        "preempt-interval-rtt",
        "preemption oracles",
        "GB",
        "1000 nodes",
    ] {
        assert!(err.contains(w), "wanted `{w}` in: {err}");
    }
    no_long_number(&err);
}

/// C5: `sim --concurrent` cleared every coflow's parents (and so its compute time) without a
/// word; a DAG trace is refused, as `--max-waves` refuses one.
#[test]
fn sim_concurrent_refuses_a_dag_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dag = write(
        d,
        "dag.txt",
        "4 3\n1 0 1 0 1 1:1.0\n2 0 1 1 1 2:1.0 parents 1 1 compute 10\n\
         3 0 1 2 1 3:1.0 parents 2 1 2\n",
    );
    refused(
        d,
        &["sim", "--trace", &dag, "-s", "varys", "--concurrent", "3"],
        1,
        &[
            "--concurrent",
            "coflow 2 has parents",
            "without --concurrent",
        ],
    );
    // Without parents it still runs.
    let flat = write(d, "flat.txt", "4 2\n1 0 1 0 1 1:1.0\n2 0 1 1 1 2:1.0\n");
    ok(
        d,
        &["sim", "--trace", &flat, "-s", "varys", "--concurrent", "2"],
    );
}

/// C13: a child released at 1.8e16 ms (arrival near 2^53 plus a compute of 2^53 ms) got a CCT
/// of 0; such a release is refused naming file, line and the compute field.
#[test]
fn sim_refuses_a_release_past_2_53_ms() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = write(
        d,
        "p.txt",
        "4 2\n1 9007199254740000 1 0 1 1:0.001\n\
         2 9007199254740000 1 0 1 1:0.001 parents 1 1 compute 9007199254740992\n",
    );
    refused(
        d,
        &["sim", "--trace", &p, "-s", "varys"],
        1,
        &["p.txt:3:", "field 11 (compute ms)", "past 2^53 ms"],
    );
}

/// C7: `trace gen tpcds --queries 100000` was refused naming `--coflows`, a flag it does not
/// have, and `--max-scans 4294967296` got that memory message before its range check; C11:
/// `--load 1e-320` and `--compute-ms 1e308` echoed 300-digit numbers. Ranges at the parser,
/// and the memory message names the flags given.
#[test]
fn trace_gen_tpcds_names_its_own_flags_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fn gen<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec!["trace", "gen", "tpcds", "-o", "out.txt"];
        a.extend_from_slice(extra);
        a
    }
    let e = refused(
        d,
        &gen(&["--queries", "100000"]),
        1,
        &["--queries 100000", "GB"],
    );
    assert!(!e.contains("--coflows"), "{e}");
    for q in ["0", "1000001", MAX] {
        refused(d, &gen(&["--queries", q]), 2, &["--queries"]);
    }
    for s in ["0", "65", "100000", "4294967296", MAX] {
        let e = refused(d, &gen(&["--max-scans", s]), 2, &["--max-scans"]);
        assert!(!e.contains("GB"), "{e}");
    }
    for l in ["1e-320", "5e-324", "0", "1e308", "NaN", "-1"] {
        let flag = format!("--load={l}");
        let e = refused(d, &gen(&[&flag]), 2, &["--load"]);
        no_long_number(&e);
    }
    for c in [
        "1e308",
        "1e308-1e308",
        "0-1e308",
        "1e-320-0",
        "-5",
        "5-1",
        "x-1",
        "86400001",
    ] {
        let flag = format!("--compute-ms={c}");
        let e = refused(d, &gen(&[&flag]), 2, &["--compute-ms"]);
        no_long_number(&e);
    }
    // The ends of the ranges are accepted.
    ok(
        d,
        &gen(&[
            "--queries",
            "2",
            "--max-scans",
            "64",
            "--compute-ms",
            "0-86400000",
        ]),
    );
    ok(d, &gen(&["--queries", "2", "--load", "0.000001"]));
}
