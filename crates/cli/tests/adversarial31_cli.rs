//! What the adversarial pass of session 31 still broke on the command line, through the real
//! binary: sizes that panicked or aborted on allocation in the ranks (refused up front with
//! the estimate now), values accepted that mean nothing, and errors that did not say what was
//! wrong. Runs that could allocate are under an address-space limit, so a regression aborts
//! (a signal, caught below) instead of taking the machine.

mod common;
use common::write;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MAX: &str = "18446744073709551615";

/// `coflowkit args` under an address space of `gib` GiB, stopped (and the test failed) after
/// `limit`: (status, stderr). A status of `None` is a signal (an abort).
fn run(args: &[&str], gib: u64, limit: Duration) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coflowkit"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    common::limit(&mut cmd, libc::RLIMIT_AS, gib << 30);
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > limit {
            // SAFETY: the child's own process group (its ranks too).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("{args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    (status.code(), err)
}

fn refused(args: &[&str], gib: u64, code: i32, want: &[&str]) {
    let (status, err) = run(args, gib, Duration::from_secs(60));
    assert_eq!(status, Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: wanted `{w}` in: {err}");
    }
}

#[test]
fn sizes_that_panicked_are_refused_naming_the_flag() {
    refused(
        &["collective", "bench", "--local", "2", "--bytes", MAX],
        3,
        1,
        &[
            "--bytes 18446744073709551615",
            "largest message the transport carries",
        ],
    );
    refused(
        &[
            "shuffle",
            "gen",
            "--generator",
            "sort",
            "--nodes",
            "4",
            "--keys-factor",
            MAX,
        ],
        3,
        2,
        &["--keys-factor"],
    );
    refused(
        &[
            "shuffle",
            "gen",
            "--nodes",
            "4",
            "--cdf-points",
            &format!("1:{MAX}"),
        ],
        3,
        1,
        &["--cdf-points", "10000"],
    );
}

#[test]
fn sizes_that_aborted_are_refused_up_front_with_the_estimate() {
    // Each was an allocation failure (status 134, or 1 from a launcher whose ranks aborted).
    refused(
        &[
            "collective",
            "bench",
            "--local",
            "2",
            "--bytes",
            "4294967296",
        ],
        3,
        1,
        &["--bytes 4294967296", "at most 4294967295"],
    );
    refused(
        &[
            "collective",
            "bench",
            "--local",
            "2",
            "--bytes",
            "1g",
            "--op",
            "alltoallv",
        ],
        1,
        1,
        &[
            "--bytes 1073741824 among 2 ranks",
            "would need about",
            "ulimit -v",
        ],
    );
    refused(
        &[
            "millisort",
            "--local",
            "2",
            "--records-per-rank",
            "4294967295",
        ],
        3,
        1,
        &[
            "--records-per-rank 4294967295",
            "would need about",
            "bytes a record",
        ],
    );
    refused(
        &["broadcast", "--local", "2", "--bytes", "100g"],
        3,
        1,
        &["--bytes 107374182400 to 2 receivers would need about"],
    );
    refused(
        &[
            "hug",
            "bench",
            "--machines",
            "1000000",
            "--vms",
            "1",
            "--load",
            "1000",
            "--repeat",
            "1",
        ],
        3,
        1,
        &["1000000000 tenants", "would need about", "--load"],
    );
    refused(
        &[
            "shuffle",
            "gen",
            "--generator",
            "sort",
            "--nodes",
            "4000",
            "--keys-factor",
            "1000",
        ],
        1,
        1,
        &["--keys-factor 1000: 4000 nodes", "would need about"],
    );
}

#[test]
fn values_that_meant_nothing_are_refused() {
    for args in [
        &[
            "coordinator",
            "-s",
            "fifo-lm",
            "--fifo-lm-heavy-percentile",
            "NaN",
        ][..],
        &[
            "replay",
            "--local",
            "2",
            "-s",
            "fifo-lm",
            "--fifo-lm-heavy-percentile=-1",
        ],
        &["sim", "--fifo-lm-heavy-percentile", "NaN"],
        &["shuffle", "gen", "--nodes", "4", "--hot-fraction", "NaN"],
        &["shuffle", "gen", "--nodes", "4", "--hot-fraction=-1"],
        &["broadcast", "--local", "2", "--receive-slots", "0"],
        &["broadcast", "--local", "2", "--send-slots", "0"],
        &["broadcast", "--local", "2", "--peer-set", "0"],
        &["broadcast", "--local", "2", "--racks", "4294967295"],
    ] {
        let flag = args.iter().rfind(|a| a.starts_with("--")).unwrap();
        refused(args, 3, 2, &[flag.split('=').next().unwrap()]);
    }
    for kill in ["99@1", "3@1"] {
        refused(
            &["broadcast", "--local", "2", "--bytes", "1m", "--kill", kill],
            3,
            1,
            &["does not exist", "0 (the source) to 2"],
        );
    }
    refused(
        &["broadcast", "--local", "2", "--bytes", "1m", "--racks", "4"],
        3,
        1,
        &["--racks 4: more racks than the 3 hosts"],
    );
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A FIFO with no writer as a token or TLS file blocked the start for ever, saying nothing.
#[test]
fn a_fifo_as_token_or_certificate_ends_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let token = write(dir.path(), "token", "0123456789abcdef\n");
    let key = write(dir.path(), "key.pem", "");
    for args in [
        &["status", "--coordinator", "127.0.0.1:9", "--token-file", f][..],
        &["coordinator", "--listen", "127.0.0.1:0", "--token-file", f],
        &[
            "coordinator",
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            &token,
            "--tls-cert",
            f,
            "--tls-key",
            &key,
        ],
    ] {
        let t = Instant::now();
        let (status, err) = run(args, 3, Duration::from_secs(30));
        assert_eq!(status, Some(1), "{args:?}: {err}");
        assert!(err.contains("FIFO") && err.contains(f), "{args:?}: {err}");
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    }
}

