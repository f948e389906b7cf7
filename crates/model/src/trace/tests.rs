//! Format detection, round trips over real files, and one malformed-input test per error kind:
//! each checks that the message names the file, the line and the field.

use std::path::{Path, PathBuf};

use super::*;

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The bundled FB trace (also for the generators' tests).
pub(crate) fn fb() -> Trace {
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

// ---- the DAG extension: parents and compute times ----

/// A diamond 1 -> {2, 3} -> 4 with compute times, and a lone coflow 5.
const DIAMOND: &str = "\
8 5
1 0 1 0 1 1:4.0
2 0 1 1 1 2:1.0 parents 1 1 compute 500
3 0 2 1 2 1 3:2.0 parents 1 1
4 0 1 3 1 4:1.0 parents 2 2 3 compute 1250.5
5 10 1 6 1 7:1.0
";

#[test]
fn parents_and_compute_times_are_read() {
    let t = parse_str(DIAMOND, "d.txt").unwrap();
    let by_id = |id| t.coflows.iter().find(|c| c.id == id).unwrap();
    assert_eq!(by_id(1).parents, Vec::<u64>::new());
    assert_eq!(by_id(1).compute_s, 0.0);
    assert_eq!(
        (by_id(2).parents.clone(), by_id(2).compute_s),
        (vec![1], 0.5)
    );
    assert_eq!(
        (by_id(3).parents.clone(), by_id(3).compute_s),
        (vec![1], 0.0)
    );
    assert_eq!(
        (by_id(4).parents.clone(), by_id(4).compute_s),
        (vec![2, 3], 1.2505)
    );
    // The flows are those of the line without its tail.
    let plain = parse_str("8 1\n3 0 2 1 2 1 3:2.0\n", "p.txt").unwrap();
    assert_eq!(by_id(3).flows, plain.coflows[0].flows);
    // And it writes back byte for byte.
    assert_eq!(write_to_string(&t, Format::Benchmark).unwrap(), DIAMOND);
}

#[test]
fn parents_come_before_children_at_equal_arrivals() {
    // The child's line comes first; both arrive at 0.
    let t = parse_str("4 2\n2 0 1 0 1 1:1 parents 1 1\n1 0 1 2 1 3:1\n", "f").unwrap();
    let ids: Vec<u64> = t.coflows.iter().map(|c| c.id).collect();
    assert_eq!(ids, vec![1, 2]);
}

#[test]
fn bad_parents_name_file_line_and_field() {
    let head = "8 2\n1 0 1 0 1 1:1.0\n";
    // fields: 1 id, 2 ms, 3 M, 4 mapper, 5 R, 6 reducer, 7 `parents`, 8 count, 9.. ids
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 1 7\n"),
        3,
        "field 9 (parent id)",
        "parent 7 is not a coflow of the trace",
    );
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 1 2\n"),
        3,
        "field 9 (parent id)",
        "coflow 2 names itself as a parent",
    );
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 2 1 1\n"),
        3,
        "field 10 (parent id)",
        "parent 1 is named twice",
    );
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 2 1\n"),
        3,
        "field 10 (parent id)",
        "line ends early; field 8 (parent count) announced 2 parents",
    );
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 0\n"),
        3,
        "field 8 (parent count)",
        "not a positive integer count",
    );
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 1 x\n"),
        3,
        "field 9 (parent id)",
        "`x` is not a non-negative integer id",
    );
    for bad in ["-1", "NaN", "inf", "1e300", "x"] {
        fails(
            &format!("{head}2 0 1 1 1 2:1 parents 1 1 compute {bad}\n"),
            3,
            "field 11 (compute ms)",
            "is not a non-negative number of milliseconds",
        );
    }
    fails(
        &format!("{head}2 0 1 1 1 2:1 compute 5\n"),
        3,
        "field 7 (compute)",
        "a compute time needs parents",
    );
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 1 1 compute\n"),
        3,
        "field 11 (compute ms)",
        "line ends early",
    );
    fails(
        &format!("{head}2 0 1 1 1 2:1 parents 1 1 compute 5 6\n"),
        3,
        "field 12 (end of line)",
        "unexpected trailing token `6`",
    );
    fails(
        "8 2\n1 900 1 0 1 1:1.0\n2 100 1 1 1 2:1 parents 1 1\n",
        3,
        "field 9 (parent id)",
        "parent 1 arrives at 900 ms, after its child 2 (100 ms)",
    );
}

