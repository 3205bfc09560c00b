#!/usr/bin/env bash
# run.sh - E03-paths, part 1: what an extra path costs per IO. Our kernel
# client, the fio engine, nvme-rdma native multipath and upstream rnbd over
# 1, 2 and 4 paths of one guest, each under its multipath policies, on the
# same null_blk device: fio 4k randread/randwrite QD32, >= 3 runs, one
# icount boot, profiled: software and total instructions per IO, work
# requests per IO. Parameters: params.env.
#
# Usage: experiments/E03-paths/run.sh [icount] [mttcg]   (default: icount)
# Writes results/E03-paths/<stamp>-<git>/ and appends results/summary.csv.
exec "$(dirname "$0")/../lib/run-cells.sh" E03-paths E03 "$@"
