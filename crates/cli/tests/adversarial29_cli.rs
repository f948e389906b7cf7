//! What the adversarial pass of session 29 broke on the command line, through the real binary:
//! stdout on a full disk or a closed pipe, flags at absurd values, counts that overflow, and
//! inputs read without bound or without end.

mod common;
use common::{coflowkit, inputs, write, Inputs};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Commands that print on stdout, with their inputs in `dir`.
fn printing_commands(dir: &Path) -> Vec<Vec<String>> {
    let Inputs {
        toy,
        matrix: m,
        vectors: v,
    } = inputs(dir);
    let c = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        c(&["trace", "stats", &toy]),
        c(&["trace", "stats", &toy, "--json"]),
        c(&["trace", "convert", &toy]),
        c(&["shuffle", "gen", "--nodes", "4"]),
        c(&["shuffle", "stats", &m]),
        c(&["shuffle", "sim", "--nodes", "4"]),
        c(&["hug", "alloc", "--vectors", &v]),
        c(&["sim", "--trace", &toy, "-s", "fifo", "--baseline", "fifo"]),
        c(&["fetch", "bw", "--rates", "1gbit:3", "--flows", "0-1,1-2"]),
        c(&["fetch", "sim", "--nodes", "4"]),
    ]
}

fn run_with_stdout(args: &[String], stdout: impl Into<Stdio>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run coflowkit")
}

/// A full disk is an error naming stdout (status 1), never a panic in `println!` (session 29:
/// 9 of 12 commands panicked with `> /dev/full`).
#[test]
fn a_full_stdout_is_an_error_naming_stdout() {
    let dir = tempfile::tempdir().unwrap();
    for args in printing_commands(dir.path()) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = run_with_stdout(&args, full);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("writing to stdout: No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A reader that went away (`| head -c1`) ends the program quietly with 141 (128 + SIGPIPE, as
/// a shell reports for `seq`), never a panic. The pipe's read end is closed before the program
/// starts, so every write meets EPIPE: no race with the reader.
#[test]
fn a_closed_pipe_ends_quietly_with_141() {
    let dir = tempfile::tempdir().unwrap();
    for args in printing_commands(dir.path()) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = run_with_stdout(&args, writer);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}: nothing to say after a closed pipe");
    }
}

/// Refused by the parser (status 2), naming the flag and the valid range.
fn refused_flag(args: &[&str], flag: &str, range: &str) {
    let out = coflowkit(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(flag), "{args:?}: `{flag}` not in {err}");
    assert!(err.contains(range), "{args:?}: `{range}` not in {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

const MAX: &str = "18446744073709551615";

/// The flags that panicked at 2^64 - 1 in session 29, and the absurd values it accepted.
#[test]
fn absurd_flag_values_are_refused_naming_flag_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.txt",
        "nodes 3 packets\n0 4 2\n3 0 5\n1 2 0\n",
    );
    let out = dir.path().join("sw");
    let out = out.to_str().unwrap();
    let at = |flag: &str, v: &str| format!("{flag}={v}");
    refused_flag(
        &[
            "shuffle",
            "sim",
            "--nodes",
            "8",
            "--racks",
            "2",
            &at("--core", MAX),
        ],
        "--core",
        "above 0 and at most 1000",
    );
    refused_flag(
        &[
            "shuffle",
            "sim",
            "--nodes",
            "4",
            "--drop",
            "0.1",
            &at("--resend-timeout", MAX),
        ],
        "--resend-timeout",
        "1..=1000000000",
    );
    refused_flag(
        &["shuffle", "stats", &m, &at("--packet-bytes", MAX)],
        "--packet-bytes",
        "1..=1048576",
    );
    refused_flag(
        &[
            "shuffle",
            "sweep",
            "--nodes",
            "4",
            "--skews",
            "0.5",
            "--protocols",
            "grpf",
            "--out",
            out,
            &at("--runs", MAX),
        ],
        "--runs",
        "1..=100000",
    );
    refused_flag(
        &["hug", "bench", "--machines", "10", &at("--repeat", MAX)],
        "--repeat",
        "1..=100000",
    );
    refused_flag(
        &["fetch", "sim", &at("--nodes", MAX)],
        "--nodes",
        "1..=65536",
    );
    refused_flag(
        &["sortdata", "bench", "--repeat", "1", &at("--records", MAX)],
        "--records",
        "1..=100000000",
    );
    refused_flag(
        &["hug", "bench", &at("--machines", "1000000000")],
        "--machines",
        "1..=1000000",
    );
    // Accepted in session 29 and then printed as 300-digit numbers or NaN.
    refused_flag(
        &[
            "shuffle",
            "sim",
            "--nodes",
            "4",
            &at("--host-gbps", "1e-308"),
        ],
        "--host-gbps",
        "from 0.001 to 10000",
    );
    refused_flag(
        &["shuffle", "stats", &m, &at("--rate-gbps", "1e-308")],
        "--rate-gbps",
        "from 0.001 to 10000",
    );
    refused_flag(
        &["hug", "bench", &at("--load", "NaN")],
        "--load",
        "above 0 and at most 1000",
    );
    refused_flag(
        &[
            "shuffle",
            "sweep",
            "--nodes",
            "4",
            "--out",
            out,
            &at("--util-skew", "NaN"),
        ],
        "--util-skew",
        "from 0 to 1",
    );
    refused_flag(
        &["shuffle", "sim", "--nodes", "4", &at("--host-gbps", "inf")],
        "--host-gbps",
        "0.001",
    );
}

