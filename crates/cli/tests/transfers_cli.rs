//! `coflowkit transfers` as users meet it: an experiment's JSON from real processes on
//! loopback, and bad input named.

mod common;
use common::{coflowkit, failed, succeeded};

#[test]
fn madd_experiment_writes_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("madd.json");
    let stdout = succeeded(&coflowkit(&[
        "transfers",
        "--experiment",
        "madd",
        "--n",
        "2",
        "--unit",
        "512k",
        "--rate",
        "200mbit",
        "--json",
        json.to_str().unwrap(),
    ]));
    assert!(
        stdout.contains("standard_s") && stdout.contains("25%"),
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["experiment"], "madd");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["topology"], "A");
    assert!(r["error"].is_null(), "{r}");
    // MADD's flows are paced to end together at Γ: never before it.
    let (madd, bound) = (
        r["madd_s"].as_f64().unwrap(),
        r["bound_s"].as_f64().unwrap(),
    );
    assert!(madd >= 0.95 * bound, "{r}");
}

#[test]
fn bad_transfers_input_is_named() {
    let err = failed(&coflowkit(&[
        "transfers",
        "--experiment",
        "itc",
        "--policy",
        "lottery",
    ]));
    assert!(err.contains("--policy `lottery`"), "{err}");
    let err = failed(&coflowkit(&[
        "transfers",
        "--experiment",
        "fetch",
        "--receivers",
        "0",
    ]));
    assert!(err.contains("--receivers"), "{err}");
}

/// `--timeout-s` holds while a transfer's arrival is still to come: the ad hoc transfer
/// arrives after an hour, the run gives up after 2 s with the reason. Before, the controller
/// slept until the arrival, whatever the timeout.
#[test]
fn the_timeout_holds_while_an_arrival_is_pending() {
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args([
            "transfers",
            "--experiment",
            "itc",
            "--senders",
            "1",
            "--receivers",
            "1",
            "--bytes",
            "64k",
            "--adhoc-bytes",
            "64k",
            "--adhoc-at-s",
            "3600",
            "--policy",
            "fifo",
            "--timeout-s",
            "2",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    // Generous for a loaded machine; an hour if the timeout is ignored.
    let limit = Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("transfers --timeout-s 2 still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("not done after the timeout of 2 s"),
        "status {:?}: {text}",
        out.status
    );
}
