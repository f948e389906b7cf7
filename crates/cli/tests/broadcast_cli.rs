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

/// `--runtime`: the same command through the coordinator, daemons and clients of the real
/// system (loopback, daemons on addresses of their own so the topology names them): every
/// receiver's copy compared with the source's bytes, the digest the seed's.
#[test]
fn broadcast_through_the_runtime_is_byte_exact_at_every_receiver() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let stdout = succeeded(&coflowkit(&[
        "broadcast",
        "--runtime",
        "--itc",
        "priority",
        "--local",
        "4",
        "--racks",
        "2",
        "--bytes",
        "3m",
        "--block-size",
        "256k",
        "--rate",
        "400mbit",
        "--seed",
        "7",
        "--mechanism",
        "cornet,cornet-topology,cornet-clustering",
        "--json",
        json.to_str().unwrap(),
    ]));
    assert!(stdout.contains("cornet-clustering"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = v["results"].as_array().unwrap();
    let want =
        coflowkit_orchestra::data::digest([coflowkit_orchestra::data::make(7, 3 << 20).as_slice()]);
    assert_eq!(results.len(), 3);
    for r in results {
        assert_eq!(r["error"], serde_json::Value::Null, "{r}");
        assert_eq!(r["checksums_ok"], true, "{r}");
        assert_eq!(r["digest"].as_str().unwrap(), want);
        assert_eq!(r["block_bytes"], 256 << 10);
        let times: Vec<f64> = r["receiver_times_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect();
        assert_eq!(times.len(), 4);
        assert_eq!(
            r["completion_s"].as_f64().unwrap(),
            times.iter().copied().fold(0.0, f64::max)
        );
        // Paced at 400 Mbit/s: 3 MiB out of the source alone takes 63 ms; 4 copies out of 5
        // hosts' uplinks at least 4 * 3 MiB / (5 * 50 MB/s) = 50 ms.
        assert!(times.iter().all(|&t| t > 0.05), "{times:?}");
    }
}

#[test]
fn the_runtime_refuses_what_it_cannot_run_by_name() {
    let err = failed(&coflowkit(&[
        "broadcast",
        "--runtime",
        "--local",
        "2",
        "--mechanism",
        "cornet,chain",
    ]));
    assert!(
        err.contains("`chain`") && err.contains("--runtime"),
        "{err}"
    );
    let err = failed(&coflowkit(&["broadcast", "--local", "2", "--itc", "fifo"]));
    assert!(err.contains("--runtime"), "{err}");
    let err = failed(&coflowkit(&[
        "broadcast",
        "--runtime",
        "--local",
        "2",
        "--itc",
        "lottery",
    ]));
    assert!(err.contains("--itc `lottery`"), "{err}");
}
