//! Refusals found by an adversarial pass, as users meet them: each names the file and line, or
//! the flag, exits non-zero, and nothing undefined (NaN) or unreadable is ever written.

mod common;
use common::{coflowkit, free_port, write, Kill, TOY};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Refused with status 1 (never a panic's 101), the message containing every one of `says`.
fn refused(args: &[&str], says: &[&str]) -> String {
    let out = coflowkit(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: `{s}` not in: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

fn write_bytes(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn files_that_are_not_utf8_are_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = write_bytes(dir.path(), "t.txt", b"2 1\n1 0 1 0 1 1:1.\xe90\n");
    refused(
        &["sim", "--trace", &t, "-s", "fifo"],
        &[&format!("{t}:2: byte 15 of the line is not UTF-8 text")],
    );
    refused(
        &["trace", "stats", &t],
        &[&format!("{t}:2: byte 15 of the line")],
    );
    let m = write_bytes(dir.path(), "m.txt", b"# \xff\nnodes 2 packets\n1 2\n3 4\n");
    refused(
        &["shuffle", "sim", "--matrix", &m],
        &[&format!(
            "{m}:1: cannot read: byte 3 of the line is not UTF-8 text"
        )],
    );
    let toy = write(dir.path(), "toy.txt", TOY);
    let pr = write_bytes(dir.path(), "pr.txt", b"0 1gbit\n\n1 1gbit # \xc3\n");
    let err = refused(
        &["sim", "--trace", &toy, "-s", "fifo", "--port-rates", &pr],
        &[&format!("{pr}:3: byte 11 of the line is not UTF-8 text")],
    );
    // The reason once, not twice.
    assert_eq!(err.matches("UTF-8").count(), 1, "{err}");
}

#[test]
fn a_one_node_matrix_names_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "one.txt", "nodes 1 packets\n5\n");
    refused(
        &["shuffle", "sim", "--matrix", &m],
        &[&m, "field 2 (node count)", "at least 2 nodes, got 1"],
    );
    refused(
        &["shuffle", "sim", "--nodes", "1"],
        &["--nodes: a shuffle needs at least 2 nodes, got 1"],
    );
}

/// A generator must not write what the readers refuse: a load so low that arrivals pass 2^53
/// ms is refused, naming the flag and the lowest load that fits.
#[test]
fn generators_refuse_arrivals_the_readers_would_refuse() {
    let err = refused(
        &["trace", "gen", "fb", "--coflows", "3", "--load", "1e-300"],
        &["--load: 1e-300 is too low", "2^53 ms", "at least"],
    );
    assert!(err.len() < 400, "{err}");
    // The lowest load it names is accepted, and what it writes `sim` reads.
    let at_least: f64 = err
        .split("at least ")
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.txt");
    let load = format!("{:e}", at_least * 1.01);
    let o = out.to_str().unwrap();
    let gen = coflowkit(&[
        "trace",
        "gen",
        "fb",
        "--coflows",
        "3",
        "--load",
        &load,
        "-o",
        o,
    ]);
    assert!(gen.status.success(), "{}", stderr(&gen));
    let sim = coflowkit(&["sim", "--trace", o, "-s", "fifo"]);
    assert!(sim.status.success(), "{}", stderr(&sim));
    refused(
        &[
            "trace",
            "gen",
            "custom",
            "--coflows",
            "10",
            "--mean-interarrival-ms",
            "1e300",
        ],
        &["--mean-interarrival-ms: 1e300 ms is too long", "at most"],
    );
}

/// Sizes of no bytes or past 2^53 bytes are refused where they are read: a coflow of 0 or -0
/// MB used to print NaN speed-ups, `2:99999999999999999999999` an absurd CCT.
#[test]
fn coflows_of_no_bytes_and_sizes_past_2_53_bytes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, says) in [
        (
            "negzero.txt",
            "2 2\n1 0 1 0 1 1:-0\n2 10 1 0 1 1:1.0\n",
            ":2: field 1 (coflow id): coflow 1 has no bytes",
        ),
        (
            "zero.txt",
            "2 1\n1 0 1 0 1 1:0.0\n",
            ":2: field 1 (coflow id): coflow 1 has no bytes",
        ),
        (
            "sinzero.txt",
            "2 1\n1 0 2 1 1 0 1 0 1 1 -0\n",
            ":2: field 1 (coflow id): coflow 1 has no bytes",
        ),
        (
            "huge.txt",
            "3 1\n1 0 1 0 1 2:99999999999999999999999\n",
            ":2: field 6 (reducer MB): size `99999999999999999999999` MB",
        ),
        (
            "sinhuge.txt",
            "2 1\n1 0 1 1 1 0 1 1e19\n",
            ":2: field 8 (flow 1 MB): size `1e19` MB",
        ),
    ] {
        let t = write(dir.path(), name, text);
        refused(
            &["sim", "--trace", &t, "-s", "fifo"],
            &[&format!("{t}{says}")],
        );
    }
    // A zero flow beside others is fine, and nothing prints NaN.
    let t = write(dir.path(), "ok.txt", "3 1\n1 0 1 0 2 1:-0 2:1.0\n");
    let json = dir.path().join("o.json");
    let out = coflowkit(&[
        "sim",
        "--trace",
        &t,
        "-s",
        "fifo,fair",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    let doc = std::fs::read_to_string(&json).unwrap();
    assert!(!doc.contains("NaN"), "{doc}");
}

/// `replay` refuses scalings the daemons cannot take before it starts anything, naming the
/// flag; it used to fail after the simulation, naming the NIC rate.
#[test]
fn replay_refuses_bad_scalings_up_front_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "toy.txt", TOY);
    for (extra, says) in [
        (
            vec!["--scale-bytes", "1e300"],
            "--scale-bytes 1e300 / --scale-time 0.01",
        ),
        (vec!["--scale-bytes", "1e-12"], "--scale-bytes 1e-12"),
        (
            vec!["--scale-time", "1e300"],
            "--scale-bytes 0.001 / --scale-time 1e300",
        ),
        (
            vec![
                "--scale-time",
                "1e12",
                "--scale-bytes",
                "100",
                "--port-rate",
                "1e15",
            ],
            "--scale-time 1000000000000: coflow 2 would arrive",
        ),
        (
            vec!["--scale-time", "1e6", "--scale-bytes", "1e11"],
            "--scale-bytes 100000000000: coflow 1 has a flow of",
        ),
        (vec!["--mem-limit-mib", "0"], "--mem-limit-mib 0"),
    ] {
        let mut args = vec!["replay", "--local", "2", "--trace", &t, "-s", "fair"];
        args.extend(extra);
        let started = Instant::now();
        let err = refused(&args, &[says]);
        assert!(!err.contains("replaying under"), "{args:?}: {err}");
        assert!(err.len() < 600, "{err}");
        assert!(started.elapsed() < Duration::from_secs(20), "{args:?}");
    }
}

