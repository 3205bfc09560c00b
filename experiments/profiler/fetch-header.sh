#!/usr/bin/env bash
# fetch-header.sh - get QEMU's TCG plugin header (include/qemu/qemu-plugin.h).
#
# Usage: experiments/profiler/fetch-header.sh
#
# Debian ships qemu-system-x86 with plugin support (the binary exports the
# qemu_plugin_* API) but packages no header for it, so it is taken from the
# source package of the installed QEMU: `apt-get source --download-only`
# into build/profiler/src, then only that one member is extracted from the
# orig tarball to build/profiler/include/qemu-plugin.h.
# Idempotent: does nothing when the header exists. Needs the deb-src entries
# that experiments/testbed/deps.sh adds (and a current `apt-get update`).
# Exit status 0 when the header is in place, 1 with a message otherwise.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dst=$top/build/profiler/include/qemu-plugin.h
src=$top/build/profiler/src
member=include/qemu/qemu-plugin.h

[ -s "$dst" ] && exit 0

die() {
	echo "fetch-header: $*" >&2
	exit 1
}

command -v apt-get >/dev/null || die "apt-get not found: cannot fetch QEMU's source"
mkdir -p "$src" "$(dirname "$dst")"

# The source version that built the installed binary: the header must match
# the plugin API the binary implements.
ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null || true)
spec=qemu
[ -n "$ver" ] && spec=qemu=$ver

tarball() {
	ls "$src"/qemu_*.orig.tar.* 2>/dev/null | head -n1
}

if [ -z "$(tarball)" ]; then
	echo "fetch-header: downloading the $spec source package" >&2
	if ! (cd "$src" && apt-get source --download-only -qq "$spec" >/dev/null 2>"$src/apt.log"); then
		# An exact version may be gone from the mirror; any qemu source of
		# the same API level (7.2 here) still has the right header.
		if [ "$spec" = qemu ] ||
		   ! (cd "$src" && apt-get source --download-only -qq qemu >/dev/null 2>>"$src/apt.log"); then
			sed 's/^/fetch-header:   /' "$src/apt.log" >&2
			die "apt-get source qemu failed (deb-src entries missing, or no 'apt-get update'? run experiments/testbed/deps.sh as root)"
		fi
	fi
fi
tb=$(tarball)
[ -n "$tb" ] || die "no qemu_*.orig.tar.* in $src after the download"

# Members are prefixed with the top folder (qemu-7.2+dfsg/...): find the
# exact name, then extract only it.
name=$(tar -tf "$tb" --wildcards "*/$member" 2>/dev/null | head -n1 || true)
[ -n "$name" ] || die "$member not found in $tb"
tar -xOf "$tb" "$name" >"$dst.tmp"
[ -s "$dst.tmp" ] || { rm -f "$dst.tmp"; die "extracting $name from $tb gave nothing"; }
mv "$dst.tmp" "$dst"
echo "fetch-header: $dst (from $(basename "$tb"))" >&2
