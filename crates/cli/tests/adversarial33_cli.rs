//! Session 33 (issue 17): the command-line and launch findings of the adversarial passes of
//! sessions 31 and 32 still open after session 32 (docs/reliability.md, "Fixed in session 33:
//! command line and launch").

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{coflowkit, failed, succeeded, write, TOY};

/// Run `coflowkit args` with RLIMIT_NOFILE at `n` (soft and hard).
fn at_nofile(n: u64, args: &[&str]) -> Output {
    at_nofile_within(n, args, Duration::from_secs(3600)).expect("ended")
}

/// [`at_nofile`], killed after `limit` (then `None`).
fn at_nofile_within(n: u64, args: &[&str], limit: Duration) -> Option<Output> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coflowkit"));
    cmd.args(args);
    common::limit(&mut cmd, libc::RLIMIT_NOFILE, n);
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run coflowkit");
    let t = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(child.wait_with_output().expect("output"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A1 (the rest): `broadcast --local 2` at `--nofile=8` panicked in tokio's signal setup
/// (`failed to create UnixStream`, status 101): its runtimes were not made through
/// `async_rt`. Now a limit too low for the runtime is an error naming it, and no limit panics.
#[test]
fn broadcast_under_a_low_descriptor_limit_is_an_error_not_a_panic() {
    for n in [6u64, 7, 8] {
        let out = at_nofile(n, &["broadcast", "--local", "2", "--bytes", "64k"]);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "at {n}: {err}");
        assert_eq!(out.status.code(), Some(1), "at {n}: {err}");
        assert!(
            err.contains(&format!("descriptor limit (ulimit -n) is {n}")),
            "at {n}: {err}"
        );
    }
    // Higher limits fail later (or not at all), but never in a panic.
    for n in [9u64, 10, 12, 16, 20] {
        let out = at_nofile(n, &["broadcast", "--local", "2", "--bytes", "64k"]);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "at {n}: {err}");
        assert_ne!(out.status.code(), Some(101), "at {n}: {err}");
    }
}

/// A5 (the rest): a 200 KB matrix token came back whole; a normalized matrix with a 1e300 cell
/// was refused with a 300-digit byte count. A7 (the rest): `shuffle run --matrix` ran a matrix
/// with nothing off its diagonal (`ok yes`, rows of 0 bytes) while `shuffle sim` refused it.
/// All refused before any rank starts, naming the file.
#[test]
fn shuffle_run_refuses_matrices_with_long_tokens_huge_cells_or_nothing_to_send() {
    let dir = tempfile::tempdir().unwrap();
    let long = "7".repeat(200_000) + "x";
    let token = write(
        dir.path(),
        "token.txt",
        &format!("nodes 2 normalized\n{long} 1\n1 0\n"),
    );
    let huge = write(dir.path(), "huge.txt", "nodes 2 normalized\n0 1e300\n1 0\n");
    let zero = write(dir.path(), "zero.txt", "nodes 2 normalized\n0 0\n0 0\n");
    let diag = write(dir.path(), "diag.txt", "nodes 2 packets\n4 0\n0 9\n");
    let tiny = write(dir.path(), "tiny.txt", "nodes 2 normalized\n0 1e-9\n0 0\n");
    let run = |m: &str| {
        let t = Instant::now();
        let out = coflowkit(&[
            "shuffle", "run", "--local", "2", "--matrix", m, "--repeat", "1",
        ]);
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{m}: {:?}",
            t.elapsed()
        );
        let err = failed(&out);
        assert_eq!(out.status.code(), Some(1), "{m}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty(), "{m}: ran");
        err
    };
    let err = run(&token);
    assert!(
        err.contains(&token) && err.contains("(200001 bytes)") && err.len() < 1000,
        "{} bytes: {}",
        err.len(),
        &err[..err.len().min(400)]
    );
    let err = run(&huge);
    assert!(
        err.contains(&huge)
            && err.contains("row 0, column 1")
            && err.contains("more than the 4294967296"),
        "{err}"
    );
    assert!(err.len() < 500, "{err}");
    for m in [&zero, &diag] {
        let err = run(m);
        assert!(
            err.contains(&format!("{m}: every cell off the diagonal is 0")),
            "{err}"
        );
    }
    let err = run(&tiny);
    assert!(
        err.contains(&tiny) && err.contains("rounds to 0 bytes at --avg-bytes 65536"),
        "{err}"
    );
    // The shared check: `shuffle sim` says the same of the packet matrix.
    let err = failed(&coflowkit(&["shuffle", "sim", "--matrix", &diag]));
    assert!(
        err.contains(&format!("{diag}: every cell off the diagonal is 0")),
        "{err}"
    );
}

