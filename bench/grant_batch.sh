#!/usr/bin/env bash
# Grant batching on real links (docs/transport.md, "Grant batching"): GRPF with K = 1, 2, 4, 8
# beside MADD and Hadoop-5 in the same `shuffle run` (runs interleaved, so a change in the
# machine's load hits every row alike), on netns hosts with jumbo frames, 1 MiB average messages.
# Needs root. Each run goes under `chrt -f 10` so other builds on the machine disturb it less.
#
#   bash bench/grant_batch.sh [OUT_DIR]
#   RANKS="16" RATE=100mbit SKEW=0.9 BATCHES=1,2,4,8 REPEAT=3 bash bench/grant_batch.sh OUT
#
# Writes OUT_DIR/batch-RANKS-SKEW.json and a line per row into OUT_DIR/summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/bench-grant-batch}
mkdir -p "$out"
ck=${CK:-target/release/coflowkit}
[ -x "$ck" ] || cargo build --release --locked -q -p coflowkit
rate=${RATE:-100mbit}
skew=${SKEW:-0.9}
log() { echo "$*" | tee -a "$out/summary.txt"; }
for m in ${RANKS:-16 8}; do
  r=$rate
  [ "$m" -le 8 ] && r=${RATE8:-200mbit}
  mat=$out/matrix-$m-$skew.txt
  $ck shuffle gen --nodes "$m" --skew "$skew" --avg-packets 1000 --seed 1 -o "$mat" 2>/dev/null
  f=$out/batch-$m-$skew.json
  chrt -f 10 $ck shuffle run --local "$m" --netns --rate "$r" --payload 8800 --matrix "$mat" \
    --avg-bytes 1m --protocol grpf,madd,hadoop-5 --grant-batch "${BATCHES:-1,2,4,8}" \
    --repeat "${REPEAT:-3}" --json "$f" >/dev/null
  log "$(date -u +%H:%M) ranks=$m rate=$r skew=$skew load=$(cut -d' ' -f1-3 /proc/loadavg)"
  jq -r '.results[] | "  \(.protocol) completion_ms=\(.completion_s*1000|round) runs_ms=\([.completion_runs_s[]*1000|round]) optimality=\(.optimality*1000|round/1000) packets=\(.packets) resent=\(.retransmissions) ok=\(.checksums_ok) sim_ms=\(.sim_completion_s // 0 |.*1000|round)"' "$f" |
    tee -a "$out/summary.txt"
done
