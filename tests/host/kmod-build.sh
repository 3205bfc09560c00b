#!/usr/bin/env bash
# kmod-build - the kernel modules of kmod/ (ibtrs-server, ibnbd-server and,
# as they land, the client modules) build from a clean build folder against
# the guest kernel's headers with W=1 and sparse (C=2) without a warning or
# error, and checkpatch.pl --strict finds nothing in their sources.
# Leaves build/kmod/ built for the VM tests (kmod/tests/vm/).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$("$top/experiments/testbed/kver.sh" 2>/dev/null)
if [ -z "$kver" ] || [ ! -d "/lib/modules/$kver/build" ]; then
	echo "SKIP: kmod-build: no headers for the guest kernel; run make deps"
	echo "SKIP: kmod-checkpatch: no headers for the guest kernel"
	exit 0
fi
log=$top/build/kmod-build.log
make -s -C "$top/kmod" clean >/dev/null 2>&1
if make -j"$(nproc)" -C "$top/kmod" W=1 C=2 >"$log" 2>&1 && ! grep -qE 'warning:|error:' "$log"; then
	echo "PASS: kmod-build: W=1 C=2 (sparse) clean: $(cd "$top/build/kmod" && ls ./*.ko | tr '\n' ' ')"
else
	echo "FAIL: kmod-build: see $log"
	grep -E 'warning:|error:' "$log" | head -20
fi
out=$(make -s -C "$top/kmod" checkpatch 2>&1)
if [ -z "$(grep -E '(ERROR|WARNING|CHECK)' <<<"$out")" ]; then
	echo "PASS: kmod-checkpatch: checkpatch.pl --strict clean"
else
	echo "FAIL: kmod-checkpatch:"
	head -20 <<<"$out"
fi
