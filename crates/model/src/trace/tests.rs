//! Format detection, round trips over real files, and one malformed-input test per error kind:
//! each checks that the message names the file, the line and the field.

use std::path::{Path, PathBuf};

use super::*;

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn fb() -> Trace {
    read_path(&manifest_path("../../data/traces/FB2010-1Hr-150-0.txt")).unwrap()
}

/// Parsing `text` as `bad.txt` fails with a message holding `bad.txt:<line>:` and `field`.
#[track_caller]
fn fails(text: &str, line: usize, field: &str, what: &str) -> String {
    fails_with(text, line, field, what, &ReadOptions::default())
}

#[track_caller]
fn fails_with(text: &str, line: usize, field: &str, what: &str, opts: &ReadOptions) -> String {
    let msg = parse_str_with(text, "bad.txt", opts)
        .expect_err("should fail")
        .to_string();
    let at = format!("bad.txt:{line}: ");
    assert!(msg.starts_with(&at), "`{msg}` does not start with `{at}`");
    assert!(msg.contains(field), "`{msg}` does not name `{field}`");
    assert!(msg.contains(what), "`{msg}` does not say `{what}`");
    msg
}

// ---- detection ----

#[test]
fn detects_both_formats() {
    assert_eq!(
        detect("150 1\n1 0 1 22 1 65:1.0\n", "f").unwrap(),
        Format::Benchmark
    );
    assert_eq!(
        detect("16 1\n0 28 1 1 1 0 3 1\n", "f").unwrap(),
        Format::Sincronia
    );
    assert_eq!(detect("16 0\n", "f").unwrap(), Format::Benchmark);
    assert_eq!("Sincronia".parse::<Format>().unwrap(), Format::Sincronia);
}

// ---- round trips ----

#[test]
fn facebook_trace_round_trips_through_both_formats() {
    let t = fb();
    let text = write_to_string(&t, Format::Benchmark).unwrap();
    assert_eq!(parse_str(&text, "rt.txt").unwrap(), t);
    // Our writer reproduces the published file byte for byte.
    let original =
        std::fs::read_to_string(manifest_path("../../data/traces/FB2010-1Hr-150-0.txt")).unwrap();
    assert_eq!(text.trim_end(), original.trim_end());

    let text = write_to_string(&t, Format::Sincronia).unwrap();
    assert_eq!(detect(&text, "rt.txt").unwrap(), Format::Sincronia);
    assert_eq!(parse_str(&text, "rt.txt").unwrap(), t);
}

#[test]
fn sincronia_fixtures_parse_and_round_trip() {
    for (name, flows) in [
        ("sincronia-400-0.9-FB-UPWS-head5.txt", 5 + 10 + 2 + 2 + 7),
        (
            "sincronia-526-0.9-FB-UPWS-CHUNKS-head5.txt",
            60 + 1 + 6 + 1 + 8,
        ),
    ] {
        let path = manifest_path("tests/fixtures").join(name);
        let t = read_path(&path).unwrap();
        assert_eq!(
            (t.ports, t.coflows.len(), t.flows()),
            (16, 5, flows),
            "{name}"
        );
        let ids: Vec<u64> = t.coflows.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![0, 1, 2, 3, 4]);
        let text = write_to_string(&t, Format::Sincronia).unwrap();
        assert_eq!(parse_str(&text, name).unwrap(), t);
    }
    // Coflow 2 of the CHUNKS file repeats the pair 14 -> 15: both flows are kept.
    let t = read_path(&manifest_path(
        "tests/fixtures/sincronia-526-0.9-FB-UPWS-CHUNKS-head5.txt",
    ))
    .unwrap();
    let repeated = t.coflows[2]
        .flows
        .iter()
        .filter(|f| (f.src, f.dst) == (14, 15))
        .count();
    assert_eq!(repeated, 2);
    // Its declared destination count (3) is not its distinct destinations (4).
    let exact = ReadOptions {
        sincronia_counts: DeclaredCounts::Exact,
        ..Default::default()
    };
    let path = manifest_path("tests/fixtures/sincronia-526-0.9-FB-UPWS-CHUNKS-head5.txt");
    let e = read_path_with(&path, &exact).unwrap_err().to_string();
    assert!(
        e.contains("head5.txt:4: field 5 (destination count): declares 3"),
        "{e}"
    );
}

#[test]
fn arrivals_out_of_order_are_sorted_not_refused() {
    let t = parse_str("150 2\n1 900 1 0 1 1:1\n2 100 1 0 1 1:1\n", "f").unwrap();
    assert_eq!(t.coflows[0].id, 2);
}

// ---- one test per error kind ----

