#!/usr/bin/env bash
# run.sh - E02-mr-inval: what memory registration and invalidation cost.
# Every system in its secure mode and its unsafe one on the same null_blk
# device: nvme-rdma (register_always Y/N), upstream rnbd (always_invalidate
# Y/N), our kernel client, and the fio engine (mw+remote, mw+local,
# global+none) against the userspace daemon and the kernel server. fio 4k
# randread/randwrite QD1/QD32 and 128k sequential read/write, >= 3 runs, one
# icount boot, profiled: software and total instructions per IO, work
# requests and packets per IO. Parameters: params.env.
#
# Usage: experiments/E02-mr-inval/run.sh [icount] [mttcg]   (default: icount)
# Writes results/E02-mr-inval/<stamp>-<git>/ and appends results/summary.csv.
exec "$(dirname "$0")/../lib/run-cells.sh" E02-mr-inval E02 "$@"
