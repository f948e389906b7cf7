//! The server and output findings of adversarial pass 34 through the real binary (C6, C8-C12;
//! docs/reliability.md, "Fixed in session 34: servers and outputs"): DAG traces run by commands
//! that ignored their parents, a daemon's data dir that is a link loop, outputs checked only
//! after the work, tenant names sent raw to the terminal, a timeout of 1e-320 s, advertised
//! addresses nobody can dial. Every run has a time limit (a regression to "the whole run, then
//! the error" fails by its time or its output, not by blocking the suite).
//!
//! `COFLOWKIT_TEST_BIN` runs these against another build (how they were seen to fail on main).

mod common;
use common::{write, TOY};

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn bin() -> String {
    std::env::var("COFLOWKIT_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_coflowkit").into())
}

/// `coflowkit args` in `dir`, killed after `limit` (then `code` is None).
fn run_for(dir: &Path, args: &[&str], limit: Duration) -> Ran {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().unwrap();
    let o = reader(child.stdout.take().unwrap());
    let e = reader(child.stderr.take().unwrap());
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > limit {
            // SAFETY: the child's own process group (its ranks and daemons too).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        code: status.and_then(|s| s.code()),
        stdout: o.join().unwrap(),
        stderr: e.join().unwrap(),
    }
}

/// Reads `r` to its end on a thread, as text.
fn reader<R: std::io::Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = r.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    })
}

/// Refused with status `code` within `limit`, each of `want` in stderr; the run.
fn refused_within(dir: &Path, args: &[&str], code: i32, limit: Duration, want: &[&str]) -> Ran {
    let r = run_for(dir, args, limit);
    assert_eq!(
        r.code,
        Some(code),
        "{args:?} (None: still running after {limit:?}): {}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    for w in want {
        assert!(
            r.stderr.contains(w),
            "{args:?}: wanted `{w}` in: {}",
            r.stderr
        );
    }
    r
}

/// A DAG trace: coflow 2 waits for 1 (then 10 ms of compute), coflow 3 for 1 and 2.
const DAG: &str =
    "4 3\n1 0 1 0 1 1:1.0\n2 0 1 1 1 2:1.0 parents 1 1 compute 10\n3 0 1 2 1 3:1.0 parents 2 1 2\n";