#[test]
fn io_error_names_the_file() {
    let e = read_path(Path::new("no/such/trace.txt")).unwrap_err();
    assert!(matches!(e.kind, TraceErrorKind::Io(_)));
    assert!(
        e.to_string().starts_with("no/such/trace.txt: cannot read"),
        "{e}"
    );
}

#[test]
fn empty_file() {
    let e = parse_str(" \n\n", "bad.txt").unwrap_err().to_string();
    assert_eq!(
        e,
        "bad.txt: empty file (expected a header line `<ports> <coflows>`)"
    );
}

#[test]
fn bad_header() {
    fails("150\n", 1, "<ports> <coflows>", "bad header");
    fails(
        "x 1\n1 0 1 2 1 3:1\n",
        1,
        "field 1 (ports)",
        "positive integer",
    );
    fails(
        "0 1\n1 0 1 2 1 3:1\n",
        1,
        "field 1 (ports)",
        "positive integer",
    );
    fails(
        "\n150 y\n1 0 1 2 1 3:1\n",
        2,
        "field 2 (coflow count)",
        "`y`",
    );
}

#[test]
fn fewer_coflow_lines_than_the_header_says() {
    fails(
        "150 3\n1 0 1 22 1 65:1.0\n2 5 1 22 1 65:1.0\n",
        1,
        "field 2 (coflow count)",
        "announces 3 coflows but the file has only 2",
    );
}

#[test]
fn more_coflow_lines_than_the_header_says() {
    fails(
        "150 1\n1 0 1 22 1 65:1.0\n2 5 1 22 1 65:1.0\n",
        3,
        "field 2 (coflow count)",
        "beyond the 1 announced",
    );
}

#[test]
fn truncated_line() {
    fails(
        "150 1\n1 0 1 22 2 65:1.0\n",
        2,
        "field 7 (reducer port:MB)",
        "line ends early; field 5 (reducer count) announced 2 reducers",
    );
    fails(
        "16 2\n0 28 1 1 1 0 3 1\n1 30 2 1 1 0 3 1 0 3\n",
        3,
        "field 11 (flow `src dst MB`)",
        "field 3 (flow count) announced 2 flows",
    );
    fails(
        "16 2\n0 28 1 1 1 0 3 1\n1 30\n",
        3,
        "field 3 (flow count)",
        "line ends early",
    );
}

/// A flow count of 2^64 - 1 promises more tokens than any line holds: refused like any short
/// line, not an overflow of `3 x count` (the adversarial pass of session 29).
#[test]
fn a_flow_count_near_2_64_is_a_short_line() {
    fails(
        "4 2\n1 0 2 2 2 0 1 10 1 2 5\n2 50 18446744073709551615 1 1 2 3 4\n",
        3,
        "field 3 (flow count)",
        "18446744073709551615 flows",
    );
}

#[test]
fn bad_number() {
    fails(
        "150 1\n1 abc 1 22 1 65:1.0\n",
        2,
        "field 2 (arrival ms)",
        "`abc` is not a non-negative number of milliseconds",
    );
    fails(
        "150 1\nx 0 1 22 1 65:1.0\n",
        2,
        "field 1 (coflow id)",
        "`x`",
    );
    fails(
        "150 1\n1 0 0 1 65:1.0\n",
        2,
        "field 3 (mapper count)",
        "positive",
    );
    fails(
        "150 1\n1 0 1 22 2 65:1 66\n",
        2,
        "field 7 (reducer port:MB)",
        "`port:MB`",
    );
    fails(
        "150 1\n1 0 1 22 1 65:lots\n",
        2,
        "field 6 (reducer MB)",
        "`lots`",
    );
    fails(
        "16 2\n0 0 1 1 1 0 3 1\n1 0 1 1 1 0 3 x\n",
        3,
        "field 8 (flow 1 MB)",
        "`x`",
    );
}

#[test]
fn port_out_of_range() {
    fails(
        "150 1\n1 0 2 22 151 1 65:1.0\n",
        2,
        "field 5 (mapper port)",
        "port 151 out of range 0..150",
    );
    fails(
        "150 1\n1 0 1 22 1 150:1.0\n",
        2,
        "field 6 (reducer port)",
        "port 150",
    );
    fails(
        "16 2\n0 0 1 1 1 0 3 1\n1 0 1 1 1 0 16 1\n",
        3,
        "field 7 (flow 1 destination port)",
        "port 16 out of range 0..16",
    );
}

#[test]
fn negative_or_non_finite_size() {
    fails(
        "150 1\n1 0 1 22 1 65:-1\n",
        2,
        "field 6 (reducer MB)",
        "size `-1` MB",
    );
    fails(
        "150 1\n1 0 1 22 1 65:inf\n",
        2,
        "field 6 (reducer MB)",
        "from 0 to 2^33",
    );
    fails(
        "16 2\n0 0 1 1 1 0 3 1\n1 0 1 1 1 0 3 NaN\n",
        3,
        "field 8 (flow 1 MB)",
        "size `NaN` MB",
    );
}

