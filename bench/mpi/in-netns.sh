#!/bin/sh
# Runs one MPI rank inside its host's network namespace of `coflowkit testbed` (host i = rank i).
# mpirun starts this in the root namespace; PMIx must listen on the unshaped control bridge so the
# rank can still reach it (bench/transport.sh sets PMIX_MCA_ptl_tcp_remote_connections and
# PMIX_MCA_ptl_tcp_if_include), and MPI's TCP transport uses the shaped data subnet.
set -eu
rank=${OMPI_COMM_WORLD_RANK:?not started by Open MPI}
ns=$(echo "$COFLOWKIT_NETNS" | cut -d, -f$((rank + 1)))
exec nsenter --net=/run/netns/"$ns" "$@"