/// C6: `fetch sim` and `replay --local 2` ran a trace with parents, starting every coflow at
/// its arrival, status 0, without a word (`replay` printed "real vs simulated"). Choice: both
/// refuse it, naming the file, a coflow and its parents, and pointing at `sim`, which honours
/// them (as `sim --model coflowsim` refuses DAGs); neither can honour them, and a result for a
/// different workload is worse than none.
#[test]
fn c6_fetch_sim_and_replay_refuse_traces_with_parents() {
    let d = tempfile::tempdir().unwrap();
    let dag = write(d.path(), "dag.txt", DAG);
    let says = [
        "dag.txt: the trace has parents (DAGs): coflow 2 waits for coflow 1",
        "`coflowkit sim` honours parents and compute",
    ];
    let limit = Duration::from_secs(120);
    let r = refused_within(
        d.path(),
        &["fetch", "sim", "--trace", &dag],
        1,
        limit,
        &says,
    );
    assert!(
        r.stderr.contains("`fetch sim` runs each coflow as a job"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("random"), "{}", r.stdout);
    let r = refused_within(
        d.path(),
        &["replay", "--local", "2", "--trace", &dag, "-s", "varys"],
        1,
        limit,
        &says,
    );
    assert!(!r.stdout.contains("real vs simulated"), "{}", r.stdout);
    assert!(!r.stdout.contains("daemon"), "{}", r.stdout);
    // Without parents, both still run.
    let toy = write(d.path(), "toy.txt", TOY);
    let r = run_for(d.path(), &["fetch", "sim", "--trace", &toy], limit);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

/// C8: `daemon --data-dir` naming a link loop or a dangling link printed `serving data on ...`
/// and then failed with `File exists`. Now it is refused before the daemon binds, by name.
#[test]
fn c8_daemon_data_dirs_that_are_loops_or_dangling_links_are_refused_before_serving() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let tok = write(p, "tok", "secret-token-1234567890abcdef");
    std::os::unix::fs::symlink("loop2", p.join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", p.join("loop2")).unwrap();
    std::os::unix::fs::symlink("nowhere", p.join("dangling")).unwrap();
    for (dir, says) in [
        ("loop1", "data dir loop1: a symbolic link loop"),
        (
            "dangling",
            "data dir dangling: a symbolic link to nowhere, which does not exist (a dangling link)",
        ),
    ] {
        let listen = format!("127.0.0.1:{}", common::free_port());
        let r = refused_within(
            p,
            &[
                "daemon",
                "--coordinator",
                "127.0.0.1:1",
                "--listen",
                &listen,
                "--token-file",
                &tok,
                "--data-dir",
                dir,
            ],
            1,
            Duration::from_secs(30),
            &[says],
        );
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(!all.contains("serving data on"), "{all}");
    }
}

/// C9: outputs that cannot be written (an existing directory, a dangling link into a missing
/// directory, a link loop, a missing directory) were found only when the result was written,
/// after the whole run. Every command checks them first, through one helper
/// (`coflowkit_simcmd::outputs`), naming the flag.
#[test]
fn c9_every_output_is_checked_before_the_work() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let toy = write(p, "toy.txt", TOY);
    let v = write(
        p,
        "v.json",
        r#"{"tenants": [{"name": "A", "vector": [1, 0.5]}, {"name": "B", "vector": [0.5, 1]}]}"#,
    );
    std::fs::create_dir(p.join("existdir")).unwrap();
    std::os::unix::fs::symlink("nowhere/x", p.join("dang")).unwrap();
    std::os::unix::fs::symlink("loop2", p.join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", p.join("loop2")).unwrap();
    let is_dir = "existdir: is a directory; name a file";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["sim", "--trace", &toy, "-s", "varys", "--json", "dang"], "--json dang: a symbolic link to nowhere/x, which does not exist (a dangling link) and cannot be made".into()),
        (vec!["sim", "--trace", &toy, "-s", "varys", "--csv", "loop1"], "--csv loop1: a symbolic link loop".into()),
        (vec!["fetch", "sim", "--trace", &toy, "--json", "existdir"], format!("--json {is_dir}")),
        (vec!["fetch", "sim", "--trace", &toy, "--json", "nodir/r.json"], "--json nodir/r.json: its directory nodir does not exist".into()),
        (vec!["fetch", "util", "--nodes", "4", "--json", "existdir"], format!("--json {is_dir}")),
        (vec!["fetch", "bw", "--rates", "1gbit:3", "--flows", "0-1,1-2", "--json", "existdir"], format!("--json {is_dir}")),
        (vec!["shuffle", "sim", "--nodes", "4", "--json", "existdir"], format!("--json {is_dir}")),
        (vec!["shuffle", "gen", "--nodes", "4", "-o", "existdir"], format!("--output {is_dir}")),
        (vec!["millisort", "--local", "2", "--records-per-rank", "1000", "--json", "existdir"], format!("--json {is_dir}")),
        (vec!["collective", "bench", "--local", "2", "--json", "existdir"], format!("--json {is_dir}")),
        (vec!["reproduce", "coflow-thesis", "--quick", "--trace", &toy, "--out", "existdir", "--charts", "ch"], format!("--out {is_dir}")),
        (vec!["reproduce", "coflow-thesis", "--quick", "--trace", &toy, "--out", "r.md", "--charts", "dang"], "--charts dang: a symbolic link to nowhere/x".into()),
        (vec!["hug", "alloc", "--vectors", &v, "--json", "existdir"], format!("--json {is_dir}")),
        (vec!["trace", "gen", "fb", "--coflows", "3", "-o", "existdir"], format!("--output {is_dir}")),
        (vec!["trace", "convert", &toy, "-o", "loop1"], "--output loop1: a symbolic link loop".into()),
        (vec!["sortdata", "gen", "--records", "10", "-o", "existdir"], format!("--output {is_dir}")),
        (vec!["replay", "--local", "2", "--trace", &toy, "-s", "varys", "--json", "existdir"], format!("--json {is_dir}")),
    ];
    for (args, says) in &cases {
        let r = refused_within(p, args, 1, Duration::from_secs(120), &[says.as_str()]);
        // Before the work: no result on stdout, no rank or daemon started.
        assert!(r.stdout.trim().is_empty(), "{args:?}: {}", r.stdout);
        assert!(!r.stderr.contains("rank"), "{args:?}: {}", r.stderr);
        assert!(!p.join("ch").exists(), "{args:?}: made its charts");
    }
    // A writer that makes its directories still may (`sim --json new/dir/r.json`).
    let r = run_for(
        p,
        &[
            "sim",
            "--trace",
            &toy,
            "-s",
            "varys",
            "--json",
            "new/dir/r.json",
        ],
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(p.join("new/dir/r.json").is_file());
}

/// C10: `hug alloc` printed tenant names raw: ESC and NUL reached the terminal, a newline in a
/// name forged a line of the table, and an error carried the raw ESC.
#[test]
fn c10_hug_alloc_shows_control_characters_in_names() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let c = write(
        p,
        "c.json",
        r#"{"tenants": [{"name": "\u001b[2J\u0000", "vector": [1, 1]}]}"#,
    );
    let nl = write(
        p,
        "nl.json",
        r#"{"tenants": [{"name": "A\nP* = 9.99 forged", "vector": [1, 1]}]}"#,
    );
    let e = write(
        p,
        "e.json",
        r#"{"tenants": [{"name": "\u001b[31mX", "vector": [-1, 1]}]}"#,
    );
    let limit = Duration::from_secs(60);
    let r = run_for(p, &["hug", "alloc", "--vectors", &c], limit);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        !r.stdout.chars().any(|c| c.is_control() && c != '\n'),
        "{:?}",
        r.stdout
    );
    assert!(r.stdout.contains("\\x1b[2J\\0"), "{}", r.stdout);
    let r = run_for(p, &["hug", "alloc", "--vectors", &nl], limit);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    assert!(
        !r.stdout.lines().any(|l| l.starts_with("P* = 9.99")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("A\\nP* = 9.99 forged"), "{}", r.stdout);
    let r = refused_within(
        p,
        &["hug", "alloc", "--vectors", &e],
        1,
        limit,
        &["tenant '\\x1b[31mX': entry 0 is -1"],
    );
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
}

