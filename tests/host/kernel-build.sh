#!/usr/bin/env bash
# kernel-build - the shared wire headers (trs/include/trs/) and the pure
# protocol logic (trs/common/) compile unchanged as a kernel module against
# the guest kernel's headers (kmod/protocheck/ links them in). Loading it is
# done in the guest by kmod/tests/vm when the modules exist.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$("$top/experiments/testbed/kver.sh" 2>/dev/null)
kdir=/lib/modules/$kver/build
if [ -z "$kver" ] || [ ! -d "$kdir" ]; then
	echo "SKIP: kernel-build: no headers for the guest kernel ($kdir); run make deps"
	exit 0
fi
b=$top/build/kcheck
rm -rf "$b" && mkdir -p "$b/trs"
cp "$top/kmod/protocheck/protocheck.c" "$top"/trs/common/*.c "$top/trs/common/trs_common.h" "$b/"
cp "$top"/trs/include/trs/*.h "$b/trs/"
objs=$(cd "$b" && ls *.c | sed 's/\.c$/.o/' | tr '\n' ' ')
cat >"$b/Kbuild" <<EOT
obj-m := trs_protocheck.o
trs_protocheck-y := $objs
ccflags-y := -I\$(src) -I\$(src)/trs -Werror
EOT
if make -C "$kdir" M="$b" modules >"$b/build.log" 2>&1 && [ -f "$b/trs_protocheck.ko" ]; then
	echo "PASS: kernel-build: trs/include + trs/common build as a $kver module"
else
	echo "FAIL: kernel-build: kernel build failed:"; grep -E 'error|warning' "$b/build.log" | head -20
fi
