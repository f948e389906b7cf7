//! Bad tablets give errors that name what is wrong: the missing file, the line and field of a
//! malformed row, the header, and a rank count that does not match the tablets.

use std::path::Path;

use coflowkit_milliquery::gen::{generate, GenParams};
use coflowkit_milliquery::tablet::{load_q1, load_q2, load_q3, Table};
use coflowkit_milliquery::{Data, Query, QueryError};

fn gen(ranks: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), ranks, 5, 1, &GenParams::default()).unwrap();
    dir
}

fn rewrite(path: &Path, line: usize, text: &str) {
    let body = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = body.lines().map(String::from).collect();
    lines[line - 1] = text.to_string();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_missing_tablet_is_named() {
    let dir = gen(3);
    std::fs::remove_file(Table::Edits.path(dir.path(), 2)).unwrap();
    let e = load_q2(dir.path(), 2, 3).unwrap_err();
    assert!(
        matches!(e, QueryError::MissingTablet { rank: 2, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("q2/tablet-002.csv"), "{e}");
}

#[test]
fn a_rank_count_that_does_not_match_the_tablets() {
    let dir = gen(3);
    let e = Data::load(dir.path(), 1, 4, &[Query::Q1]).unwrap_err();
    assert!(
        matches!(
            e,
            QueryError::RankMismatch {
                tablets: 3,
                ranks: 4,
                ..
            }
        ),
        "{e}"
    );
    let e = load_q3(dir.path(), 0, 2).unwrap_err().to_string();
    assert!(e.contains("3 ranks") && e.contains("2 ranks"), "{e}");
}

#[test]
fn malformed_rows_name_file_line_and_field() {
    let dir = gen(2);
    let d = dir.path();
    let cases: [(Table, usize, &str, &str, &str); 6] = [
        (Table::Views, 3, "en,-4", "views", "-4"),
        (Table::Views, 4, "en,1,2", "(row)", "3 fields"),
        (
            Table::Edits,
            2,
            "10.0.0.256",
            "contributor_ip",
            "10.0.0.256",
        ),
        (Table::Edits, 5, "010.0.0.1", "contributor_ip", "010.0.0.1"),
        (Table::Languages, 6, "Go,lots,o/r", "bytes", "lots"),
        (Table::Commits, 2, ",ann", "repo_name", "empty"),
    ];
    for (t, line, text, field, why) in cases {
        let path = t.path(d, 1);
        let keep = std::fs::read_to_string(&path).unwrap();
        rewrite(&path, line, text);
        let e = match t {
            Table::Views => load_q1(d, 1, 2).map(|_| ()),
            Table::Edits => load_q2(d, 1, 2).map(|_| ()),
            _ => load_q3(d, 1, 2).map(|_| ()),
        }
        .unwrap_err();
        match &e {
            QueryError::Malformed {
                path: p,
                line: l,
                field: f,
                ..
            } => {
                assert_eq!((p, *l, f.as_str()), (&path, line as u64, field), "{e}");
            }
            other => panic!("{t:?} line {line}: {other}"),
        }
        assert!(e.to_string().contains(why), "{e}");
        std::fs::write(&path, keep).unwrap();
    }
    // A wrong header is named too.
    rewrite(&Table::Views.path(d, 0), 1, "lang,views");
    let e = load_q1(d, 0, 2).unwrap_err().to_string();
    assert!(
        e.contains("line 1") && e.contains("header") && e.contains("language,views"),
        "{e}"
    );
}
