#!/usr/bin/env bash
# run.sh - E01-baseline: raw verbs limits (perftest), nvme-rdma, upstream
# RNBD (1 and 2 paths) and local null_blk, same null_blk device, fio 4k
# randread/randwrite QD1/QD32 and 128k sequential read/write, >= 3 runs,
# interleaved. Two boots: icount (the primary, deterministic measure:
# instructions per IO) and multi-threaded TCG (near real time; perftest and
# the noise comparison). Parameters: params.env; the machinery:
# experiments/lib/run-cells.sh (host) and guest-cells.sh (guest).
#
# Usage: experiments/E01-baseline/run.sh [icount] [mttcg]   (default: both)
# Writes results/E01-baseline/<stamp>-<git>/ and appends results/summary.csv.
exec "$(dirname "$0")/../lib/run-cells.sh" E01-baseline E01 "$@"
