#!/usr/bin/env python3
"""The SQL engines beside `coflowkit milliquery run`: SQLite (Python's sqlite3) and, when
importable, DuckDB run the SQL of crates/milliquery/src/oracle.rs on all tablets of a data
directory in one process. Loading (and SQLite's two indexes for Q3's join) is untimed; each query runs --repeat times and the median is
reported. With --check FILE (a `milliquery run --json` output) every answer is compared with
the distributed one, row by row.

    python3 bench/milliquery_sql.py DATA_DIR RANKS [--repeat 5] [--check out.json] > sql.json
"""
import argparse
import csv
import glob
import json
import os
import sqlite3
import statistics
import sys
import time

# The same SQL as crates/milliquery/src/oracle.rs (keep them equal).
SCHEMA = """CREATE TABLE views(language TEXT, views INTEGER);
CREATE TABLE edits(contributor_ip TEXT);
CREATE TABLE commits(repo_name TEXT, author TEXT);
CREATE TABLE languages(lang TEXT, bytes INTEGER, repo_name TEXT);"""
SQL = {
    "q1": "SELECT language, SUM(views) FROM views GROUP BY language ORDER BY language",
    "q2": """SELECT contributor_ip AS ip, COUNT(*) AS count FROM edits
GROUP BY ip ORDER BY count DESC, ip ASC LIMIT 10""",
    "q3": """WITH
  repo_authors AS (
    SELECT repo_name, author FROM commits GROUP BY repo_name, author),
  repo_languages AS (
    SELECT lang, bytes AS lang_bytes, repo_name FROM languages)
SELECT lang, author, SUM(lang_bytes) AS total_bytes
FROM repo_languages JOIN repo_authors USING (repo_name)
GROUP BY lang, author ORDER BY total_bytes DESC, lang ASC, author ASC LIMIT 100""",
}
TABLES = [("views", "q1", "tablet"), ("edits", "q2", "tablet"),
          ("commits", "q3", "commits"), ("languages", "q3", "languages")]
KEYS = {"q1": ["language", "views"], "q2": ["ip", "count"],
        "q3": ["lang", "author", "total_bytes"]}


def files(data, sub, prefix, ranks):
    return [os.path.join(data, sub, f"{prefix}-{r:03}.csv") for r in range(ranks)]


def time_query(run, repeat):
    times, rows = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), rows


def sqlite_engine(data, ranks, repeat):
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    for table, sub, prefix in TABLES:
        for f in files(data, sub, prefix, ranks):
            with open(f, newline="") as fh:
                rd = csv.reader(fh)
                head = next(rd)
                marks = ",".join("?" * len(head))
                db.executemany(f"INSERT INTO {table} VALUES ({marks})", rd)
    # Without indexes SQLite joins the materialised repo_authors to languages by a nested loop
    # (97 s for 20,000 rows per table); built here, untimed, as part of loading.
    db.executescript("CREATE INDEX commits_repo ON commits(repo_name, author);"
                     "CREATE INDEX languages_repo ON languages(repo_name); ANALYZE;")
    db.commit()
    out = {}
    for q, sql in SQL.items():
        ms, rows = time_query(lambda: db.execute(sql).fetchall(), repeat)
        out[q] = {"median_ms": ms, "rows": rows}
    return {"engine": f"sqlite {sqlite3.sqlite_version}", "threads": 1, "queries": out}


def duckdb_engine(data, ranks, repeat):
    try:
        import duckdb
    except ImportError:
        return None
    db = duckdb.connect()
    threads = db.execute("SELECT current_setting('threads')").fetchone()[0]
    db.execute(SCHEMA)
    for table, sub, prefix in TABLES:
        for f in files(data, sub, prefix, ranks):
            db.execute(f"INSERT INTO {table} SELECT * FROM read_csv(?, header=true, "
                       f"all_varchar=true)", [f])
    out = {}
    for q, sql in SQL.items():
        ms, rows = time_query(lambda: db.execute(sql).fetchall(), repeat)
        out[q] = {"median_ms": ms, "rows": [list(r) for r in rows]}
    return {"engine": f"duckdb {duckdb.__version__}", "threads": threads, "queries": out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("ranks", type=int)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--check", help="a `milliquery run --json` file to compare with")
    a = ap.parse_args()
    engines = [e for e in (sqlite_engine(a.data, a.ranks, a.repeat),
                           duckdb_engine(a.data, a.ranks, a.repeat)) if e]
    if a.check:
        with open(a.check) as fh:
            doc = json.load(fh)
        for res in doc["results"]:
            got = [[r[k] for k in KEYS[res["query"]]] for r in res["rows"]]
            for e in engines:
                want = [list(r) for r in e["queries"][res["query"]]["rows"]]
                want = [[int(x) if isinstance(x, (int, float)) else x for x in r] for r in want]
                if got != want:
                    sys.exit(f"{res['query']} ({res['hot_keys']}) differs from {e['engine']}")
        print(f"checked {len(doc['results'])} results against "
              f"{', '.join(e['engine'] for e in engines)}: equal", file=sys.stderr)
    for e in engines:
        for q in e["queries"].values():
            q["rows"] = len(q["rows"])
    json.dump({"data": a.data, "ranks": a.ranks, "engines": engines}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
