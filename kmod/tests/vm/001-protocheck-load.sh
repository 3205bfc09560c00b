#!/bin/bash
# The shared protocol code (trs/include/trs/, trs/common/) runs as kernel
# code: load kmod/protocheck as built by tests/host/kernel-build.sh; its init
# self-tests IMM and connect-request round trips, the heartbeat state
# machine, the receive prologue and an IBNBD message, and fails the load on
# any mismatch.
# TIMEOUT=60
set -euo pipefail
ko=$TB_TOP/build/kcheck/trs_protocheck.ko
# the debug kernel's build (tests/check-debug)
[ "${TB_KERNEL:-}" = debug ] && ko=$TB_TOP/build/kcheck-debug/trs_protocheck.ko
if [ ! -f "$ko" ]; then
	echo "SKIP: $ko not built (run tests/host/kernel-build.sh)"
	exit 77
fi
vm=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
if [ "$vm" != "$(uname -r)" ]; then
	echo "SKIP: module built for $vm, guest runs $(uname -r)"
	exit 77
fi
before=$(dmesg | wc -l)
rc=0
insmod "$ko" || rc=$?
dmesg | tail -n +$((before + 1)) | grep trs_protocheck || true
[ $rc -eq 0 ] || { echo "FAIL: insmod exit $rc"; exit 1; }
rmmod trs_protocheck
dmesg | tail -n +$((before + 1)) |
	grep -q 'trs_protocheck: wire format and common logic OK' ||
	{ echo "FAIL: no success line from the module"; exit 1; }
