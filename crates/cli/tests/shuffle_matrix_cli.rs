//! `shuffle gen`, `shuffle stats` and `shuffle sweep` as users meet them.

mod common;
use common::coflowkit;

use std::path::Path;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no `{key}` in:\n{text}"))
        .trim()
}

#[test]
fn gen_then_stats() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.txt");
    let m = m.to_str().unwrap();
    let args = [
        "shuffle",
        "gen",
        "--nodes",
        "24",
        "--skew",
        "0.5",
        "--avg-packets",
        "16",
        "--seed",
        "7",
        "-o",
        m,
    ];
    let out = coflowkit(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(m).unwrap();
    assert!(text.contains("skew-target=0.5"), "header names the target");
    assert!(text.contains("nodes 24 packets"));
    // Same seed, same file.
    let again = dir.path().join("again.txt");
    let mut a2 = args;
    a2[11] = again.to_str().unwrap();
    assert!(coflowkit(&a2).status.success());
    assert_eq!(text, std::fs::read_to_string(&again).unwrap());

    let out = coflowkit(&["shuffle", "stats", m]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stdout(&out);
    assert_eq!(field(&s, "nodes"), "24");
    assert!(
        field(&s, "packets").starts_with("9216 (13824000 bytes)"),
        "{s}"
    );
    let skew: f64 = field(&s, "skewness").parse().unwrap();
    assert!((skew - 0.5).abs() < 0.02, "{skew}");
    // Every node sends and receives 24 x 16 packets; the bound is the largest network share.
    assert!(field(&s, "ideal bound").contains("packet times at 25 Gbps"));
}

#[test]
fn stats_reads_the_thesis_fixture() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shuffle/tests/fixtures/fig5_1b.txt");
    let out = coflowkit(&["shuffle", "stats", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(field(&stdout(&out), "skewness"), "0.752060");
}

#[test]
fn bad_matrix_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "# c\nnodes 2 packets\n1 2\n3 -4\n").unwrap();
    let out = coflowkit(&["shuffle", "stats", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "bad.txt:4: field 2 (row 1, column 1): `-4` is not a whole number of packets"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_generator_settings_are_refused() {
    let out = coflowkit(&["shuffle", "gen", "--nodes", "8", "--skew", "1.5"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("skew: 1.5 is outside [0, 1]"),
        "{}",
        stderr(&out)
    );
    let out = coflowkit(&["shuffle", "gen", "--nodes", "8", "--cdf-points", "3"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("expected MIN:MAX"));
    let out = coflowkit(&[
        "shuffle", "sweep", "--nodes", "8", "--skews", "0:2:1", "--out", "/tmp/x",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("2 is outside [0, 1]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn sort_generator_writes_stdout() {
    let out = coflowkit(&[
        "shuffle",
        "gen",
        "--generator",
        "sort",
        "--nodes",
        "6",
        "--skew",
        "1",
        "--avg-packets",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stdout(&out);
    // Skewness 1: each row holds one message of 6 x 2 packets.
    let rows: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.starts_with("nodes"))
        .skip(1)
        .collect();
    assert_eq!(rows.len(), 6);
    for r in rows {
        let v: Vec<u64> = r.split(' ').map(|x| x.parse().unwrap()).collect();
        assert_eq!(v.iter().filter(|&&x| x == 12).count(), 1, "{r}");
        assert_eq!(v.iter().sum::<u64>(), 12);
    }
}

#[test]
fn small_sweep_writes_rows_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let out = coflowkit(&[
        "shuffle",
        "sweep",
        "--nodes",
        "8",
        "--protocols",
        "grpf,madd",
        "--skews",
        "0,0.5",
        "--runs",
        "3",
        "--threads",
        "2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = std::fs::read_to_string(out_dir.join("runs.csv")).unwrap();
    // header + 2 protocols x 2 points x 3 runs
    assert_eq!(runs.lines().count(), 1 + 12);
    let madd: Vec<&str> = runs.lines().filter(|l| l.starts_with("madd,")).collect();
    assert_eq!(madd.len(), 6);
    for f in [
        "command.txt",
        "summary.csv",
        "throughput_vs_skew.svg",
        "optimality_vs_skew.svg",
        "utilization.svg",
    ] {
        assert!(out_dir.join(f).exists(), "{f}");
    }
    // Seeds depend on (point, run) only: a second sweep with other threads is identical.
    let out2 = dir.path().join("sweep2");
    let o = coflowkit(&[
        "shuffle",
        "sweep",
        "--nodes",
        "8",
        "--protocols",
        "grpf,madd",
        "--skews",
        "0,0.5",
        "--runs",
        "3",
        "--threads",
        "1",
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert_eq!(
        runs,
        std::fs::read_to_string(out2.join("runs.csv")).unwrap()
    );
}

#[test]
fn sweep_refuses_an_unknown_protocol_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let out = coflowkit(&[
        "shuffle",
        "sweep",
        "--nodes",
        "8",
        "--protocols",
        "grpf,warp-drive",
        "--runs",
        "1",
        "--out",
        dir.path().join("s").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("warp-drive"), "{}", stderr(&out));
    assert!(!dir.path().join("s").exists(), "nothing written");
}