fn token(dir: &Path, name: &str, text: &str) -> String {
    write(dir, name, text)
}

#[test]
fn a_daemon_refuses_bad_settings_before_it_says_it_serves() {
    let dir = tempfile::tempdir().unwrap();
    let tok = token(dir.path(), "token", "daemon-settings-token\n");
    let listen = format!("127.0.0.1:{}", free_port());
    for (flag, value, says) in [
        (
            "--mem-limit-mib",
            "0",
            "--mem-limit-mib 0: a daemon needs at least",
        ),
        (
            "--nic-rate",
            "1kbit",
            "--nic-rate 1kbit: a daemon's NIC must be at least",
        ),
    ] {
        let out = coflowkit(&[
            "daemon",
            "--coordinator",
            "127.0.0.1:1",
            "--listen",
            &listen,
            "--token-file",
            &tok,
            flag,
            value,
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("serving"), "{err}");
    }
}

/// A daemon the coordinator refuses for its token ends, non-zero, saying why; it used to warn
/// and retry forever.
#[test]
fn a_daemon_with_a_wrong_token_ends_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = token(dir.path(), "good", "the-coordinators-token\n");
    let bad = token(dir.path(), "bad", "not-the-coordinators-token\n");
    let caddr = format!("127.0.0.1:{}", free_port());
    let bin = env!("CARGO_BIN_EXE_coflowkit");
    let _coord = Kill(
        Command::new(bin)
            .args(["coordinator", "--listen", &caddr, "--token-file", &good])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Wait for the coordinator: `status` with the right token answers.
    let up = (0..100).any(|_| {
        let ok = coflowkit(&["status", "--coordinator", &caddr, "--token-file", &good])
            .status
            .success();
        if !ok {
            std::thread::sleep(Duration::from_millis(100));
        }
        ok
    });
    assert!(up, "the coordinator never answered");
    let mut daemon = Kill(
        Command::new(bin)
            .args([
                "daemon",
                "--coordinator",
                &caddr,
                "--listen",
                &format!("127.0.0.1:{}", free_port()),
                "--token-file",
                &bad,
            ])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(s) = daemon.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the daemon still runs after 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut daemon.0.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("coordinator {caddr}"))
            && err.contains("wrong token")
            && err.contains("--token-file"),
        "{err}"
    );
    // Only the daemon's own token was at fault: the coordinator still serves the right one.
    assert!(
        coflowkit(&["status", "--coordinator", &caddr, "--token-file", &good])
            .status
            .success()
    );
}

