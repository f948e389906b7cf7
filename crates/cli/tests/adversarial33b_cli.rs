//! What the adversarial pass of session 33 broke on the command line (its rows B1-B4 and
//! B11-B18), through the real binary: a seed overflow that panicked, sizes that aborted on
//! allocation or filled the disk, FIFO inputs that hung in `open()`, an arrival rounded into
//! range, write errors that named no file, absurd values accepted, an unpaced broadcast,
//! control characters passed to the terminal and empty traces run as if they were work.
//! Runs that could allocate are under an address-space limit, so a regression aborts (a
//! signal, caught below) instead of taking the machine; every run has a time limit, so a
//! regression to a hang fails instead of blocking the suite.

mod common;
use common::bounded::{ok, refused, run, run_with};
use common::{write, TOY};

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const MAX: &str = "18446744073709551615";

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// B1: run r uses seed + r, which overflowed (status 101) at --seed 2^64 - 1.
#[test]
fn b1_seeds_wrap_past_the_largest() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(
        d.path(),
        &["fetch", "sim", "--nodes", "4", "--seed", MAX, "--runs", "2"],
    );
    assert!(out.contains("2 run(s)"), "{out}");
    ok(
        d.path(),
        &[
            "fetch",
            "util",
            "--nodes",
            "4",
            "--low-share",
            "0",
            "--rounds",
            "3",
            "--warmup",
            "1",
            "--runs",
            "2",
            "--runs-random",
            "2",
            "--seed",
            MAX,
        ],
    );
}

/// B2, B3, B12: counts that sized allocations (aborts) or the disk, refused up front.
#[test]
fn b2_b3_b12_node_rank_and_row_counts_are_bounded() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let r = run_with(
        p,
        &[
            "milliquery",
            "gen",
            "--ranks",
            "4294967295",
            "--rows-per-rank",
            "0",
            "--out",
            "mq1",
        ],
        2,
        Duration::from_secs(60),
        None,
    );
    assert_eq!(r.code, Some(2), "{}", r.err());
    assert!(r.err().contains("--ranks"), "{}", r.err());
    refused(
        p,
        &[
            "milliquery",
            "gen",
            "--ranks",
            "1",
            "--rows-per-rank",
            "100000000000",
            "--out",
            "mqy",
        ],
        1,
        &["--rows-per-rank 100000000000", "bytes free"],
    );
    assert!(!p.join("mqy").exists(), "refused before writing");
    for args in [
        &[
            "fetch",
            "bench",
            "--nodes",
            "1000000000",
            "--policy",
            "random",
            "--decisions",
            "3",
            "--max-seconds",
            "0.1",
        ][..],
        &[
            "fetch",
            "util",
            "--nodes",
            "100000000",
            "--low-share",
            "0",
            "--rounds",
            "2",
            "--warmup",
            "1",
            "--runs",
            "1",
            "--runs-random",
            "1",
        ],
    ] {
        let r = run_with(p, args, 2, Duration::from_secs(60), None);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.err());
        assert!(r.err().contains("more than the 65536 nodes"), "{}", r.err());
    }
    // Within the bound but not within 2 GiB: the n^2 estimate.
    let r = run_with(
        p,
        &[
            "fetch",
            "bench",
            "--nodes",
            "60000",
            "--policy",
            "random",
            "--decisions",
            "3",
            "--max-seconds",
            "0.1",
        ],
        2,
        Duration::from_secs(60),
        None,
    );
    assert_eq!(r.code, Some(1), "{}", r.err());
    assert!(
        r.err()
            .contains("--nodes 60000: every node lists all the others"),
        "{}",
        r.err()
    );
}

/// B4: a FIFO with no writer blocked `open()` for ever in every streaming reader. Now each
/// waits 5 s for a first byte and says what the file is; the readers run at once.
#[test]
fn b4_a_fifo_without_a_writer_is_refused_not_waited_on() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "toy.txt", TOY);
    mkfifo(&p.join("f"));
    let cases: Vec<Vec<&str>> = vec![
        vec!["sim", "--trace", "f", "-s", "fifo", "--baseline", "fifo"],
        vec!["trace", "stats", "f"],
        vec!["trace", "convert", "f", "-o", "conv.txt"],
        vec!["shuffle", "sim", "--matrix", "f"],
        vec!["shuffle", "stats", "f"],
        vec!["hug", "alloc", "--vectors", "f"],
        vec!["sortdata", "check", "f"],
        vec!["sortdata", "check", "--summaries", "f"],
        vec![
            "sim",
            "--trace",
            "toy.txt",
            "-s",
            "fifo",
            "--baseline",
            "fifo",
            "--port-rates",
            "f",
        ],
        vec!["fetch", "sim", "--trace", "f"],
        vec!["replay", "--local", "2", "--trace", "f"],
        vec![
            "bench",
            "--trace",
            "f",
            "--repeat",
            "1",
            "--upscale",
            "1",
            "-s",
            "fifo",
        ],
        vec![
            "reproduce",
            "coflow-thesis",
            "--quick",
            "--trace",
            "f",
            "--out",
            "r.md",
            "--charts",
            "rch",
        ],
    ];
    let dir = p.to_path_buf();
    let runs: Vec<_> = cases
        .into_iter()
        .map(|args| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let r = run_with(&dir, &args, 4, Duration::from_secs(60), None);
                (args, r)
            })
        })
        .collect();
    // Every run joined (each kills its own child at its limit) before any is judged.
    let done: Vec<_> = runs.into_iter().map(|h| h.join()).collect();
    for d in done {
        let (args, r) = d.expect("a run still going at its limit");
        let err = r.err();
        assert_eq!(r.code, Some(1), "{args:?}: {err}");
        assert!(
            err.contains("a FIFO (named pipe) that delivered no byte"),
            "{args:?}: {err}"
        );
        assert!(r.secs < 45.0, "{args:?}: {} s", r.secs);
    }
    // A FIFO with a writer is read as before.
    let fifo = p.join("f");
    let w = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
        std::io::Write::write_all(&mut f, TOY.as_bytes()).unwrap();
    });
    let out = ok(p, &["trace", "stats", "f"]);
    w.join().unwrap();
    assert!(out.contains("coflows"), "{out}");
}