#[test]
fn an_all_zero_summary_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let z = dir.path().join("zero.sum");
    std::fs::write(&z, [0u8; 280]).unwrap();
    let z = z.to_str().unwrap();
    refused(
        &["sortdata", "check", "--summaries", z],
        3,
        1,
        &[z, "1 summaries of 0 records", "at least one record"],
    );
}

#[test]
fn capacities_whose_sum_passes_f64_give_a_finite_utilization() {
    let dir = tempfile::tempdir().unwrap();
    let v = write(
        dir.path(),
        "big.json",
        r#"{"capacities": [1e308, 1e308], "tenants": [{"name": "A", "vector": [1, 0.5]}, {"name": "B", "vector": [0.5, 1]}]}"#,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(["hug", "alloc", "--vectors", &v])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    // The same vectors on unit capacities: the same utilization (it is scale-free).
    let unit = write(
        dir.path(),
        "unit.json",
        r#"{"capacities": [1, 1], "tenants": [{"name": "A", "vector": [1, 0.5]}, {"name": "B", "vector": [0.5, 1]}]}"#,
    );
    let out1 = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(["hug", "alloc", "--vectors", &unit])
        .output()
        .unwrap();
    let util = |s: &str| {
        s.lines()
            .find_map(|l| l.split("utilization = ").nth(1))
            .map(|r| r.split_whitespace().next().unwrap().to_string())
    };
    let u = util(&text).expect("a utilization line");
    assert_eq!(Some(u), util(&String::from_utf8_lossy(&out1.stdout)));
}

fn mq_gen(dir: &std::path::Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args([
            "milliquery",
            "gen",
            "--ranks",
            "2",
            "--rows-per-rank",
            "50",
            "--seed",
            "7",
            "-o",
        ])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mq_run(dir: &std::path::Path, gib: u64) -> (Option<i32>, String) {
    let d = dir.to_str().unwrap();
    let args = [
        "milliquery",
        "run",
        "--local",
        "2",
        "--query",
        "q1",
        "--data",
        d,
        "--timeout-s",
        "60",
    ];
    run(&args, gib, Duration::from_secs(90))
}

#[test]
fn milliquery_tablets_that_are_huge_odd_or_long_are_named_plainly() {
    let dir = tempfile::tempdir().unwrap();
    mq_gen(dir.path());
    let tablet = dir.path().join("q1").join("tablet-001.csv");
    // A 10 MB field is quoted by its first bytes and its length.
    let mut text = std::fs::read_to_string(&tablet).unwrap();
    text.push_str(&format!("en,{}\n", "9".repeat(10_000_000)));
    std::fs::write(&tablet, text).unwrap();
    let (status, err) = mq_run(dir.path(), 3);
    assert_eq!(status, Some(1), "{}", &err[..err.len().min(2000)]);
    assert!(
        err.contains("views") && err.contains("(10000000 bytes)"),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(err.len() < 10_000, "{} bytes of stderr", err.len());
    // A directory or a FIFO is said to be one, not "missing".
    std::fs::remove_file(&tablet).unwrap();
    std::fs::create_dir(&tablet).unwrap();
    let (status, err) = mq_run(dir.path(), 3);
    assert_eq!(status, Some(1), "{err}");
    assert!(
        err.contains("a directory, not a tablet file") && !err.contains("missing"),
        "{err}"
    );
    std::fs::remove_dir(&tablet).unwrap();
    mkfifo(&tablet);
    let (status, err) = mq_run(dir.path(), 3);
    assert_eq!(status, Some(1), "{err}");
    assert!(
        err.contains("a FIFO (named pipe), not a tablet file"),
        "{err}"
    );
    // A tablet past what a rank may hold is refused before it is read (a sparse 256 MB file
    // under a 1 GiB address space: 16 bytes a byte is 4 GB).
    std::fs::remove_file(&tablet).unwrap();
    let f = std::fs::File::create(&tablet).unwrap();
    f.set_len(256 << 20).unwrap();
    let (status, err) = mq_run(dir.path(), 1);
    assert_eq!(status, Some(1), "{err}");
    assert!(
        err.contains("tablets would need about") && err.contains("ulimit -v"),
        "{err}"
    );
}
