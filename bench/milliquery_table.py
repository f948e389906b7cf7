#!/usr/bin/env python3
"""One markdown table of bench/milliquery.sh's outputs: per query, ranks and rows per rank,
the distributed median wall time in both hot-key modes, rows per ms (and per core: ranks share
this machine's cores), traffic, balance, and SQLite's and DuckDB's time on the same data."""
import glob
import json
import os
import re
import sys

out = sys.argv[1]
cores = os.cpu_count() or 1
runs = []
for f in glob.glob(os.path.join(out, "run-*.json")):
    m, n = map(int, re.search(r"run-(\d+)-(\d+)\.json$", f).groups())
    doc = json.load(open(f))
    sql_f = os.path.join(out, f"sql-{m}-{n}.json")
    sql = json.load(open(sql_f)) if os.path.exists(sql_f) else {"engines": []}
    runs.append((m, n, doc, sql))
runs.sort(key=lambda r: (r[0], r[1]))

print(f"Cores on this machine: {cores}; rows/ms/core divides by min(ranks, cores).\n")
print("| query | ranks | rows/rank | input rows | hot keys | wall ms | rows/ms | rows/ms/core "
      "| messages | bytes | max/mean rows | SQLite ms | DuckDB ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for q in ["q1", "q2", "q3"]:
    for m, n, doc, sql in runs:
        eng = {e["engine"].split()[0]: e for e in sql["engines"]}
        def t(name):
            e = eng.get(name)
            return f"{e['queries'][q]['median_ms']:.2f}" if e else "-"
        for r in doc["results"]:
            if r["query"] != q:
                continue
            rate = r["input_rows"] / r["wall_ms"] if r["wall_ms"] > 0 else 0
            per_core = rate / min(m, cores)
            print(f"| {q} | {m} | {n} | {r['input_rows']} | {r['hot_keys']} | {r['wall_ms']:.2f} "
                  f"| {rate:.0f} | {per_core:.0f} | {r['messages']} | {r['bytes']} "
                  f"| {r['max_over_mean_rows']:.2f} | {t('sqlite')} | {t('duckdb')} |")
