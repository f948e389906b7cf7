#!/usr/bin/env bash
# The numbers of issue 16 (README "Real shuffles"): real shuffles and collectives over UDP on
# this machine, beside Open MPI on the same hosts and matrices. Needs root (network namespaces)
# and installs Open MPI from Debian when missing. Long: run it alone, nothing else on the machine.
#
#   bash bench/transport.sh [OUT_DIR] [STAGE ...]     stages: capacity shuffle loss collectives sim
#   RANKS="16" COLL_RANKS="32" RATE=200mbit bash bench/transport.sh ...   (defaults: 8 16, 8 32;
#   rate 200mbit for 8 ranks, 50mbit for 16)
#
# Every stage writes JSON into OUT_DIR (default target/bench-transport) and a line per result
# into OUT_DIR/summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/bench-transport}
shift || true
stages=${*:-capacity shuffle loss collectives sim}
mkdir -p "$out"

if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null || ! command -v jq >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev jq >/dev/null
fi
cargo build --release --locked -q
ck=target/release/coflowkit
mpi=$out/mpi_baseline
mpicc -O2 -o "$mpi" bench/mpi/mpi_baseline.c -lm
mpirun_() { mpirun --allow-run-as-root --oversubscribe "$@"; }
# MPI inside the testbed's namespaces: PMIx over the unshaped control bridge, data over TCP on
# the shaped subnet (see bench/mpi/in-netns.sh).
mpi_netns() { # HOSTS RATE MTU -- ARGS...
  local hosts=$1 rate=$2 mtu=$3; shift 4
  $ck testbed --hosts "$hosts" --rate "$rate" --mtu "$mtu" -- bash -c '
    export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=$COFLOWKIT_CONTROL_BRIDGE
    exec mpirun --allow-run-as-root --oversubscribe -np '"$hosts"' --mca btl tcp,self \
      --mca btl_tcp_if_include $COFLOWKIT_DATA_SUBNET --mca oob_tcp_if_include $COFLOWKIT_CONTROL_BRIDGE \
      bench/mpi/in-netns.sh "$@"' mpi "$@"
}
log() { echo "$*" | tee -a "$out/summary.txt"; }
# The per-rank rate at which the machine is not the bottleneck (README "Real shuffles"): 16 ranks
# on two cores need 50 Mbit/s; RATE overrides it for every rank count.
rate_for() { case $1 in 16) echo "${RATE:-50mbit}" ;; *) echo "${RATE:-200mbit}" ;; esac; }
payload=8800   # jumbo frames (MTU 9000) on the veths: the per-datagram cost is the bottleneck
mtu=9000

for stage in $stages; do case $stage in
capacity)
  # The per-rank rate at which this machine is not itself the bottleneck: GRPF on a uniform
  # matrix (skewness 0) reaches >= 90 % of the bound.
  for m in ${RANKS:-8 16}; do for rate in 100mbit 200mbit 400mbit 800mbit; do
    f=$out/capacity-$m-$rate.json
    $ck shuffle run --local $m --netns --rate $rate --payload $payload --skew 0 --avg-bytes 1m \
      --protocol grpf --repeat 3 --json "$f" >/dev/null
    log "capacity ranks=$m rate=$rate $(jq -r '.results[] | "\(.protocol) optimality=\(.optimality)"' "$f")"
  done; done ;;
shuffle)
  for m in ${RANKS:-8 16}; do rate=$(rate_for $m); for avg in 64k 1m; do for skew in 0 0.5 0.9; do
    tag=$m-$avg-$skew; mat=$out/matrix-$tag.txt
    $ck shuffle gen --nodes $m --skew $skew --avg-packets 1000 --seed 1 -o "$mat" 2>/dev/null
    $ck shuffle run --local $m --netns --rate $rate --payload $payload --matrix "$mat" --avg-bytes $avg \
      --protocol grpf,hadoop-5,madd,lockstep,high-entropy --repeat 3 --json "$out/shuffle-$tag.json" >/dev/null
    bytes=$(numfmt --from=iec "${avg^^}")
    mpi_netns $m $rate $mtu -- "$(realpath "$mpi")" alltoallv "$(realpath "$mat")" "$bytes" 3 > "$out/mpi-$tag.json"
    log "shuffle ranks=$m avg=$avg skew=$skew $(jq -r '[.results[] | "\(.protocol)=\(.optimality|.*1000|round/1000)"] | join(" ")' "$out/shuffle-$tag.json") mpi_s=$(jq -r '.completion_s|sort|.[length/2|floor]' "$out/mpi-$tag.json")"
  done; done; done ;;
loss)
  for m in ${RANKS:-8 16}; do rate=$(rate_for $m)
    $ck shuffle run --local $m --netns --rate $rate --payload $payload --skew 0.5 --avg-bytes 1m \
      --drop 0.02 --protocol grpf --repeat 3 --json "$out/loss-$m.json" >/dev/null
    log "loss2% ranks=$m $(jq -r '.results[] | "\(.protocol) optimality=\(.optimality) retransmissions=\(.retransmissions) ok=\(.checksums_ok)"' "$out/loss-$m.json")"
  done ;;
collectives)
  for m in ${COLL_RANKS:-8 32}; do
    $ck collective bench --local $m --op bcast,gather,allgather,barrier --bytes 100 --json "$out/coll-$m.json" >/dev/null
    log "collectives ranks=$m $(jq -r '[.results[] | "\(.op)=\(.p50_us)us"] | join(" ")' "$out/coll-$m.json")"
    for op in bcast gather allgather barrier; do
      r=$(mpirun_ -np $m --mca btl tcp,self "$mpi" coll $op 100 1000)
      log "mpi-tcp ranks=$m $op p50_us=$(echo "$r" | jq .p50_us)"
    done
  done ;;
sim)
  echo "sim: see docs/transport.md (sim against real)"; ;;
esac; done
