//! `coflowkit broadcast` as users meet it: the JSON of issue 23 from real processes on
//! loopback, and bad input named.

use std::process::Command;

fn coflowkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_coflowkit"))
}

#[test]
fn broadcast_writes_one_result_per_mechanism() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = coflowkit()
        .args([
            "broadcast",
            "--local",
            "3",
            "--bytes",
            "1m",
            "--block-size",
            "128k",
            "--pipe-size",
            "64k",
            "--chunk-size",
            "64k",
            "--rate",
            "200mbit",
            "--mechanism",
            "cornet,tree,chain,hdfs3,hdfs10,bittorrent",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("completion_s") && stdout.contains("bittorrent"),
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["mechanism"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["cornet", "tree", "chain", "hdfs3", "hdfs10", "bittorrent"]
    );
    for r in results {
        assert_eq!(r["receivers"], 3);
        assert_eq!(r["bytes"], 1 << 20);
        assert_eq!(r["checksums_ok"], true);
        let times = r["receiver_times_s"].as_array().unwrap();
        assert_eq!(times.len(), 3);
        let last = times
            .iter()
            .map(|t| t.as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(r["completion_s"].as_f64().unwrap(), last);
        assert!(r["lower_bound_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bad_input_is_named() {
    let out = coflowkit()
        .args(["broadcast", "--local", "2", "--mechanism", "cornet,torrent"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown mechanism `torrent`"), "{err}");
    let out = coflowkit()
        .args(["broadcast", "--local", "2", "--kill", "zero"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("HOST@SECONDS"));
    let out = coflowkit()
        .args(["broadcast", "--local", "2", "--bytes", "1q"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bytes"));
}
