//! What the adversarial pass of session 30 broke on the command line, through the real binary:
//! waits typed as flags that panicked in `Duration::from_secs_f64` or meant "never", sizes and
//! counts that overflowed before they were checked, a host file read without bound, input echoed
//! whole into errors, and an `eprintln!` that panicked when stderr failed.

mod common;
use common::{coflowkit, inputs, write, Inputs};

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MAX: &str = "18446744073709551615";

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `coflowkit args` with `env`, under a 3 GiB address space (an allocation past it aborts
/// rather than taking the machine), stopped after `limit`: (status, stderr, how long).
fn run_env(args: &[&str], env: &[(&str, &str)], limit: Duration) -> (Option<i32>, String, f64) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coflowkit"));
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    common::limit(&mut cmd, libc::RLIMIT_AS, 3 << 30);
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut s).unwrap();
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("{args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    (status.code(), err, t.elapsed().as_secs_f64())
}

/// Refused by the parser (status 2), naming the flag and its range.
fn refused(args: &[&str], flag: &str, range: &str) {
    let out = coflowkit(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(flag), "{args:?}: `{flag}` not in {err}");
    assert!(err.contains(range), "{args:?}: `{range}` not in {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

/// Session 30: `--tick-ms`, `--timeout-s` and `--start-margin-ms` of -1, NaN or 1e300 panicked
/// (status 101, or ranks that panicked); 1e17 ms was accepted and meant "never".
#[test]
fn waits_typed_as_flags_are_bounded_where_they_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let Inputs { toy, .. } = inputs(dir.path());
    let token = write(dir.path(), "token", "adversarial-30-token");
    let day = "expected a number above 0 and at most 86400";
    for v in ["-1", "NaN", "1e300", "inf", "0", "86401"] {
        let t = format!("--timeout-s={v}");
        for cmd in [
            &["shuffle", "run", "--local", "2"][..],
            &["collective", "bench", "--local", "2"],
            &["millisort", "--local", "2"],
            &["milliquery", "run", "--data", "mq", "--local", "2"],
            &["broadcast", "--local", "1"],
            &["transfers", "--experiment", "fetch"],
        ] {
            let mut args = cmd.to_vec();
            args.push(&t);
            refused(&args, "--timeout-s", day);
        }
    }
    // A rank started by a launcher's variables parses the same flags.
    let (code, err, _) = run_env(
        &["shuffle", "run", "--timeout-s=-1"],
        &[("COFLOWKIT_RANK", "0"), ("COFLOWKIT_SIZE", "1")],
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(day), "{err}");
    for v in ["1e300", "1e17", "-1", "NaN", "60001"] {
        let tick = format!("--tick-ms={v}");
        refused(
            &[
                "coordinator",
                "--listen",
                "127.0.0.1:0",
                "--token-file",
                &token,
                &tick,
            ],
            "--tick-ms",
            "expected a number from 0 to 60000",
        );
        refused(
            &["replay", "--local", "2", "--trace", &toy, &tick],
            "--tick-ms",
            "expected a number from 0 to 60000",
        );
        let margin = format!("--start-margin-ms={v}");
        refused(
            &["millisort", "--local", "2", &margin],
            "--start-margin-ms",
            "expected a number from 0 to 60000",
        );
        refused(
            &["milliquery", "run", "--data", "mq", "--local", "2", &margin],
            "--start-margin-ms",
            "expected a number from 0 to 60000",
        );
    }
    refused(
        &["broadcast", "--local", "1", "--stall-s=1e300"],
        "--stall-s",
        day,
    );
    refused(
        &["transfers", "--experiment", "itc", "--adhoc-at-s=-1"],
        "--adhoc-at-s",
        "expected a number from 0 to 86400",
    );
    refused(
        &["milliquery", "run", "--data", "mq", "--dead-after-s=NaN"],
        "--dead-after-s",
        day,
    );
    refused(
        &[
            "coordinator",
            "--token-file",
            &token,
            "--report-interval-ms=0.5",
        ],
        "--report-interval-ms",
        "expected a number from 1 to 10000",
    );
}

/// Session 30: `--payload 2^64 - 1` panicked in an addition in every rank before the
/// transport's own check. The parser now takes what the transport takes, and the other
/// numeric fields of the ranks' flags and the launchers are bounded too.
#[test]
fn payload_and_rank_counts_are_bounded_by_what_they_feed() {
    for cmd in [
        &["shuffle", "run"][..],
        &["collective", "bench"],
        &["millisort"],
    ] {
        for (flag, v, range) in [
            ("--payload", MAX, "1..=65423"),
            ("--payload", "65424", "1..=65423"),
            ("--payload", "0", "1..=65423"),
            ("--local", "1025", "1..=1024"),
            ("--spin-us", MAX, "0..=1000000"),
            ("--drop", "1.5", "expected a number from 0 to 1"),
            ("--reorder", "NaN", "expected a number from 0 to 1"),
        ] {
            let f = format!("{flag}={v}");
            let mut args = cmd.to_vec();
            args.push(&f);
            refused(&args, flag, range);
        }
    }
    // A single rank at the largest payload runs (a world of one), with no overflow.
    let (code, err, _) = run_env(
        &[
            "shuffle",
            "run",
            "--payload=65423",
            "--avg-bytes",
            "1k",
            "--repeat",
            "1",
            "--timeout-s",
            "20",
        ],
        &[],
        Duration::from_secs(60),
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(code, Some(0), "{err}");
    // transfers added hosts in u32 (a panic at --receivers 2^32 - 1).
    let out = coflowkit(&[
        "transfers",
        "--experiment",
        "fetch",
        "--senders",
        "1",
        "--receivers",
        "4294967295",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("would start 4294967296 hosts (one process each): at most 252"),
        "{err}"
    );
    refused(
        &[
            "transfers",
            "--experiment",
            "fetch",
            "--senders",
            "4294967295",
        ],
        "--senders",
        "1..=252",
    );
    // Found by this session's sweep: --threads 2^64 - 1 hung, --pivots-per-rank 2^64 - 1
    // panicked on a capacity overflow, --budget-ms 1e300 probed up to 2^24 records per rank.
    for (flag, v, range) in [
        ("--threads", MAX, "1..=1024"),
        ("--pivots-per-rank", MAX, "0..=1048576"),
        (
            "--budget-ms",
            "1e300",
            "expected a number above 0 and at most 60000",
        ),
    ] {
        refused(&["millisort", &format!("{flag}={v}")], flag, range);
    }
    // The server sweep's first finds: collective bench --iters/--warmup 2^64 - 1 panicked on a
    // capacity overflow and an addition.
    for flag in ["--iters", "--warmup"] {
        refused(
            &["collective", "bench", &format!("{flag}={MAX}")],
            flag,
            "..=1000000",
        );
    }
    // --skew-tries 2^64 - 1 generated a matrix for ever (shuffle run, gen, sim).
    refused(
        &["shuffle", "gen", "--nodes", "4", "--skew-tries", MAX],
        "--skew-tries",
        "0..=10000",
    );
}

/// Session 30: a world of 2^32 - 1 ranks (COFLOWKIT_SIZE) listed every missing rank when the
/// rendezvous timed out: 16 GiB, an abort.
#[test]
fn a_huge_world_times_out_with_a_short_list() {
    let port = common::free_port().to_string();
    let at = format!("127.0.0.1:{port}");
    let (code, err, secs) = run_env(
        &["shuffle", "run", "--timeout-s", "1"],
        &[
            ("COFLOWKIT_RANK", "0"),
            ("COFLOWKIT_SIZE", "4294967295"),
            ("COFLOWKIT_RENDEZVOUS", &at),
            ("COFLOWKIT_SECRET", "a job secret"),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("still no word from 4294967294 rank(s) of 4294967295: [1, 2, 3,"),
        "{err}"
    );
    assert!(err.len() < 1000, "{} bytes", err.len());
    assert!(secs < 20.0, "{secs} s");
}

/// Session 30: `COFLOWKIT_HOSTFILE=/dev/zero` was read to an allocation failure, and a host
/// file whose first line was a 50 MB host name put all of it in the error.
#[test]
fn host_files_are_read_bounded_and_not_echoed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let rank = [("COFLOWKIT_RANK", "1"), ("COFLOWKIT_SIZE", "2")];
    let (code, err, secs) = run_env(
        &["shuffle", "run", "--timeout-s", "3"],
        &[rank[0], rank[1], ("COFLOWKIT_HOSTFILE", "/dev/zero")],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("host file /dev/zero: line 1: longer than 65536 bytes"),
        "{err}"
    );
    assert!(secs < 10.0, "{secs} s");
    let long = dir.path().join("hosts");
    std::fs::write(&long, format!("{} slots=2\n", "h".repeat(5_000_000))).unwrap();
    let (code, err, _) = run_env(
        &["shuffle", "run", "--timeout-s", "3"],
        &[
            rank[0],
            rank[1],
            ("COFLOWKIT_HOSTFILE", long.to_str().unwrap()),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(1), "{}", &err[..err.len().min(300)]);
    assert!(err.len() < 1000, "the error is {} bytes", err.len());
    assert!(err.contains("line 1: longer than 65536 bytes"), "{err}");
    std::fs::write(&long, format!("{} slots=2\n", "h".repeat(60_000))).unwrap();
    let (_, err, _) = run_env(
        &["shuffle", "run", "--timeout-s", "3"],
        &[
            rank[0],
            rank[1],
            ("COFLOWKIT_HOSTFILE", long.to_str().unwrap()),
        ],
        Duration::from_secs(30),
    );
    assert!(
        err.contains("host name of 60000 bytes, longer than 255: hhhh"),
        "{err}"
    );
    assert!(err.contains("…(60000 bytes)") && err.len() < 1000, "{err}");
    // A trace token of a million digits is quoted by its start and length too.
    let trace = write(
        dir.path(),
        "t.txt",
        &format!("4 1\n1 0 1 0 1 1:{}\n", "9".repeat(1_000_000)),
    );
    let out = coflowkit(&["trace", "stats", &trace]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{}", &err[..err.len().min(300)]);
    assert!(
        err.contains("…(1000000 bytes)") && err.len() < 1000,
        "{err}"
    );
}

/// Session 30: values that were accepted and only made a run slow or endless.
#[test]
fn values_that_meant_forever_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Inputs { toy, .. } = inputs(dir.path());
    let sim = |flag: &str, v: &str| {
        vec![
            "sim".to_string(),
            "--trace".into(),
            toy.clone(),
            "-s".into(),
            "varys,aalo".into(),
            "--baseline".into(),
            "varys".into(),
            format!("{flag}={v}"),
        ]
    };
    let step = "expected a number from 0.001 to 1000000000";
    let zero_or_step = "expected 0 or a number from 0.001 to 1000000000";
    for (flag, range) in [
        ("--varys-t", step),
        ("--varys-delta", step),
        ("--aalo-delta", zero_or_step),
        ("--saath-delta", zero_or_step),
        ("--refresh", zero_or_step),
        ("--flow-quantum", zero_or_step),
        ("--q1-mb", "expected a number from 0.000001 to 8589934592"),
    ] {
        let args = sim(flag, "1e-308");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, flag, range);
    }
    // Their smallest values run.
    for (flag, v) in [
        ("--aalo-delta", "0.001"),
        ("--refresh", "0"),
        ("--varys-delta", "0.001"),
    ] {
        let args = sim(flag, v);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::succeeded(&coflowkit(&args));
    }
    refused(
        &["trace", "gen", "custom", "--mean-interarrival-ms=1e-308"],
        "--mean-interarrival-ms",
        "expected 0 or a finite number of at least 0.001",
    );
    refused(
        &["shuffle", "gen", "--nodes", "4", "--skew-tolerance=1e-308"],
        "--skew-tolerance",
        "expected a number from 0.000001 to 1",
    );
    refused(
        &["sortdata", "gen", "--records", MAX, "-o", "/dev/null"],
        "--records",
        "0..=10000000000000",
    );
    // 10^13 records (1 PB) into a file: refused at once for want of room.
    let f = dir.path().join("records");
    let out = coflowkit(&[
        "sortdata",
        "gen",
        "--records",
        "10000000000000",
        "-o",
        f.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--records 10000000000000: 1000000000000000 bytes")
            && err.contains("bytes free"),
        "{err}"
    );
    assert!(!f.exists(), "nothing is created");
}

/// Session 30: `eprintln!` panicked when stderr failed; a command's error or warning now goes
/// unshown instead (status 1 for an error, 0 for a run that only warned).
#[test]
fn a_failing_stderr_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let out = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(["sim", "--trace", "/nonexistent/trace.txt"])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let f = dir.path().join("r.dat");
    let out = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(["sortdata", "gen", "--records", "3", "--checksum", "-o"])
        .arg(&f)
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 300);
}
