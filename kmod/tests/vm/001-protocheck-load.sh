#!/bin/bash
# 001-protocheck-load: the kernel build of the shared protocol code
# (build/kcheck/trs_protocheck.ko, made by tests/host/kernel-build.sh) loads
# in the guest kernel and its self-test (IMM + connection request round
# trip through the same encoders/validators the library uses) passes.
# TIMEOUT=60
ko=$TB_TOP/build/kcheck/trs_protocheck.ko
[ -f "$ko" ] || { echo "SKIP: $ko not built (tests/host/kernel-build.sh)"; exit 77; }
insmod "$ko" || { echo "FAIL: insmod failed"; dmesg | tail -5; exit 1; }
dmesg | grep -q 'trs_protocheck: wire format and common logic OK' ||
	{ echo "FAIL: no OK line"; dmesg | tail -5; exit 1; }
rmmod trs_protocheck
echo "protocheck module loaded, self-test passed, unloaded"
