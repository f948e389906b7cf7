//! Every query's distributed answer, on in-memory ranks (one thread each), against SQLite
//! running the SQL of spec millisort.md §3.1 (adapted to the flat tables) on the same tablets:
//! equal, row by row, for several seeds, rank counts, sizes, protocols and hot-key modes, and
//! for hand-written edge cases (a rank without rows, every row on one key, ties).

use std::path::Path;
use std::sync::Arc;

use coflowkit_group::mem::run_world;
use coflowkit_group::Counted;
use coflowkit_group::{Group, ShuffleProto};
use coflowkit_milliquery::gen::{generate, GenParams};
use coflowkit_milliquery::oracle;
use coflowkit_milliquery::tablet::Table;
use coflowkit_milliquery::{run_query, Answer, Data, HotKeys, Options, Query, QueryReport};

/// The three queries on `ranks` in-memory ranks; rank 0's reports.
fn distributed(dir: &Path, ranks: usize, opt: &Options) -> Vec<QueryReport> {
    let qs = [Query::Q1, Query::Q2, Query::Q3];
    let (out, hub) = run_world(ranks, |rank, ex| {
        let counter = Counted::new(ex);
        let mut g = Group::world(counter.clone() as Arc<_>).unwrap();
        let data = Data::load(dir, rank, ranks, &qs).unwrap();
        qs.iter()
            .map(|&q| run_query(&mut g, &counter, q, &data, opt).unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(hub.left_over(), 0, "undelivered messages");
    let mut out = out.into_iter();
    let root: Vec<QueryReport> = out
        .next()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert!(out.all(|r| r.iter().all(Option::is_none)));
    root
}

fn check(dir: &Path, ranks: usize, opt: &Options, what: &str) -> Vec<QueryReport> {
    let want = oracle::answers(&oracle::load(dir, ranks).unwrap()).unwrap();
    let got = distributed(dir, ranks, opt);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(&g.rows, w, "{what}: {} differs from SQLite", g.query);
        assert_eq!(g.ranks, ranks);
    }
    got
}

#[test]
fn generated_data_equals_sqlite_for_several_seeds_ranks_and_sizes() {
    for (seed, ranks, rows) in [
        (1, 1, 300),
        (2, 3, 50),
        (3, 4, 400),
        (4, 7, 200),
        (5, 5, 1500),
        (6, 8, 0),
    ] {
        let dir = tempfile::tempdir().unwrap();
        generate(dir.path(), ranks, rows, seed, &GenParams::default()).unwrap();
        let what = format!("seed {seed}, {ranks} ranks, {rows} rows per rank");
        let reports = check(dir.path(), ranks, &Options::default(), &what);
        if rows > 0 {
            // Sizes as asked: Q1 lists languages, Q2 ten addresses, Q3 up to a hundred pairs.
            let Answer::Q2(q2) = &reports[1].rows else {
                panic!()
            };
            assert_eq!(q2.len(), 10, "{what}");
            assert_eq!(reports[0].input_rows, (ranks * rows) as u64);
            assert_eq!(reports[2].input_rows, (2 * ranks * rows) as u64);
        }
    }
}

#[test]
fn protocols_and_hot_key_combining_give_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 6, 700, 11, &GenParams::default()).unwrap();
    for proto in ["grpf", "lockstep", "high-entropy"] {
        for hot in [HotKeys::Off, HotKeys::Combine] {
            let opt = Options {
                proto: ShuffleProto::parse(proto).unwrap(),
                hot_keys: hot,
                seed: 5,
                ..Options::default()
            };
            check(dir.path(), 6, &opt, &format!("{proto}, {hot:?}"));
        }
    }
}

#[test]
fn combining_shrinks_the_hot_rank_and_the_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let ranks = 8;
    generate(dir.path(), ranks, 3000, 21, &GenParams::default()).unwrap();
    let off = distributed(dir.path(), ranks, &Options::default());
    let on = distributed(
        dir.path(),
        ranks,
        &Options {
            hot_keys: HotKeys::Combine,
            ..Options::default()
        },
    );
    for q in [1, 2] {
        assert_eq!(off[q].rows, on[q].rows);
        assert!(on[q].bytes < off[q].bytes, "{}", off[q].query);
        let rows = |r: &QueryReport| -> u64 {
            r.balance
                .iter()
                .filter(|b| b.name == "shuffle" || b.name == "shuffle1")
                .flat_map(|b| b.rows_per_rank.iter())
                .max()
                .copied()
                .unwrap()
        };
        assert!(rows(&on[q]) < rows(&off[q]), "{}", off[q].query);
    }
    // The balance is reported, not asserted beyond its definition (spec §9.2.13).
    for r in off.iter().chain(&on) {
        assert!(r.max_over_mean_rows >= 1.0);
        for b in &r.balance {
            assert_eq!(b.rows_per_rank.len(), ranks);
        }
    }
}

/// Writes one tablet file from CSV text.
fn tablet(dir: &Path, t: Table, rank: usize, body: &str) {
    std::fs::create_dir_all(dir.join(t.dir())).unwrap();
    let text = format!("{}\n{body}", t.header().join(","));
    std::fs::write(t.path(dir, rank), text).unwrap();
}

#[test]
fn edge_cases_a_rank_without_rows_one_key_and_ties() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Rank 1 has no rows at all; rank 0 and 2 put everything on one language, one address,
    // one repository; Q2 and Q3 have ties that only the key order breaks.
    tablet(d, Table::Views, 0, "en,3\nen,4\n");
    tablet(d, Table::Views, 1, "");
    tablet(d, Table::Views, 2, "en,5\n");
    tablet(
        d,
        Table::Edits,
        0,
        "9.0.0.1\n10.0.0.1\n100.0.0.1\n1.1.1.1\n1.1.1.1\n",
    );
    tablet(d, Table::Edits, 1, "");
    let many: String = (0..20).map(|i| format!("2.0.0.{i}\n")).collect();
    tablet(d, Table::Edits, 2, &many);
    tablet(
        d,
        Table::Commits,
        0,
        "\"o/r,1\",ann\n\"o/r,1\",bob\n\"o/r,1\",ann\n",
    );
    tablet(d, Table::Commits, 1, "");
    tablet(d, Table::Commits, 2, "o/r2,\"Lovelace, Ada\"\n");
    tablet(d, Table::Languages, 0, "Go,7,\"o/r,1\"\nC,7,\"o/r,1\"\n");
    tablet(d, Table::Languages, 1, "");
    tablet(d, Table::Languages, 2, "Go,7,o/r2\nRust,1,o/none\n");
    let got = check(d, 3, &Options::default(), "edge cases");
    let Answer::Q2(q2) = &got[1].rows else {
        panic!()
    };
    assert_eq!(q2[0].ip, "1.1.1.1");
    assert_eq!(
        q2[1].ip, "10.0.0.1",
        "ties: as text, 10.x before 100.x and 2.x"
    );
    let Answer::Q3(q3) = &got[2].rows else {
        panic!()
    };
    assert_eq!(q3.len(), 5);
    check(
        d,
        3,
        &Options {
            hot_keys: HotKeys::Combine,
            ..Options::default()
        },
        "edge cases, combining",
    );
}