/// `--skews` with a step of 1e-300 would count 10^300 points: refused with the count.
#[test]
fn a_sweep_of_too_many_points_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    let o = coflowkit(&[
        "shuffle",
        "sweep",
        "--nodes",
        "4",
        "--skews",
        "0:1:1e-300",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--skews `0:1:1e-300`") && err.contains("more than 10001"),
        "{err}"
    );
}

/// One summary in valsort's 280-byte layout: `records` records and `duplicates` duplicates,
/// every key `key`.
fn summary(records: u64, duplicates: u64, key: u8) -> Vec<u8> {
    let mut b = vec![0u8; 280];
    let put =
        |b: &mut [u8], at: usize, v: u64| b[at + 8..at + 16].copy_from_slice(&v.to_le_bytes());
    put(&mut b, 32, records);
    put(&mut b, 48, duplicates);
    b[80..180].fill(key);
    b[180..280].fill(key);
    b
}

/// Summary counts are claims from outside: sums past 2^64 - 1 are errors naming the file and
/// the summary (session 29: add overflow panics at summary.rs:94/117/119).
#[test]
fn summary_counts_that_overflow_are_refused_naming_file_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    let half = summary(1 << 63, 0, 7);
    let p = dir.path().join("records.sum");
    std::fs::write(&p, [half.clone(), half].concat()).unwrap();
    let o = coflowkit(&["sortdata", "check", "--summaries", p.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}: summary 1: the combined records count passes 2^64 - 1",
            p.display()
        )),
        "{err}"
    );
    let q = dir.path().join("dups.sum");
    std::fs::write(&q, [summary(2, 0, 7), summary(2, u64::MAX, 7)].concat()).unwrap();
    let o = coflowkit(&["sortdata", "check", "--summaries", q.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("summary 1: the combined duplicate keys count passes"),
        "{err}"
    );
}

/// Runs `args`, which must end (status 1) within `limit`, saying each of `says`.
fn ends_with_error(args: &[&str], limit: Duration, says: &[&str]) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: `{s}` not in {err}");
    }
}

/// Random bytes as a trace or matrix are refused at their first line that is not UTF-8, as it
/// is read (session 29 read `/dev/urandom` to the 4 GiB bound first: 86 s, then an abort).
#[test]
fn random_bytes_are_refused_at_once() {
    let limit = Duration::from_secs(20);
    ends_with_error(
        &["trace", "stats", "/dev/urandom"],
        limit,
        &["/dev/urandom:", "is not UTF-8 text"],
    );
    ends_with_error(
        &["shuffle", "stats", "/dev/urandom"],
        limit,
        &["/dev/urandom:", "is not UTF-8 text"],
    );
}

/// Inputs read whole are bounded, naming file and limit; a device that never ends is refused
/// (session 29: `hug alloc --vectors`, `--summaries` and the TLS files were read until memory
/// ran out, `sortdata check /dev/zero` never ended).
#[test]
fn endless_inputs_end_with_a_clear_error() {
    let limit = Duration::from_secs(30);
    ends_with_error(
        &["hug", "alloc", "--vectors", "/dev/zero"],
        limit,
        &["reading /dev/zero: larger than the limit of 268435456 bytes"],
    );
    ends_with_error(
        &["sortdata", "check", "--summaries", "/dev/urandom"],
        limit,
        &["reading /dev/urandom: larger than the limit of 67108864 bytes"],
    );
    ends_with_error(
        &["sortdata", "check", "/dev/zero"],
        limit,
        &["/dev/zero: a character device, not a file of records"],
    );
    let dir = tempfile::tempdir().unwrap();
    let token = write(dir.path(), "token", "secret-token-1\n");
    ends_with_error(
        &[
            "status",
            "--coordinator",
            "127.0.0.1:9",
            "--token-file",
            &token,
            "--tls-ca",
            "/dev/urandom",
        ],
        limit,
        &["reading TLS CA certificate file /dev/urandom: larger than the limit of 16777216 bytes"],
    );
}

/// `"ports"` near 2^63 in `hug alloc` is refused naming the field (session 29: a multiply
/// overflow).
#[test]
fn hug_ports_past_the_bound_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let v = write(
        dir.path(),
        "hp.json",
        r#"{"ports": 9223372036854775808, "tenants": [{"name":"A","vector":[1,1]}]}"#,
    );
    let o = coflowkit(&["hug", "alloc", "--vectors", &v]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("\"ports\": 9223372036854775808 means 18446744073709551616 links"),
        "{err}"
    );
}
