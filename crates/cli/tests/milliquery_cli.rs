//! `coflowkit milliquery gen` and `run --local 3` end to end on loopback: rank 0's JSON holds
//! one result per query and hot-key mode, each answer equal to SQLite's on the same tablets;
//! bad tablets and a wrong rank count fail with errors that say what.

use std::path::Path;
use std::process::{Command, Output};

use coflowkit_milliquery::oracle;

fn coflowkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(args)
        .output()
        .unwrap()
}

fn gen(dir: &Path, ranks: &str) {
    let out = coflowkit(&[
        "milliquery",
        "gen",
        "--ranks",
        ranks,
        "--rows-per-rank",
        "400",
        "--seed",
        "7",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn three_local_ranks_answer_as_sqlite_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    gen(&data, "3");
    let json = dir.path().join("out.json");
    let out = coflowkit(&[
        "milliquery",
        "run",
        "--local",
        "3",
        "--query",
        "q1,q2,q3",
        "--hot-keys",
        "off,combine",
        "--data",
        data.to_str().unwrap(),
        "--timeout-s",
        "120",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let want = oracle::answers(&oracle::load(&data, 3).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    for (i, r) in results.iter().enumerate() {
        let q = i % 3;
        assert_eq!(r["query"], ["q1", "q2", "q3"][q]);
        assert_eq!(r["hot_keys"], ["off", "combine"][i / 3]);
        assert_eq!(r["ranks"], 3);
        assert_eq!(
            r["rows"],
            serde_json::to_value(&want[q]).unwrap(),
            "{}",
            r["query"]
        );
        assert!(r["wall_ms"].as_f64().unwrap() > 0.0);
        assert!(r["messages"].as_u64().unwrap() >= 2, "{r}");
        assert!(r["bytes"].as_u64().unwrap() > 0);
        assert!(r["max_over_mean_rows"].as_f64().unwrap() >= 1.0);
        assert!(r["phases"]["gather"]["max_ms"].as_f64().unwrap() >= 0.0);
    }
    // Q1 is a gather alone: M - 1 messages; Q2 adds a shuffle of M (M - 1).
    assert_eq!(results[0]["messages"], 2);
    assert_eq!(results[1]["messages"], 2 + 6);
    assert_eq!(results[2]["messages"], 2 + 3 * 6);
}

#[test]
fn a_rank_count_that_does_not_match_the_tablets_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    gen(dir.path(), "3");
    let out = coflowkit(&[
        "milliquery",
        "run",
        "--local",
        "2",
        "--data",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("3 ranks") && err.contains("--local 2"),
        "{err}"
    );
}

#[test]
fn a_malformed_row_fails_the_job_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    gen(dir.path(), "2");
    let bad = dir.path().join("q2").join("tablet-001.csv");
    let mut text = std::fs::read_to_string(&bad).unwrap();
    text.push_str("1.2.3\n");
    std::fs::write(&bad, text).unwrap();
    let out = coflowkit(&[
        "milliquery",
        "run",
        "--local",
        "2",
        "--query",
        "q2",
        "--data",
        dir.path().to_str().unwrap(),
        "--timeout-s",
        "60",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tablet-001.csv")
            && err.contains("line 402")
            && err.contains("contributor_ip"),
        "{err}"
    );
}
