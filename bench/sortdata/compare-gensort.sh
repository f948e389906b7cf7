#!/usr/bin/env bash
# Compare `coflowkit sortdata gen|check` with reference gensort/valsort 1.5 binaries, byte for byte.
# Builds and downloads nothing: bring your own reference binaries (the gensort 1.5 release,
# single-threaded build) and a built coflowkit.
#
#   bench/sortdata/compare-gensort.sh GENSORT VALSORT [COFLOWKIT] [RECORDS]
#
# For each of the four record kinds and many starting records (0, small, 2^32, 2^60 and 2^64
# boundaries where gensort's skew index changes, 2^100, 2^128 - 1 wrapping to 0): the generated
# files and the `-c` checksums must be identical. Then valsort and `sortdata check` must print
# the same lines and exit status on unsorted, sorted, duplicated and partitioned files, and write
# the same summary files; a truncated file must be refused by both. Needs python3 to sort
# records. Prints one line per comparison and a total; exits non-zero on any difference.
set -euo pipefail

GENSORT=${1:?usage: $0 GENSORT VALSORT [COFLOWKIT] [RECORDS]}
VALSORT=${2:?usage: $0 GENSORT VALSORT [COFLOWKIT] [RECORDS]}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
COFLOWKIT=${3:-$HERE/target/release/coflowkit}
N=${4:-10000}
for b in "$GENSORT" "$VALSORT" "$COFLOWKIT"; do
    [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 2; }
done
GENSORT=$(realpath "$GENSORT"); VALSORT=$(realpath "$VALSORT"); COFLOWKIT=$(realpath "$COFLOWKIT")
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cd "$T"
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "same  $*"; }
bad() { fail=$((fail + 1)); echo "DIFF  $*"; }

flags_of() { case $1 in binary) echo "";; ascii) echo "-a";; skewed) echo "-s";; ascii-skewed) echo "-a -s";; esac; }
ours_of() { case $1 in binary) echo "";; ascii) echo "--ascii";; skewed) echo "--skewed";; ascii-skewed) echo "--ascii --skewed";; esac; }

OFFSETS="0 1 7 999 1000000 4294967303 1152921504606846000 1152921504606846975 \
9223372036854775807 18446744073709546000 18446744073709551615 \
1267650600228229401496703205376 21267647932558653966460912964485513216 \
340282366920938463463374607431768211455"

# 1. Generation: files and checksums.
for kind in binary ascii skewed ascii-skewed; do
    for off in $OFFSETS; do
        # shellcheck disable=SC2046
        "$GENSORT" $(flags_of $kind) -c -b"$off" "$N" ref.dat 2> ref.sum
        # shellcheck disable=SC2046
        "$COFLOWKIT" sortdata gen $(ours_of $kind) --checksum --offset "$off" --records "$N" -o ours.dat 2> ours.sum
        if cmp -s ref.dat ours.dat && cmp -s ref.sum ours.sum; then
            ok "gen $kind -b$off $N (checksum $(cat ref.sum))"
        else
            bad "gen $kind -b$off $N"
        fi
    done
done

# Sort records by their 10-byte key (stable), with python3.
sort_records() {
    python3 - "$1" "$2" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
r = [d[i:i + 100] for i in range(0, len(d), 100)]
r.sort(key=lambda x: x[:10])
open(sys.argv[2], 'wb').write(b''.join(r))
PY
}

# Both checkers on one input: the same stderr, exit status and summary file.
check_same() {
    local what=$1 file=$2
    set +e
    "$VALSORT" -o ref.vsum "$file" 2> ref.out; local rc_ref=$?
    "$COFLOWKIT" sortdata check --summary ours.vsum "$file" 2> ours.out; local rc_ours=$?
    set -e
    if cmp -s ref.out ours.out && [ $rc_ref = $rc_ours ] && cmp -s ref.vsum ours.vsum; then
        ok "check $what (exit $rc_ref: $(tail -n 1 ref.out))"
    else
        bad "check $what: exit $rc_ref vs $rc_ours"; diff ref.out ours.out || true
    fi
}

# 2. Checking: unsorted, sorted, duplicated, partitioned, truncated.
for kind in binary ascii skewed; do
    # shellcheck disable=SC2046
    "$GENSORT" $(flags_of $kind) -b12345 "$N" in.dat
    check_same "$kind unsorted" in.dat
    sort_records in.dat sorted.dat
    check_same "$kind sorted" sorted.dat
    cat in.dat in.dat > twice.dat
    sort_records twice.dat dup.dat
    check_same "$kind sorted with every key twice" dup.dat
    # Partitions: split the sorted file in 4, summarise each, check the summaries together;
    # then swap two partitions so the boundaries are out of order.
    per=$(( N / 4 * 100 ))
    split -b "$per" -d -a 1 sorted.dat part.
    for order in "0 1 2 3" "0 2 1 3"; do
        rm -f ref.all ours.all
        set +e
        for p in $order; do
            [ -f "part.$p" ] || continue
            "$VALSORT" -q -o "ref.$p.vsum" "part.$p"
            "$COFLOWKIT" sortdata check -q --summary "ours.$p.vsum" "part.$p"
            cat "ref.$p.vsum" >> ref.all
        done
        "$VALSORT" -s ref.all 2> ref.out; rc_ref=$?
        # shellcheck disable=SC2046
        "$COFLOWKIT" sortdata check --summaries $(for p in $order; do echo "ours.$p.vsum"; done) 2> ours.out; rc_ours=$?
        set -e
        same_sums=yes
        for p in $order; do cmp -s "ref.$p.vsum" "ours.$p.vsum" || same_sums=no; done
        if cmp -s ref.out ours.out && [ $rc_ref = $rc_ours ] && [ $same_sums = yes ]; then
            ok "check $kind partitions ($order) (exit $rc_ref: $(tail -n 1 ref.out))"
        else
            bad "check $kind partitions ($order)"; diff ref.out ours.out || true
        fi
    done
    # A truncated file: both refuse it with a non-zero exit.
    head -c $(( N * 100 - 37 )) sorted.dat > cut.dat
    set +e
    "$VALSORT" cut.dat 2> /dev/null; rc_ref=$?
    "$COFLOWKIT" sortdata check cut.dat 2> ours.out; rc_ours=$?
    set -e
    if [ $rc_ref != 0 ] && [ $rc_ours != 0 ]; then
        ok "check $kind truncated refused: $(cat ours.out)"
    else
        bad "check $kind truncated: exit $rc_ref vs $rc_ours"
    fi
done

echo "compare-gensort: $pass same, $fail different"
[ $fail = 0 ]
