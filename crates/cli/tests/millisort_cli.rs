//! `coflowkit millisort --local 4`: four processes on loopback sort Sort Benchmark records and
//! validate the result globally; a rank that dies makes the others fail with a clear error.

use std::process::Command;

fn millisort(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .arg("millisort")
        .args(args)
        .output()
        .unwrap()
}

fn sorted_and_validated(extra: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ms.json");
    let mut args = vec![
        "--local",
        "4",
        "--records-per-rank",
        "1500",
        "--levels",
        "1,2",
        "--reduction",
        "2",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--timeout-s",
        "60",
        "--json",
    ];
    let path = json.to_str().unwrap().to_string();
    args.push(&path);
    args.extend_from_slice(extra);
    let out = millisort(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = doc.as_array().unwrap().clone();
    assert_eq!(rows.len(), 2, "one row per level");
    for r in &rows {
        assert_eq!(r["records"], 6000);
        assert_eq!(r["ranks"], 4);
        let v = &r["validation"];
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["records"], 6000);
        assert_eq!(v["checksum"], v["input_checksum"]);
        assert_eq!(v["unordered"], 0);
        assert_eq!(v["full"], true);
        assert!(r["wall_ms"].as_f64().unwrap() > 0.0);
        assert_eq!(r["phases"].as_object().unwrap().len(), 10);
        assert!(r["phases"]["record_shuffle"]["bytes"].as_u64().unwrap() > 3000 * 106);
        assert!(r["partition_excess"].as_f64().unwrap() < 1.0);
    }
    rows
}

#[test]
fn four_local_ranks_sort_uniform_keys_and_validate() {
    let rows = sorted_and_validated(&[]);
    // Two levels with r = 2: two pivot sorters shuffle pivots (one message each way).
    assert_eq!(rows[1]["levels"], 2);
    assert_eq!(rows[1]["phases"]["pivot_shuffle"]["messages"], 2);
    assert_eq!(rows[0]["phases"]["pivot_shuffle"]["messages"], 0);
}

#[test]
fn four_local_ranks_sort_skewed_keys_and_validate() {
    sorted_and_validated(&["--skewed", "--protocol", "grpf", "--splitters", "naive"]);
}

#[test]
fn a_rank_that_leaves_makes_the_others_fail_naming_it() {
    let out = millisort(&[
        "--local",
        "3",
        "--records-per-rank",
        "100",
        "--fail-rank",
        "2",
        "--timeout-s",
        "60",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank 2 did not answer"), "{err}");
}

#[test]
fn bad_options_are_refused_before_any_rank_starts() {
    for (args, word) in [
        (vec!["--local", "2", "--levels", "3"], "--levels 3"),
        (vec!["--local", "2", "--splitters", "median"], "median"),
        (vec!["--local", "2", "--protocol", "tcp"], "tcp"),
        (vec!["--local", "2", "--validate", "most"], "most"),
    ] {
        let out = millisort(&args);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(word), "{word}: {err}");
    }
}
