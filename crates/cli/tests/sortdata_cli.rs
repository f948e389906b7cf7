//! `sortdata gen` and `sortdata check` as users meet them: real files in a temporary directory,
//! valsort's lines and exit statuses, partition summaries, refused truncated files.

mod common;
use common::coflowkit;

use std::path::Path;
use std::process::Output;

use coflowkit_sortdata::{generate, RecordKind, Summary, KEY_LEN, RECORD_LEN};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// `records` sorted by key, stably (as a sort's output).
fn sorted(records: &[u8]) -> Vec<u8> {
    let mut r: Vec<&[u8]> = records.chunks_exact(RECORD_LEN).collect();
    r.sort_by_key(|r| &r[..KEY_LEN]);
    r.concat()
}

fn check(args: &[&str]) -> Output {
    let mut all = vec!["sortdata", "check"];
    all.extend_from_slice(args);
    coflowkit(&all)
}

#[test]
fn gen_writes_gensort_records_and_prints_the_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "in.dat");
    // 70,000 records: more than one 64 Ki-record block of the writer.
    let o = coflowkit(&[
        "sortdata",
        "gen",
        "--records",
        "70000",
        "--offset",
        "4294967303",
        "--skewed",
        "--checksum",
        "-o",
        &out,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    let expected = generate(4_294_967_303, 70_000, RecordKind::Skewed);
    assert!(
        bytes == expected,
        "gen's file differs from the library's records"
    );
    let sum = Summary::of(&bytes).checksum;
    assert_eq!(stderr(&o), format!("{sum:x}\n"));
}

#[test]
fn gen_ascii_from_offset_zero_starts_with_gensorts_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let out = path(dir.path(), "a.dat");
    let o = coflowkit(&["sortdata", "gen", "--records", "3", "--ascii", "-o", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len(), 300);
    // gensort -a 3: record 0's number field and line end (see tests/data of the sortdata crate).
    assert_eq!(&bytes[12..44], b"00000000000000000000000000000000");
    assert_eq!(&bytes[98..100], b"\r\n");
    assert_eq!(&bytes[112..144], b"00000000000000000000000000000001");
}

#[test]
fn check_reports_like_valsort_on_sorted_unsorted_and_duplicated_files() {
    let dir = tempfile::tempdir().unwrap();
    let input = generate(0, 5_000, RecordKind::Binary);
    let sum = Summary::of(&input).checksum;

    // Unsorted (gensort's own output): the ERROR line, exit status 1.
    let unsorted = path(dir.path(), "in.dat");
    std::fs::write(&unsorted, &input).unwrap();
    let o = check(&[&unsorted]);
    assert_eq!(o.status.code(), Some(1));
    let s = Summary::of(&input);
    assert_eq!(
        stderr(&o),
        format!(
            "First unordered record is record {}\nRecords: 5000\nChecksum: {sum:x}\n\
             ERROR - there are {} unordered records\n",
            s.first_unordered.unwrap(),
            s.unordered
        )
    );

    // Sorted: SUCCESS, no duplicates, the same checksum.
    let good = path(dir.path(), "out.dat");
    std::fs::write(&good, sorted(&input)).unwrap();
    let o = check(&[&good]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "Records: 5000\nChecksum: {sum:x}\nDuplicate keys: 0\n\
             SUCCESS - all records are in order\n"
        )
    );

    // Every record twice, sorted: 5000 duplicate keys, still in order.
    let dup = path(dir.path(), "dup.dat");
    std::fs::write(&dup, sorted(&[input.clone(), input.clone()].concat())).unwrap();
    let o = check(&[&dup]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("Records: 10000\n"));
    assert!(stderr(&o).contains(&format!("Checksum: {:x}\n", 2 * sum)));
    assert!(stderr(&o).contains("Duplicate keys: 5000\nSUCCESS"));

    // Quiet: nothing printed, the status still tells.
    let o = check(&["-q", &unsorted]);
    assert_eq!((o.status.code(), stderr(&o)), (Some(1), String::new()));
}

#[test]
fn check_refuses_truncated_and_empty_files_naming_file_and_record() {
    let dir = tempfile::tempdir().unwrap();
    let cut = path(dir.path(), "cut.dat");
    let mut bytes = sorted(&generate(0, 50, RecordKind::Binary));
    bytes.truncate(4_321);
    std::fs::write(&cut, &bytes).unwrap();
    let o = check(&[&cut]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("cut.dat"), "{e}");
    assert!(e.contains("record 43 has 21 of 100 bytes"), "{e}");
    assert!(!e.contains("SUCCESS"), "{e}");

    // Through a pipe the size is unknown up front: the break is found as the records stream.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(["sortdata", "check", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&bytes);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("record 43 has 21 of 100 bytes"),
        "{}",
        stderr(&o)
    );

    let empty = path(dir.path(), "empty.dat");
    std::fs::write(&empty, b"").unwrap();
    let o = check(&[&empty]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("empty.dat: there must be at least one record"));
}

#[test]
fn partition_summaries_check_order_across_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let all = sorted(&generate(1_000_000, 3_000, RecordKind::Ascii));
    let parts: Vec<&[u8]> = all.chunks(1_000 * RECORD_LEN).collect();
    let mut sums = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let dat = path(dir.path(), &format!("part{i}.dat"));
        let sum = path(dir.path(), &format!("part{i}.sum"));
        std::fs::write(&dat, p).unwrap();
        let o = check(&["--summary", &sum, &dat]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(std::fs::metadata(&sum).unwrap().len(), 280);
        sums.push(sum);
    }
    let whole = Summary::of(&all);

    // In order: the report of the whole file.
    let o = check(&["--summaries", &sums[0], &sums[1], &sums[2]]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), whole.valsort_report());

    // Partitions 1 and 2 swapped: one unordered boundary, where partition 1 now starts (2000).
    let o = check(&["--summaries", &sums[0], &sums[2], &sums[1]]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.starts_with("First unordered record is record 2000\n"),
        "{e}"
    );
    assert!(
        e.ends_with("ERROR - there are 1 unordered records\n"),
        "{e}"
    );

    // Summaries concatenated in one file (valsort's `cat *.sum > all.sum`) read the same.
    let cat = path(dir.path(), "all.sum");
    let bytes: Vec<u8> = sums
        .iter()
        .flat_map(|s| std::fs::read(s).unwrap())
        .collect();
    std::fs::write(&cat, &bytes).unwrap();
    let o = check(&["--summaries", &cat]);
    assert_eq!(stderr(&o), whole.valsort_report());

    // A cut summary file is refused, naming it.
    std::fs::write(&cat, &bytes[..300]).unwrap();
    let o = check(&["--summaries", &cat]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("all.sum"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("partial partition summary"),
        "{}",
        stderr(&o)
    );
}
