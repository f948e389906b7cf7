//! `coflowkit shuffle run --local M`: real processes shuffle a matrix over UDP on loopback under
//! every protocol; rank 0 reports rows whose byte counts we compute here from the matrix file.

mod common;

use common::{coflowkit, write};

/// The network bytes of `text` (a `nodes n packets` matrix) scaled to `avg` bytes per message,
/// computed as the docs define it: normalize to mean 1, round(w x avg), drop the diagonal.
fn network_bytes(text: &str, avg: f64) -> u64 {
    let mut rows = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let n: usize = rows
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let cells: Vec<f64> = rows
        .flat_map(|l| l.split_whitespace().map(|x| x.parse::<f64>().unwrap()))
        .collect();
    let total: f64 = cells.iter().sum();
    let scale = (n * n) as f64 / total;
    let mut bytes = 0;
    for i in 0..n {
        for j in 0..n {
            if i != j {
                bytes += (cells[i * n + j] * scale * avg).round() as u64;
            }
        }
    }
    bytes
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_protocol_moves_every_byte_of_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.txt");
    let gen = coflowkit(&[
        "shuffle",
        "gen",
        "--nodes",
        "5",
        "--skew",
        "0.6",
        "--avg-packets",
        "1000",
        "--seed",
        "4",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    let out = dir.path().join("out.json");
    let run = coflowkit(&[
        "shuffle",
        "run",
        "--local",
        "5",
        "--matrix",
        m.to_str().unwrap(),
        "--avg-bytes",
        "6k",
        "--protocol",
        "grpf,hadoop,madd,lockstep,high-entropy,srpt",
        "--repeat",
        "2",
        "--timeout-s",
        "120",
        "--json",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc = json(&out);
    let want = network_bytes(&std::fs::read_to_string(&m).unwrap(), 6144.0);
    let rows = doc["results"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "grpf",
            "hadoop-5",
            "madd",
            "lockstep",
            "high-entropy",
            "srpt"
        ]
    );
    for r in rows {
        assert_eq!(r["ranks"], 5);
        assert_eq!(r["bytes"].as_u64().unwrap(), want, "{r}");
        assert_eq!(r["checksums_ok"], true, "{r}");
        assert_eq!(r["completion_runs_s"].as_array().unwrap().len(), 2);
        let (c, b) = (
            r["completion_s"].as_f64().unwrap(),
            r["bound_s"].as_f64().unwrap(),
        );
        assert!(c > 0.0 && b > 0.0, "{r}");
        assert!(
            (r["optimality"].as_f64().unwrap() - b / c).abs() < 1e-9,
            "{r}"
        );
        // At least one DATA packet per non-empty message, and no loss on loopback to repair.
        assert!(r["packets"].as_u64().unwrap() >= 20, "{r}");
    }
    assert_eq!(
        doc["config"]["rate_source"],
        "measured: ring exchange, best of 3"
    );
    assert!(stdout.contains("high-entropy"), "{stdout}");
}

#[test]
fn injected_loss_duplication_and_reordering_lose_no_byte() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let run = coflowkit(&[
        "shuffle",
        "run",
        "--local",
        "4",
        "--skew",
        "0.5",
        "--avg-bytes",
        "20k",
        "--drop",
        "0.05",
        "--duplicate",
        "0.02",
        "--reorder",
        "0.05",
        "--seed",
        "3",
        "--protocol",
        "grpf,hadoop-2",
        "--repeat",
        "1",
        "--timeout-s",
        "120",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc = json(&out);
    for r in doc["results"].as_array().unwrap() {
        assert_eq!(r["checksums_ok"], true, "{r}");
        // 5 % of about 230 DATA packets are dropped: some must have been sent again.
        assert!(r["retransmissions"].as_u64().unwrap() > 0, "{r}");
    }
    assert_eq!(doc["config"]["drop"], 0.05);
}

#[test]
fn a_bad_matrix_is_refused_before_any_rank_starts_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "bad.txt", "nodes 2 packets\n0 1\n1 x\n");
    let run = coflowkit(&["shuffle", "run", "--local", "2", "--matrix", &m]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("bad.txt") && err.contains(":3"), "{err}");
    let run = coflowkit(&["shuffle", "run", "--local", "2", "--protocol", "tcp"]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("tcp"));
}

#[test]
fn a_matrix_of_another_size_than_the_ranks_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m3.txt",
        "nodes 3 packets\n0 1 1\n1 0 1\n1 1 0\n",
    );
    let run = coflowkit(&[
        "shuffle",
        "run",
        "--local",
        "2",
        "--matrix",
        &m,
        "--timeout-s",
        "60",
    ]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("3 nodes") && err.contains("2 ranks"), "{err}");
}