/// B11: 2^53 + 1 and 2^53 + 0.5 ms were read as 2^53 and accepted.
#[test]
fn b11_arrivals_past_2_53_are_compared_exactly() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for (name, arrival) in [
        ("a.txt", "9007199254740993"),
        ("b.txt", "9007199254740992.5"),
    ] {
        write(p, name, &format!("4 1\n1 {arrival} 1 0 1 1:1\n"));
        refused(
            p,
            &["trace", "convert", name, "-o", "out.txt"],
            1,
            &[
                &format!("{name}:2: field 2 (arrival ms): `{arrival}`"),
                "up to 2^53",
            ],
        );
    }
    write(p, "c.txt", "4 1\n1 9007199254740992 1 0 1 1:1\n");
    ok(p, &["trace", "convert", "c.txt", "-o", "out.txt"]);
}

fn dev_full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

/// B13: `--help`/`--version` into a full device exited 0 silently.
#[test]
fn b13_help_and_version_report_a_failed_write() {
    let d = tempfile::tempdir().unwrap();
    for args in [&["--version"][..], &["status", "--help"], &["--help"]] {
        let r = run_with(d.path(), args, 4, Duration::from_secs(30), Some(dev_full()));
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.err());
        assert!(
            r.err()
                .contains("writing to stdout: No space left on device"),
            "{args:?}: {}",
            r.err()
        );
    }
    // To a pipe they still succeed.
    let out = ok(d.path(), &["--version"]);
    assert!(out.starts_with("coflowkit "), "{out}");
}

/// B14: write errors that named no file; `--plot`/`--out` naming a file refused only after
/// the whole simulation.
#[test]
fn b14_outputs_are_named_and_checked_first() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "toy.txt", TOY);
    refused(
        p,
        &["trace", "gen", "fb", "--coflows", "5", "-o", "/dev/full"],
        1,
        &["writing /dev/full", "No space left on device"],
    );
    refused(
        p,
        &[
            "trace",
            "convert",
            "toy.txt",
            "--format",
            "sincronia",
            "-o",
            "/dev/full",
        ],
        1,
        &["writing /dev/full"],
    );
    refused(
        p,
        &[
            "hug",
            "bench",
            "--machines",
            "10",
            "--repeat",
            "1",
            "--json",
            "/dev/full",
        ],
        1,
        &["writing /dev/full"],
    );
    for args in [
        &["fetch", "sim", "--nodes", "4", "--plot", "toy.txt"][..],
        &[
            "fetch",
            "util",
            "--nodes",
            "4",
            "--low-share",
            "0",
            "--rounds",
            "2",
            "--warmup",
            "1",
            "--runs",
            "1",
            "--runs-random",
            "1",
            "--plot",
            "toy.txt",
        ],
        &[
            "shuffle",
            "sweep",
            "--nodes",
            "4",
            "--skews",
            "0.5",
            "--protocols",
            "grpf",
            "--runs",
            "1",
            "--out",
            "toy.txt",
        ],
    ] {
        let err = refused(p, args, 1, &["toy.txt: exists and is a file"]);
        // Before the work: nothing of the run on stdout or stderr.
        assert!(!err.contains("done"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(p.join("toy.txt")).unwrap(), TOY);
}

/// B15: values that overflowed to 300-digit times or `inf` bytes, refused by the parser.
#[test]
fn b15_absurd_sizes_and_gaps_are_refused_by_the_parser() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for (flag, v) in [
        ("--partition-mb", "1e300"),
        ("--partition-mb", "1e308"),
        ("--partition-mb", "8589934593"),
        ("--job-gap", "1e308"),
    ] {
        refused(
            p,
            &["fetch", "sim", "--nodes", "4", "--jobs", "2", flag, v],
            2,
            &[flag],
        );
    }
    ok(
        p,
        &[
            "fetch",
            "sim",
            "--nodes",
            "4",
            "--partition-mb",
            "8589934592",
        ],
    );
    let err = refused(
        p,
        &[
            "trace",
            "gen",
            "custom",
            "--ports",
            "10",
            "--coflows",
            "5",
            "--class",
            "A:1e308:1-2:1-2",
            "-o",
            "g.txt",
        ],
        2,
        &["--class", "fraction must be a number from 0 to 1"],
    );
    assert!(err.len() < 600, "{err}");
}

