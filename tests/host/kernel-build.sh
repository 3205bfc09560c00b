#!/usr/bin/env bash
# kernel-build - the shared wire headers (trs/include/trs/: trs_proto.h,
# trs_imm.h, ibnbd_proto.h, proto_compat.h) and the pure protocol logic
# (trs/common/*.c, ibnbd_proto.c included) compile unchanged as a kernel
# module against the guest kernel's headers (kmod/protocheck/ links them
# in), sparse finds nothing in them (make C=2: __le types are __bitwise, so
# a missing byte-order conversion is a warning), and on a 32-bit target they
# need no 64-bit division helpers (__udivdi3 & co. do not exist in a
# 32-bit kernel). kmod/tests/vm/001-protocheck-load.sh loads it in the guest.
#
# Prints one PASS/FAIL/SKIP line per check; exit status 1 on any FAIL.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
rc=0
b=$top/build/kcheck
rm -rf "$b" && mkdir -p "$b/trs"

_fail() {
	echo "FAIL: $1"
	rc=1
}

# The module: every shared source, protocheck.c exercising them at load.
_module() {
	local kver kdir objs sp
	kver=$("$top/experiments/testbed/kver.sh" 2>/dev/null)
	kdir=/lib/modules/$kver/build
	if [ -z "$kver" ] || [ ! -d "$kdir" ]; then
		echo "SKIP: kernel-build: no headers for the guest kernel ($kdir); run make deps"
		echo "SKIP: kernel-sparse: no headers for the guest kernel"
		return
	fi
	cp "$top/kmod/protocheck/protocheck.c" "$top"/trs/common/*.c \
		"$top/trs/common/trs_common.h" "$b/"
	cp "$top"/trs/include/trs/*.h "$b/trs/"
	objs=$(cd "$b" && ls *.c | sed 's/\.c$/.o/' | tr '\n' ' ')
	cat >"$b/Kbuild" <<-EOT
	obj-m := trs_protocheck.o
	trs_protocheck-y := $objs
	ccflags-y := -I\$(src) -I\$(src)/trs -Werror
	EOT
	if ! command -v sparse >/dev/null; then
		sp=
	else
		sp=C=2
	fi
	if make -C "$kdir" M="$b" $sp modules >"$b/build.log" 2>&1 &&
	   [ -f "$b/trs_protocheck.ko" ]; then
		echo "PASS: kernel-build: trs/include/trs + trs/common build as a $kver module"
	else
		_fail "kernel-build: kernel build failed:"
		grep -E 'error|warning' "$b/build.log" | head -20
		return
	fi
	if [ -z "$sp" ]; then
		echo "SKIP: kernel-sparse: sparse not installed (make deps)"
		return
	fi
	# Our files only: the kernel's own headers are not ours to fix.
	if grep -E "^$b/[^:]+:[0-9]+:[0-9]+: (warning|error):" "$b/build.log" \
		>"$b/sparse.log"; then
		_fail "kernel-sparse: sparse warnings in the shared code:"
		sed "s|$b/||" "$b/sparse.log" | head -20
	else
		echo "PASS: kernel-sparse: sparse (make C=2) finds nothing in the shared code"
	fi
}

# 32-bit: compile trs/common for i386 (freestanding; errno values from the
# kernel's uapi header) and look for libgcc's 64-bit division helpers.
_div64() {
	local f o bad=
	mkdir -p "$b/m32/fake"
	echo '#include <asm-generic/errno.h>' >"$b/m32/fake/errno.h"
	for f in "$top"/trs/common/*.c; do
		o=$b/m32/$(basename "$f" .c).o
		if ! gcc -m32 -ffreestanding -O2 -c -I"$b/m32/fake" \
			-I"$top/trs/include" -I"$top/trs/common" \
			-I/usr/include/x86_64-linux-gnu "$f" -o "$o" 2>"$b/m32/err"; then
			echo "SKIP: kernel-div64: cannot compile for -m32 here:" \
				"$(head -1 "$b/m32/err")"
			return
		fi
		if nm -u "$o" | grep -qE '__(u?divdi3|u?moddi3|u?divmoddi4)$'; then
			bad+=" $(basename "$f"):$(nm -u "$o" | grep -oE '__(u?divdi3|u?moddi3|u?divmoddi4)$' | tr '\n' ' ')"
		fi
	done
	if [ -n "$bad" ]; then
		_fail "kernel-div64: 64-bit division needs libgcc on 32-bit kernels:$bad"
	else
		echo "PASS: kernel-div64: trs/common needs no 64-bit division helpers on i386"
	fi
}

_module
_div64
exit $rc
