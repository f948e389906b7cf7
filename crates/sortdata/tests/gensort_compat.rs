//! Byte-for-byte compatibility with gensort 1.5 at fixed offsets, against records and checksums
//! captured from the reference program (see the header of data/gensort-1.5.txt).

use coflowkit_sortdata::{checksum, generate, par_generate_into, RecordKind, RECORD_LEN};

const CAPTURED: &str = include_str!("data/gensort-1.5.txt");

struct Case {
    kind: RecordKind,
    offset: u128,
    count: usize,
    checksum: String,
    first: Vec<u8>,
    last: Vec<u8>,
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn cases() -> Vec<Case> {
    let cases: Vec<Case> = CAPTURED
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 6, "malformed line: {l}");
            Case {
                kind: match f[0] {
                    "b" => RecordKind::Binary,
                    "a" => RecordKind::Ascii,
                    "s" => RecordKind::Skewed,
                    "as" => RecordKind::AsciiSkewed,
                    other => panic!("unknown flags {other}"),
                },
                offset: f[1].parse().expect("offset"),
                count: f[2].parse().expect("count"),
                checksum: f[3].to_string(),
                first: hex(f[4]),
                last: hex(f[5]),
            }
        })
        .collect();
    assert_eq!(cases.len(), 32, "4 kinds x 8 offsets captured");
    cases
}

#[test]
fn first_and_last_records_and_checksums_match_gensort() {
    for c in cases() {
        let what = format!("{:?} -b{} {}", c.kind, c.offset, c.count);
        let records = generate(c.offset, c.count, c.kind);
        assert_eq!(
            &records[..RECORD_LEN],
            &c.first[..],
            "first record of {what}"
        );
        assert_eq!(
            &records[records.len() - RECORD_LEN..],
            &c.last[..],
            "last record of {what}"
        );
        assert_eq!(
            format!("{:x}", checksum(&records)),
            c.checksum,
            "checksum of {what}"
        );
    }
}

#[test]
fn parallel_generation_gives_the_same_checksums() {
    for c in cases().iter().filter(|c| c.count > 1) {
        let mut records = vec![0u8; c.count * RECORD_LEN];
        par_generate_into(c.offset, c.kind, &mut records);
        assert_eq!(format!("{:x}", checksum(&records)), c.checksum);
    }
}

#[test]
fn a_record_from_its_own_offset_is_the_record_inside_a_run() {
    // The last record of each run, generated alone from its own number, is the same bytes:
    // skip-ahead lands where stepping does, across 2^60, 2^64 and 2^128.
    for c in cases() {
        let last = c.offset.wrapping_add(c.count as u128 - 1);
        assert_eq!(
            &generate(last, 1, c.kind)[..],
            &c.last[..],
            "{:?} {last}",
            c.kind
        );
    }
}
