#!/usr/bin/env bash
# MilliSort on this machine (docs/millisort.md): Table 3/5-style budget rows, the Table 4-style
# phase breakdown, the baselines, the partitioning alone (one vs two levels) and the partition
# excess. Ranks are local processes on loopback sharing this host's cores (spec §8.5).
#   bench/millisort.sh                       # everything, results in bench/out/millisort/
#   RANKS="1 2 4" BUDGETS=10,100 bench/millisort.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
cargo build --release -q -p coflowkit -p coflowkit-millisort --examples --bins
BIN=$PWD/target/release/coflowkit
EX=$PWD/target/release/examples
OUT=${OUT:-bench/out/millisort}
RANKS=${RANKS:-"1 2 4 8 16"}
BUDGETS=${BUDGETS:-"1,2,5,10,20,50,100"}
RUNS=${RUNS:-5}
PAYLOAD=${PAYLOAD:-8900}
mkdir -p "$OUT"

echo "== budget search (Table 3/5 analogue): median of $RUNS runs, payload $PAYLOAD"
for m in $RANKS; do
  "$BIN" millisort --local "$m" --budget-ms "$BUDGETS" --runs "$RUNS" --validate sums \
    --payload "$PAYLOAD" --json "$OUT/budget-$m.json" | grep -v '^  ' | tee "$OUT/budget-$m.txt"
done

echo "== phases at 7000 records per rank (Table 4 analogue), levels 1 and 2"
for m in 4 8 16; do
  "$BIN" millisort --local "$m" --records-per-rank 7000 --levels 1,2 --runs 11 --reduction 4 \
    --payload "$PAYLOAD" --json "$OUT/phases-$m.json" | tee "$OUT/phases-$m.txt"
done

echo "== baselines (local sort alone; ideal distributed sort, spec §8.3.10)"
"$EX/baseline" 840000 8 | tee "$OUT/baseline.txt"

echo "== partitioning alone, one vs two levels (Fig 6 analogue)"
"$EX/partition_scaling" 1000 10 | tee "$OUT/partition_scaling.md"

echo "== partition excess (Table 7)"
"$EX/excess" "${EXCESS_RUNS:-200}" | tee "$OUT/excess.md"

echo "== best configuration per budget"
python3 - "$OUT" $RANKS <<'PY'
import json, sys, os
out, ranks = sys.argv[1], sys.argv[2:]
best = {}
for m in ranks:
    p = os.path.join(out, f"budget-{m}.json")
    if not os.path.exists(p):
        continue
    for r in json.load(open(p)):
        b = r["budget_ms"]
        if b not in best or r["records"] > best[b]["records"]:
            best[b] = r
print("| budget ms | records | ranks | records/rank | median ms | records/ms/core | excess |")
print("|---|---|---|---|---|---|---|")
for b in sorted(best):
    r = best[b]
    print(f"| {b:g} | {r['records']} | {r['ranks']} | {r['records_per_rank']} | {r['wall_ms']:.2f} | {r['records_per_ms_per_core']:.0f} | {100*r['partition_excess']:.1f}% |")
PY