#[test]
fn duplicate_coflow_id() {
    fails(
        "150 2\n7 0 1 22 1 65:1.0\n7 5 1 22 1 65:1.0\n",
        3,
        "field 1 (coflow id)",
        "duplicate coflow id 7 (first on line 2)",
    );
}

#[test]
fn duplicate_port_in_a_coflow() {
    fails(
        "150 1\n1 0 2 22 22 1 65:1.0\n",
        2,
        "field 5 (mapper port)",
        "port 22 appears twice among the mappers (first as field 4)",
    );
    fails(
        "150 1\n1 0 1 22 2 65:1.0 65:2.0\n",
        2,
        "field 7 (reducer port)",
        "among the reducers (first as field 6)",
    );
}

#[test]
fn trailing_garbage() {
    fails(
        "150 1\n1 0 1 22 1 65:1.0 junk\n",
        2,
        "field 7 (end of line)",
        "unexpected trailing token `junk`",
    );
    fails(
        "16 2\n0 0 1 1 1 0 3 1\n1 0 1 1 1 0 3 1 9\n",
        3,
        "field 9 (end of line)",
        "`9`",
    );
}

#[test]
fn unknown_format() {
    fails("150 1\n1 0 1 22 1\n", 2, "field 3", "unknown trace format");
}

#[test]
fn declared_count_mismatch() {
    let exact = ReadOptions {
        sincronia_counts: DeclaredCounts::Exact,
        ..Default::default()
    };
    fails_with(
        "16 1\n0 0 2 1 1 0 3 1 0 4 1\n",
        2,
        "field 5 (destination count)",
        "declares 1, but the flows have 2 distinct destinations",
        &exact,
    );
}

#[test]
fn unwritable_coflows_name_their_id() {
    let mut t = parse_str("4 1\n9 0 1 0 1 1:1\n", "f").unwrap();
    t.ports = 1;
    for format in Format::ALL {
        let e = write_to_string(&t, format).unwrap_err().to_string();
        assert!(e.contains("1-port fabric"), "{e}");
    }
}

// ---- the flow limit ----

#[test]
fn flows_implied_past_the_limit_are_refused_before_they_are_made() {
    // 457 KB of text, 900 million flows (14 GB as `Flow`s): refused on its count alone.
    let n = 30_000;
    let mut text = format!("{n} 1\n1 0 {n}");
    (0..n).for_each(|p| text.push_str(&format!(" {p}")));
    text.push_str(&format!(" {n}"));
    (0..n).for_each(|p| text.push_str(&format!(" {p}:1.0")));
    let field = format!("field {} (reducer count)", n + 4);
    let e = fails(
        &text,
        2,
        &field,
        "900000000 flows (30000 mappers x 30000 reducers)",
    );
    assert!(
        e.contains(&format!("limit of {DEFAULT_MAX_FLOWS} flows")),
        "{e}"
    );
    assert!(e.contains("--max-flows"), "{e}");

    // The limit counts the whole trace, and a product past u64 is no panic.
    let two = "4 2\n1 0 2 0 1 2 2:1 3:1\n2 5 1 0 1 1:1\n";
    let at = |max| parse_str_with(two, "bad.txt", &ReadOptions::with_max_flows(max));
    assert_eq!(at(5).unwrap().flows(), 5);
    fails_with(
        two,
        3,
        "field 5 (reducer count)",
        "1 flows (1 mappers x 1 reducers), after 4 flows",
        &ReadOptions::with_max_flows(4),
    );
    fails(
        "4 1\n1 0 2 0 1 18446744073709551615 1:1\n",
        2,
        "field 6 (reducer count)",
        "more than 2^64 flows",
    );
}

#[test]
fn sincronia_flow_counts_past_the_limit_or_usize_are_refused() {
    // `3 x count` used to overflow (a panic) before the line length was checked.
    fails(
        "4 2\n1 0 2 2 2 0 1 10 1 2 5\n2 50 18446744073709551615 1 1 2 3 4\n",
        3,
        "field 3 (flow count)",
        "18446744073709551615 flows",
    );
    let one = "4 1\n1 0 2 2 2 0 1 10 1 2 5\n";
    fails_with(
        one,
        2,
        "field 3 (flow count)",
        "2 flows",
        &ReadOptions::with_max_flows(1),
    );
    assert!(parse_str_with(one, "f", &ReadOptions::with_max_flows(2)).is_ok());
}