/// A8: `replay --local` at 20-30 descriptors said `only some of the 2 daemons connected`, the
/// cause (EMFILE) only in a warning. Whatever limit a run fails at, its last line says why.
#[test]
fn replay_short_of_descriptors_names_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let toy = write(dir.path(), "toy.txt", TOY);
    let mut seen_wait = false;
    for n in 14u64..=30 {
        let args = ["replay", "--local", "2", "--trace", &toy, "-s", "fair"];
        // At 34 descriptors a replay was seen to hang (all descriptors taken mid-run; an open
        // item in docs/reliability.md): such a run is killed and not judged here.
        let Some(out) = at_nofile_within(n, &args, Duration::from_secs(120)) else {
            eprintln!("at {n}: still running after 120 s, killed");
            continue;
        };
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "at {n}: {err}");
        if out.status.success() {
            continue;
        }
        let last = err.lines().last().unwrap_or_default();
        if last.contains("daemons connected") {
            seen_wait = true;
            assert!(
                last.contains("Too many open files") || last.contains("descriptor limit"),
                "at {n}: {err}"
            );
        }
        assert!(
            last.contains("Too many open files")
                || last.contains("descriptor limit")
                || last.contains("os error 24"),
            "at {n}, the error does not say why: {err}"
        );
    }
    // Not every machine fails in the wait (the exact count of descriptors varies); say so.
    eprintln!("a run failed in the wait for the daemons: {seen_wait}");
}

/// A9 (the rest): `--plot` through a symlink loop or a dangling link said `File exists`.
#[test]
fn plot_directories_that_are_loops_or_dangling_links_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let toy = write(dir.path(), "toy.txt", TOY);
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    let lp = dir.path().join("loop");
    std::os::unix::fs::symlink(&lp, &lp).unwrap();
    for (p, says) in [
        (&dangling, "a symbolic link to "),
        (&lp, "a symbolic link loop"),
    ] {
        let p = p.to_str().unwrap();
        let out = coflowkit(&["sim", "--trace", &toy, "-s", "fifo", "--plot", p]);
        let err = failed(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("--plot {p}: {says}")), "{err}");
        assert!(!err.contains("File exists"), "{err}");
        assert!(out.stdout.is_empty(), "refused before the simulation");
    }
    let err = failed(&coflowkit(&[
        "sim",
        "--trace",
        &toy,
        "-s",
        "fifo",
        "--plot",
        dangling.to_str().unwrap(),
    ]));
    assert!(
        err.contains("which does not exist (a dangling link)"),
        "{err}"
    );
}

/// A10: `status` against a coordinator that closes its connections (as one at its connection
/// limit does) printed tonic's whole `Status` (metadata map, a cause's `Debug`). One line now.
#[test]
fn status_against_a_server_that_closes_says_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let token = write(dir.path(), "token", "a-token-of-enough-length\n");
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for s in l.incoming() {
            drop(s);
        }
    });
    let out = coflowkit(&["status", "--coordinator", &addr, "--token-file", &token]);
    let err = failed(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("coordinator {addr}")), "{err}");
    for dump in ["metadata", "MetadataMap", "source: Some", "details: ["] {
        assert!(!err.contains(dump), "{err}");
    }
    assert!(err.len() < 700, "{err}");
}

/// A11: sizes above 0 and below one byte were read while 0 was refused; `trace convert` wrote
/// a 1e-320 ms arrival in 325 characters.
#[test]
fn sub_byte_sizes_are_refused_and_tiny_arrivals_written_short() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = write(dir.path(), "tiny.txt", "4 1\n1 0 1 0 1 1:1e-300\n");
    let err = failed(&coflowkit(&["trace", "stats", &tiny]));
    assert!(
        err.contains(&format!(
            "{tiny}:2: field 6 (reducer MB): size `1e-300` MB is less than one byte"
        )),
        "{err}"
    );
    let early = write(dir.path(), "early.txt", "4 1\n1 1e-320 1 0 1 1:2.0\n");
    let text = succeeded(&coflowkit(&["trace", "convert", &early]));
    let line = text.lines().nth(1).unwrap();
    // 1e-320 ms is 1e-323 s, a subnormal of few bits: it comes back as 9.88e-321 ms, written
    // with an exponent (before: 325 characters).
    assert_eq!(line, "1 9.88e-321 1 0 1 1:2.0", "{text}");
    // It reads back as itself.
    let again = write(dir.path(), "again.txt", &text);
    assert_eq!(succeeded(&coflowkit(&["trace", "convert", &again])), text);
}