/// Adversarial pass 34, C13: arrivals are bounded by 2^53 ms so that milliseconds stay exact,
/// but a child's release (its parents' release plus its compute) was not: 9007199254740000 +
/// 9007199254740992 ms gave CCTs of 0. The release is bounded like an arrival, along chains.
#[test]
fn a_release_past_2_53_ms_is_refused_naming_the_compute_time() {
    fails(
        "4 2\n1 9007199254740000 1 0 1 1:0.001\n\
         2 9007199254740000 1 0 1 1:0.001 parents 1 1 compute 9007199254740992\n",
        3,
        "field 11 (compute ms)",
        "past 2^53 ms",
    );
    // Each compute within bounds, the chain past them: blamed on the coflow that passes.
    let half = 4503599627370496u64; // 2^52
    let chain = format!(
        "4 4\n1 0 1 0 1 1:1\n2 0 1 0 1 1:1 parents 1 1 compute {half}\n\
         3 0 1 0 1 1:1 parents 1 2 compute {half}\n4 0 1 0 1 1:1 parents 1 3 compute 2\n"
    );
    fails(&chain, 5, "field 11 (compute ms)", "coflow 4 is released");
    // Exactly 2^53 is fine.
    let ok = format!(
        "4 3\n1 0 1 0 1 1:1\n2 0 1 0 1 1:1 parents 1 1 compute {half}\n\
         3 0 1 0 1 1:1 parents 1 2 compute {half}\n"
    );
    parse_str_with(&ok, "ok.txt", &ReadOptions::default()).expect("a release at 2^53 ms is exact");
}

#[test]
fn a_cycle_of_parents_is_refused_naming_it() {
    let text = "8 4\n\
                1 0 1 0 1 1:1\n\
                2 0 1 0 1 1:1 parents 2 1 4\n\
                3 0 1 0 1 1:1 parents 1 2\n\
                4 0 1 0 1 1:1 parents 1 3\n";
    // Found from coflow 2 (the first with parents): 2 waits for 4, 4 for 3, and 3's parent 2
    // (line 4, field 9) closes the cycle.
    fails(
        text,
        4,
        "field 9 (parent id)",
        "parent 2 closes a cycle: 2 -> 4 -> 3 -> 2 (each waits for the next)",
    );
}

#[test]
fn dag_traces_that_could_not_be_read_back_are_not_written() {
    let mut t = parse_str(DIAMOND, "d.txt").unwrap();
    t.coflows[1].parents.push(99);
    let e = write_to_string(&t, Format::Benchmark)
        .unwrap_err()
        .to_string();
    assert!(e.contains("parent 99 is not a coflow"), "{e}");
    let mut t = parse_str(DIAMOND, "d.txt").unwrap();
    t.coflows[0].compute_s = 1.0; // coflow 1 has no parents
    let e = write_to_string(&t, Format::Benchmark)
        .unwrap_err()
        .to_string();
    assert!(e.contains("coflow 1") && e.contains("no parents"), "{e}");
    // Sincronia's format has no parents: refused, not dropped.
    let t = parse_str(DIAMOND, "d.txt").unwrap();
    let e = write_to_string(&t, Format::Sincronia)
        .unwrap_err()
        .to_string();
    assert!(e.contains("only the coflow-benchmark format"), "{e}");
}

mod dag_round_trip {
    use super::*;
    use crate::coflow::Flow;
    use proptest::prelude::*;

    /// Random DAG traces: each coflow an equal-split product, parents among earlier coflows
    /// (distinct), arrivals non-decreasing in whole ms, compute times in whole or fractional ms.
    fn dag_trace() -> impl Strategy<Value = Trace> {
        let coflow = (
            0u32..6,
            1usize..3,
            1usize..3,
            1u32..5000,
            0u64..2000,
            prop::collection::vec(any::<prop::sample::Index>(), 0..4),
            prop_oneof![
                Just(0.0),
                0.0f64..1e7,
                (0u64..100_000).prop_map(|m| m as f64)
            ],
        );
        prop::collection::vec(coflow, 1..12).prop_map(|specs| {
            let mut coflows: Vec<Coflow> = Vec::new();
            let mut ms = 0u64;
            for (i, (first, m, r, mb, gap, picks, compute_ms)) in specs.into_iter().enumerate() {
                ms += gap;
                let mappers: Vec<u32> = (0..m as u32).map(|k| (first + k) % 8).collect();
                let mut flows = Vec::new();
                for k in 0..r as u32 {
                    let dst = (first + 3 + k) % 8;
                    let bytes = crate::trace::num::flow_bytes(mb as f64 / 4.0, m);
                    flows.extend(mappers.iter().map(|&src| Flow { src, dst, bytes }));
                }
                let mut c = Coflow::new(100 + i as u64, ms as f64 / 1000.0, flows);
                if i > 0 {
                    for p in picks {
                        let id = 100 + p.index(i) as u64;
                        if !c.parents.contains(&id) {
                            c.parents.push(id);
                        }
                    }
                }
                if !c.parents.is_empty() {
                    c.compute_s = compute_ms / 1000.0;
                }
                coflows.push(c);
            }
            Trace { ports: 8, coflows }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn dag_traces_round_trip(t in dag_trace()) {
            let text = write_to_string(&t, Format::Benchmark).unwrap();
            let back = parse_str(&text, "rt.txt").unwrap();
            prop_assert_eq!(&back, &t);
            prop_assert_eq!(write_to_string(&back, Format::Benchmark).unwrap(), text);
        }
    }
}
