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
