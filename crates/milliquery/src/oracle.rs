//! The reference answers (feature `oracle`): SQLite running the SQL of spec millisort.md
//! §3.1, adapted to the flat tablets, on every tablet of a data directory in one process.
//!
//! Adaptations: the tables are already unnested (no UNNEST, `author` is a plain column), and
//! the ORDER BYs gain the tie-breaks that make a top-K unique (Q2: ip ascending as text; Q3:
//! lang, then author), which the original SQL leaves open. Q1 gets an ORDER BY language.

use std::path::Path;

use rusqlite::Connection;

use crate::rows::{Answer, IpCount, LangAuthorBytes, LangViews};
use crate::tablet::Table;

pub const SCHEMA: &str = "CREATE TABLE views(language TEXT, views INTEGER);
CREATE TABLE edits(contributor_ip TEXT);
CREATE TABLE commits(repo_name TEXT, author TEXT);
CREATE TABLE languages(lang TEXT, bytes INTEGER, repo_name TEXT);";

pub const Q1_SQL: &str =
    "SELECT language, SUM(views) FROM views GROUP BY language ORDER BY language";

pub const Q2_SQL: &str = "SELECT contributor_ip AS ip, COUNT(*) AS count FROM edits
GROUP BY ip ORDER BY count DESC, ip ASC LIMIT 10";

pub const Q3_SQL: &str = "WITH
  repo_authors AS (
    SELECT repo_name, author FROM commits GROUP BY repo_name, author),
  repo_languages AS (
    SELECT lang, bytes AS lang_bytes, repo_name FROM languages)
SELECT lang, author, SUM(lang_bytes) AS total_bytes
FROM repo_languages JOIN repo_authors USING (repo_name)
GROUP BY lang, author ORDER BY total_bytes DESC, lang ASC, author ASC LIMIT 100";

/// The SQL table of each tablet kind.
pub fn sql_table(t: Table) -> &'static str {
    match t {
        Table::Views => "views",
        Table::Edits => "edits",
        Table::Commits => "commits",
        Table::Languages => "languages",
    }
}

/// Every tablet of every table into an in-memory SQLite, fields as the CSV has them (the
/// INTEGER columns' affinity turns digits into integers): read by the csv crate alone, not by
/// the loader under test.
pub fn load(dir: &Path, ranks: usize) -> Result<Connection, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let db = Connection::open_in_memory().map_err(|x| e(&x))?;
    db.execute_batch(SCHEMA).map_err(|x| e(&x))?;
    for t in Table::ALL {
        let marks = vec!["?"; t.header().len()].join(",");
        let sql = format!("INSERT INTO {} VALUES ({marks})", sql_table(t));
        let tx = db.unchecked_transaction().map_err(|x| e(&x))?;
        {
            let mut st = tx.prepare(&sql).map_err(|x| e(&x))?;
            for r in 0..ranks {
                let path = t.path(dir, r);
                let mut rd = csv::Reader::from_path(&path)
                    .map_err(|x| format!("{}: {x}", path.display()))?;
                for rec in rd.records() {
                    let rec = rec.map_err(|x| format!("{}: {x}", path.display()))?;
                    st.execute(rusqlite::params_from_iter(rec.iter()))
                        .map_err(|x| e(&x))?;
                }
            }
        }
        tx.commit().map_err(|x| e(&x))?;
    }
    Ok(db)
}

/// Q1, Q2 and Q3's answers from the engine.
pub fn answers(db: &Connection) -> Result<[Answer; 3], rusqlite::Error> {
    let n = |v: i64| v as u64;
    let q1 = db
        .prepare(Q1_SQL)?
        .query_map([], |r| {
            Ok(LangViews {
                language: r.get(0)?,
                views: n(r.get(1)?),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let q2 = db
        .prepare(Q2_SQL)?
        .query_map([], |r| {
            Ok(IpCount {
                ip: r.get(0)?,
                count: n(r.get(1)?),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let q3 = db
        .prepare(Q3_SQL)?
        .query_map([], |r| {
            Ok(LangAuthorBytes {
                lang: r.get(0)?,
                author: r.get(1)?,
                total_bytes: n(r.get(2)?),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok([Answer::Q1(q1), Answer::Q2(q2), Answer::Q3(q3)])
}
