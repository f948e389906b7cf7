//! `coflowkit fetch` as users meet it: the JSON contracts of the issue, clear errors and
//! non-zero exits on bad input.

mod common;
use common::coflowkit;

use std::path::Path;
use std::process::Output;

/// A small heterogeneous `fetch sim`, up to `--json` (the path follows).
const SMALL_SIM: [&str; 19] = [
    "fetch",
    "sim",
    "--nodes",
    "6",
    "--rates",
    "160mbit:3,320mbit:3",
    "--maps-per-node",
    "2",
    "--reducers",
    "6",
    "--fetchers",
    "3",
    "--policy",
    "gss,pgss",
    "--partition-mb",
    "1",
    "--seed",
    "3",
    "--json",
];

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn fails_with(args: &[&str], message: &str) {
    let out = coflowkit(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(message), "{args:?}: {err}");
}

#[test]
fn bw_reproduces_table_5_in_flow_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bw.json");
    // M12: the even pattern (B->A, C->A, A->B, C->B, A->C, B->C) plus C->B on 6,6,12.
    let out = coflowkit(&[
        "fetch",
        "bw",
        "--rates",
        "6,6,12",
        "--flows",
        "1-0,2-0,0-1,2-1,0-2,1-2,2-1",
        "--json",
        p.to_str().unwrap(),
    ]);
    ok(&out);
    let v = json(&p);
    let rates: Vec<f64> = v["rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_f64().unwrap())
        .collect();
    let want = [3.0, 3.0, 2.0, 2.0, 4.0, 3.0, 2.0];
    assert_eq!(rates.len(), want.len());
    for (r, w) in rates.iter().zip(want) {
        assert!((r - w).abs() < 1e-9, "{rates:?}");
    }
    assert!((v["total"].as_f64().unwrap() - 19.0).abs() < 1e-9);
    assert!(String::from_utf8_lossy(&out.stdout).contains("total"));
}

#[test]
fn bw_refuses_bad_rates_and_flows() {
    fails_with(
        &["fetch", "bw", "--rates", "6,fast", "--flows", "0-1"],
        "--rates item 2 `fast`: invalid rate `fast`",
    );
    fails_with(
        &["fetch", "bw", "--rates", "6,6,12", "--flows", "0-2,1-3"],
        "--flows item 2 `1-3`: destination node 3 out of range 0..3",
    );
    fails_with(
        &["fetch", "bw", "--rates", "6,6", "--flows", "0+1"],
        "expected SRC-DST",
    );
}

#[test]
fn sim_writes_the_results_contract_with_random_as_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.json");
    let plot = ["--plot", dir.path().to_str().unwrap()];
    let out = coflowkit(&[&SMALL_SIM[..], &[p.to_str().unwrap()], &plot].concat());
    ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("vs random"), "{stdout}");
    let v = json(&p);
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["random", "gss", "pgss"]);
    for r in results {
        let t = r["shuffle_time_s"].as_f64().unwrap();
        assert!(t > 0.0);
        assert!(r["avg_task_rate_bps"].as_f64().unwrap() > 0.0);
        assert!(r["link_utilization"].as_f64().unwrap() <= 1.0 + 1e-9);
    }
    assert_eq!(results[0]["shuffle_time_gain_pct"].as_f64().unwrap(), 0.0);
    assert_eq!(v["config"]["nodes"], 6);
    assert!(dir.path().join("fetch_completion_ratio.svg").exists());
    // Same seed, same numbers.
    let p2 = dir.path().join("again.json");
    let again = coflowkit(&[&SMALL_SIM[..], &[p2.to_str().unwrap()]].concat());
    ok(&again);
    for (a, b) in json(&p2)["results"].as_array().unwrap().iter().zip(results) {
        for key in [
            "shuffle_time_s",
            "avg_task_rate_bps",
            "link_utilization",
            "decisions",
        ] {
            assert_eq!(a[key], b[key], "{key}");
        }
    }
}

#[test]
fn sim_replays_a_trace_pull_based() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.txt");
    std::fs::write(&t, "4 2\n1 0 2 0 1 2 2:2.0 3:1.0\n2 10 1 3 1 0:4.0\n").unwrap();
    let p = dir.path().join("out.json");
    let out = coflowkit(&[
        "fetch",
        "sim",
        "--trace",
        t.to_str().unwrap(),
        "--rates",
        "1gbit",
        "--policy",
        "pgss",
        "--json",
        p.to_str().unwrap(),
    ]);
    ok(&out);
    let v = json(&p);
    assert_eq!(v["config"]["nodes"], 4);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    // Coflow 2 (4 MB, alone on 3 -> 0 from t=10 ms) ends last: 10 ms + 4 MiB at 1 Gbit/s.
    let want = 0.010 + 4.0 * 1_048_576.0 * 8.0 / 1e9;
    for r in results {
        let got = r["shuffle_time_s"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }
    fails_with(
        &[
            "fetch",
            "sim",
            "--trace",
            t.to_str().unwrap(),
            "--rates",
            "1gbit:3",
        ],
        "--rates describes 3 nodes but the trace has 4 ports",
    );
}

#[test]
fn sim_and_util_refuse_bad_input() {
    fails_with(
        &[
            "fetch",
            "sim",
            "--nodes",
            "4",
            "--rates",
            "160mbit:2,320mbit:1",
        ],
        "--rates describes 3 nodes but --nodes is 4",
    );
    fails_with(
        &["fetch", "sim", "--policy", "pgss,magic"],
        "unknown selection policy `magic`",
    );
    fails_with(
        &["fetch", "sim", "--rates", "1zbit"],
        "invalid rate `1zbit`",
    );
    fails_with(
        &["fetch", "sim", "--fetchers", "0"],
        "--fetchers must be at least 1",
    );
    fails_with(&["fetch", "util", "--nodes", "1"], "at least 2");
}

#[test]
fn util_reports_a_gain_over_random() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("u.json");
    let out = coflowkit(&[
        "fetch",
        "util",
        "--nodes",
        "6",
        "--low-share",
        "0.5",
        "--policy",
        "pgss",
        "--rounds",
        "20",
        "--warmup",
        "2",
        "--runs",
        "2",
        "--runs-random",
        "4",
        "--json",
        p.to_str().unwrap(),
    ]);
    ok(&out);
    let v = json(&p);
    let r = v["results"].as_array().unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["policy"], "random");
    assert_eq!(r[0]["gain_pct"].as_f64().unwrap(), 0.0);
    // 3 x 512 + 3 x 1024 Mbit/s.
    assert!((r[1]["capacity_bps"].as_f64().unwrap() - 4608e6).abs() < 1.0);
    assert!(r[1]["of_capacity"].as_f64().unwrap() <= 1.0 + 1e-9);
}
