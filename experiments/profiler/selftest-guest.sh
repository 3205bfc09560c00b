#!/usr/bin/env bash
# selftest-guest.sh - the guest half of the profiler test
# (tests/host/profiler-vm.sh): dumps kallsyms (which also gives the plugin
# the kernel's NIC ranges, tbnic), runs busyloop with ITERATIONS (default
# 50000000; window 0), then callsplit (window 1) with the NIC ranges of its
# own "NIC" library (a user rule added to components.conf in
# $TB_OUT/callsplit.conf). Results in $TB_OUT: kallsyms, nic.ranges,
# maps.0, maps.1, busyloop.out, callsplit.out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
n=${1:-50000000}
ni=${CALLSPLIT_NIC_ITERS:-3000000} si=${CALLSPLIT_SW_ITERS:-2000000} len=${CALLSPLIT_LEN:-65536}
"$here/guest-dump.sh" kallsyms "$TB_OUT/kallsyms"
"$top/build/profiler/busyloop" "$n" "$here/guest-dump.sh maps $TB_OUT/maps.0" | tee "$TB_OUT/busyloop.out"
# libcallsplit-nic.so is the NIC; callsplit itself (helper_spin) a shared
# helper, like libc (memcpy).
{ cat "$here/components.conf"; echo "user libcallsplit-nic.so nic"
  echo "user callsplit callsplit-helper"; echo "shared callsplit-helper"; } >"$TB_OUT/callsplit.conf"
# SCHED_FIFO: a preemption in the middle of nic_entry's call would be a
# context switch, which discards the call's attribution (tbprof.c); the
# timer and other interrupts still land in it.
rt=()
command -v chrt >/dev/null && rt=(chrt -f 10)
"${rt[@]}" "$top/build/profiler/callsplit" "$ni" "$si" "$len" \
	"$top/build/profiler/tbnic --kallsyms $TB_OUT/kallsyms --rules $TB_OUT/callsplit.conf --out $TB_OUT/nic.ranges --pid %d" \
	"$here/guest-dump.sh maps $TB_OUT/maps.1" | tee "$TB_OUT/callsplit.out"
