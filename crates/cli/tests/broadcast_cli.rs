//! `coflowkit broadcast` as users meet it: the JSON of issue 23 from real processes on
//! loopback, and bad input named.

mod common;
use common::{coflowkit, failed, succeeded};

#[test]
fn broadcast_writes_one_result_per_mechanism() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let stdout = succeeded(&coflowkit(&[
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
        json.to_str().unwrap(),
    ]));
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
    let err = failed(&coflowkit(&[
        "broadcast",
        "--local",
        "2",
        "--mechanism",
        "cornet,torrent",
    ]));
    assert!(err.contains("unknown mechanism `torrent`"), "{err}");
    let err = failed(&coflowkit(&["broadcast", "--local", "2", "--kill", "zero"]));
    assert!(err.contains("HOST@SECONDS"), "{err}");
    let err = failed(&coflowkit(&["broadcast", "--local", "2", "--bytes", "1q"]));
    assert!(err.contains("--bytes"), "{err}");
}