/// B16: one block at 1 kbit/s went out unpaced (0.002 s beside a 525 s bound); a block that
/// cannot move within --stall-s failed after it, unexplained, three times.
#[test]
fn b16_broadcast_rates_are_ranged_and_the_first_block_paced() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    refused(
        p,
        &[
            "broadcast",
            "--local",
            "2",
            "--bytes",
            "64k",
            "--rate",
            "1bit",
        ],
        1,
        &["--rate 1bit", "must be 1 kbit/s to 1 Pbit/s"],
    );
    let err = refused(
        p,
        &[
            "broadcast",
            "--local",
            "2",
            "--bytes",
            "64k",
            "--rate",
            "1kbit",
            "--timeout-s",
            "40",
        ],
        1,
        &[
            "cornet: one 65536-byte unit",
            "--rate 1kbit",
            "--stall-s 10",
        ],
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    // 64 KiB at 1 Mbit/s: 0.52 s at least, first block included.
    let r = run(
        p,
        &[
            "broadcast",
            "--local",
            "2",
            "--bytes",
            "64k",
            "--rate",
            "1mbit",
            "--json",
            "b.json",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.err());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b.json")).unwrap()).unwrap();
    let row = &v["results"][0];
    let (done, bound) = (
        row["completion_s"].as_f64().unwrap(),
        row["lower_bound_s"].as_f64().unwrap(),
    );
    assert!(done >= 0.95 * bound && bound > 0.5, "{row}");
}

/// B17: control characters and a BOM were quoted raw (a NUL hid the byte, ESC sequences
/// reached the terminal); flags of internal runs or of the ranks were named, not the user's.
#[test]
fn b17_errors_show_control_characters_and_name_the_flag() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(p, "nul.txt", "4 1\n1 0 1 0 1 1:1\0\n");
    write(p, "bom.txt", "\u{feff}4 1\n1 0 1 0 1 1:1\n");
    write(p, "esc.txt", "4 1\n1 0 1 0 1 1:1\x1b[31mX\n");
    write(p, "m.txt", "nodes 2 packets\n0 \x1b[2J\n1 0\n");
    for (args, shown) in [
        (&["trace", "stats", "nul.txt"][..], "`1\\0`"),
        (&["trace", "stats", "bom.txt"], "`U+FEFF4`"),
        (&["trace", "stats", "esc.txt"], "`1\\x1b[31mX`"),
        (&["shuffle", "stats", "m.txt"], "`\\x1b[2J`"),
    ] {
        let r = run(p, args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.err());
        assert!(r.err().contains(shown), "{args:?}: {}", r.err());
        assert!(
            !r.stderr.iter().any(|&b| b == 0 || b == 0x1b),
            "{args:?}: a raw control byte in {:?}",
            r.err()
        );
    }
    refused(
        p,
        &[
            "reproduce",
            "coflow-thesis",
            "--quick",
            "--quick-coflows",
            "0",
            "--out",
            "r0.md",
            "--charts",
            "rch0",
        ],
        2,
        &["--quick-coflows"],
    );
    for flag in ["--gather-k", "--bcast-k"] {
        refused(
            p,
            &[
                "millisort",
                "--local",
                "2",
                "--records-per-rank",
                "100",
                "--runs",
                "1",
                "--warmup",
                "0",
                flag,
                "0",
            ],
            2,
            &[flag],
        );
    }
}

/// B18: generators wrote traces of no coflows, which `sim` and `fetch sim` ran with exit 0.
#[test]
fn b18_empty_traces_are_neither_written_nor_run() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    refused(
        p,
        &["trace", "gen", "fb", "--coflows", "0", "-o", "g0.txt"],
        2,
        &["--coflows"],
    );
    refused(
        p,
        &["trace", "gen", "custom", "--coflows", "0", "-o", "g0.txt"],
        2,
        &["--coflows"],
    );
    // Nor cut to nothing by `--coflows 0`.
    write(p, "toy.txt", TOY);
    for cmd in [
        &["sim", "-s", "fifo", "--baseline", "fifo"][..],
        &["fetch", "sim"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--trace", "toy.txt", "--coflows", "0"]);
        refused(p, &args, 2, &["--coflows"]);
    }
    write(p, "g0.txt", "150 0\n");
    refused(
        p,
        &[
            "sim",
            "--trace",
            "g0.txt",
            "-s",
            "fifo",
            "--baseline",
            "fifo",
        ],
        1,
        &["g0.txt: the trace has no coflows"],
    );
    refused(
        p,
        &["fetch", "sim", "--trace", "g0.txt"],
        1,
        &["g0.txt: the trace has no coflows"],
    );
}
