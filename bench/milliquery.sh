#!/usr/bin/env bash
# MilliQuery's numbers (docs/milliquery.md): time per query against ranks and rows per rank on
# this machine, both hot-key modes, beside SQLite and DuckDB running the same SQL on all the
# data in one process (bench/milliquery_sql.py, which also checks every answer is equal).
#
#   bash bench/milliquery.sh [OUT_DIR]
#   env: RANKS="1 2 4 8"  ROWS="1000 10000 100000"  REPEAT=5  PROTOCOL=grpf
#        SQL_PYTHON=python3 (a Python with the duckdb package for DuckDB; SQLite always runs)
#
# Writes OUT_DIR (default target/bench-milliquery)/run-M-N.json (milliquery run --json),
# sql-M-N.json and summary.md (one table of everything).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/bench-milliquery}
ranks=${RANKS:-1 2 4 8}
rows=${ROWS:-1000 10000 100000}
repeat=${REPEAT:-5}
protocol=${PROTOCOL:-grpf}
py=${SQL_PYTHON:-python3}
mkdir -p "$out"
cargo build --release --locked -q -p coflowkit
ck=target/release/coflowkit
for m in $ranks; do
  for n in $rows; do
    d=$out/data-$m-$n
    [ -d "$d" ] || $ck milliquery gen --ranks "$m" --rows-per-rank "$n" --seed 1 -o "$d" >/dev/null
    echo "== $m ranks x $n rows per rank" >&2
    $ck milliquery run --local "$m" --data "$d" --protocol "$protocol" --hot-keys off,combine \
      --repeat "$repeat" --warmup 1 --timeout-s 900 --json "$out/run-$m-$n.json" |
      tee "$out/run-$m-$n.txt" >&2
    $py bench/milliquery_sql.py "$d" "$m" --repeat "$repeat" --check "$out/run-$m-$n.json" \
      >"$out/sql-$m-$n.json"
  done
done
python3 bench/milliquery_table.py "$out" | tee "$out/summary.md"