/// From a second adversarial pass: directories where files belong, and files where a
/// directory belongs, are refused as such and before any work; a full disk or a missing
/// coordinator is said once, not once per cause.
#[test]
fn directories_full_disks_and_empty_traces_are_refused_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let toy = write(dir.path(), "toy.txt", TOY);
    for args in [
        vec!["sim", "--trace", &d, "-s", "fifo"],
        vec!["trace", "stats", &d],
        vec!["shuffle", "sim", "--matrix", &d],
        vec!["sim", "--trace", &toy, "-s", "fifo", "--port-rates", &d],
    ] {
        // The whole file is at fault, not its line 1.
        refused(&args, &[&format!("{d}: "), "it is a directory, not a file"]);
    }
    for (flag, path, says) in [
        ("--json", d.as_str(), "is a directory"),
        ("--csv", d.as_str(), "is a directory"),
        (
            "--plot",
            toy.as_str(),
            "exists and is a file, not a directory",
        ),
    ] {
        let out = coflowkit(&["sim", "--trace", &toy, "-s", "fifo", flag, path]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("{flag} {path}: {says}")), "{err}");
        // Refused before the simulation: no table was printed.
        assert!(out.stdout.is_empty(), "{flag}");
    }
    if Path::new("/dev/full").exists() {
        let err = refused(
            &["trace", "gen", "fb", "--coflows", "3", "-o", "/dev/full"],
            &["No space left on device"],
        );
        assert_eq!(err.matches("No space left").count(), 1, "{err}");
    }
    let err = refused(
        &["status", "--coordinator", "127.0.0.1:1", "--token-file", &d],
        &["reading token file", "directory"],
    );
    assert_eq!(err.matches("directory").count(), 1, "{err}");
    let tok = write(dir.path(), "tok", "a-good-enough-token\n");
    let err = refused(
        &[
            "status",
            "--coordinator",
            "127.0.0.1:1",
            "--token-file",
            &tok,
        ],
        &["cannot reach coordinator 127.0.0.1:1", "Connection refused"],
    );
    assert_eq!(err.matches("Connection refused").count(), 1, "{err}");
    let empty = write(dir.path(), "none.txt", "4 0\n");
    refused(
        &["replay", "--local", "2", "--trace", &empty, "-s", "fair"],
        &["no coflows to replay"],
    );
}

#[test]
fn a_shuffle_of_no_data_is_refused() {
    for cmd in ["sim", "gen"] {
        let out = coflowkit(&["shuffle", cmd, "--nodes", "4", "--avg-packets", "0"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("--avg-packets") && err.contains("0 is not in 1.."),
            "{err}"
        );
    }
}
