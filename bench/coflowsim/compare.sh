#!/bin/sh
# Compare `coflowkit sim --model coflowsim` with the reference CoflowSim, coflow by coflow.
#
# usage: bench/coflowsim/compare.sh REF_DIR [TRACE] [COFLOWKIT]
#   REF_DIR   holds the reference's stdout per algorithm, named FAIR.txt, PFP.txt, FIFO.txt,
#             SCF.txt, NCF.txt, LCF.txt, SEBF.txt, DARK.txt (any subset), each made by
#             `java -cp <coflowsim classes> coflowsim.CoflowSim ALGO COFLOW-BENCHMARK TRACE`
#             (github.com/coflow/coflowsim b61f209; build it yourself, outside this tree).
#   TRACE     the trace both ran on [data/traces/FB2010-1Hr-150-0.txt]
#   COFLOWKIT the binary [target/release/coflowkit]
#
# Per algorithm it prints the coflows compared, how many match exactly, the relative error
# |ours - ref| / ref of the CCT (max, p50, p95, p99), both average CCTs, and our wall time.
# The reference's lines are `JOB-<id> start finish mappers reducers bytes maxbytes CCT ...`
# with times in its ms; ours are cct_s x 1000. Exit status 1 if a coflow is missing on a side.
set -eu
REF=${1:?usage: compare.sh REF_DIR [TRACE] [COFLOWKIT]}
TRACE=${2:-data/traces/FB2010-1Hr-150-0.txt}
BIN=${3:-target/release/coflowkit}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

printf '%-5s %-5s %7s %7s %10s %10s %10s %10s %12s %12s %7s\n' \
  algo ours coflows exact max_err p50_err p95_err p99_err ref_avg_s our_avg_s wall_s
status=0
for A in FAIR PFP FIFO SCF NCF LCF SEBF DARK; do
  [ -f "$REF/$A.txt" ] || continue
  case $A in
    LCF) S=tcf ;;
    DARK) S=aalo ;;
    *) S=$(echo "$A" | tr 'A-Z' 'a-z') ;;
  esac
  "$BIN" sim --model coflowsim -s "$S" --trace "$TRACE" --csv "$TMP/$S.csv" > "$TMP/$S.out"
  wall=$(awk -v s="$S" '$1 == s { print $NF }' "$TMP/$S.out")
  # reference: id -> CCT ms (its last line is the sum, without a JOB- name)
  awk '$1 ~ /^JOB-/ { sub(/^JOB-/, "", $1); print $1, $8 }' "$REF/$A.txt" | sort > "$TMP/ref"
  awk -F, -v s="$S" 'NR > 1 && $1 == s { printf "%s %.6f\n", $2, $5 * 1000 }' "$TMP/$S.csv" | sort > "$TMP/ours"
  if [ "$(cut -d' ' -f1 "$TMP/ref")" != "$(cut -d' ' -f1 "$TMP/ours")" ]; then
    echo "$A: the two runs do not list the same coflows" >&2
    status=1
    continue
  fi
  join "$TMP/ref" "$TMP/ours" | awk '{
      e = ($2 == $3) ? 0 : ($2 > 0 ? ($3 - $2) / $2 : 1); if (e < 0) e = -e
      print e, $2, $3 }' | sort -g > "$TMP/err"
  awk -v a="$A" -v s="$S" -v w="$wall" '
    { e[NR] = $1; r += $2; o += $3; if ($1 == 0) x++ }
    function q(p,  i) { i = int(p * NR + 0.999999); if (i < 1) i = 1; return e[i] }
    END { printf "%-5s %-5s %7d %7d %10.6f %10.6f %10.6f %10.6f %12.3f %12.3f %7s\n",
          a, s, NR, x, e[NR], q(0.5), q(0.95), q(0.99), r / NR / 1000, o / NR / 1000, w }' "$TMP/err"
done
exit $status