/// C11: `status --timeout-s 1e-320` was accepted as "above 0" and reported a wait of 330
/// characters. Timeouts are at least a millisecond, refused by the parser naming the flag.
#[test]
fn c11_timeouts_below_a_millisecond_are_refused_by_the_parser() {
    let d = tempfile::tempdir().unwrap();
    let tok = write(d.path(), "tok", "secret-token-1234567890abcdef");
    for v in ["1e-320", "5e-324", "0.0009"] {
        let t = format!("--timeout-s={v}");
        let r = refused_within(
            d.path(),
            &[
                "status",
                "--coordinator",
                "127.0.0.1:1",
                "--token-file",
                &tok,
                &t,
            ],
            2,
            Duration::from_secs(30),
            &["--timeout-s", "at least 0.001 (a millisecond)"],
        );
        assert!(r.stderr.len() < 1000, "{}", r.stderr);
    }
}

/// C12: `daemon --advertise a:1:2`, `127.0.0.1:+80`, `999.1.1.1:80` and `::1:47830` were
/// accepted and registered. Refused before serving (the parser's cases are in
/// `runtime/tests/adversarial34.rs`, daemon and coordinator).
#[test]
fn c12_daemon_refuses_addresses_nobody_can_dial() {
    let d = tempfile::tempdir().unwrap();
    let tok = write(d.path(), "tok", "secret-token-1234567890abcdef");
    for a in ["a:1:2", "127.0.0.1:+80", "999.1.1.1:80", "::1:47830"] {
        let listen = format!("127.0.0.1:{}", common::free_port());
        let r = refused_within(
            d.path(),
            &[
                "daemon",
                "--coordinator",
                "127.0.0.1:1",
                "--listen",
                &listen,
                "--token-file",
                &tok,
                "--advertise",
                a,
            ],
            1,
            Duration::from_secs(30),
            &["advertised address", "HOST:PORT"],
        );
        assert!(
            !format!("{}{}", r.stdout, r.stderr).contains("serving data on"),
            "{a}: {}",
            r.stderr
        );
    }
}
