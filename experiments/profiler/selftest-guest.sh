#!/usr/bin/env bash
# selftest-guest.sh - the guest half of the profiler test
# (tests/host/profiler-vm.sh): dumps kallsyms, runs busyloop with ITERATIONS
# (default 50000000) whose window's maps are dumped right after its STOP.
# Results in $TB_OUT: kallsyms, maps.0, busyloop.out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
n=${1:-50000000}
"$here/guest-dump.sh" kallsyms "$TB_OUT/kallsyms"
"$top/build/profiler/busyloop" "$n" "$here/guest-dump.sh maps $TB_OUT/maps.0" | tee "$TB_OUT/busyloop.out"
