#!/usr/bin/env bash
# deps.sh - install, idempotently, every Debian package the project needs.
#
# Usage: experiments/testbed/deps.sh            (as root; no-op when all is present)
#        DEPS_OPTIONAL=0 experiments/testbed/deps.sh   skip linux-source-6.1 (rnbd baseline)
#
# Also adds a deb-src entry (same URIs/suites/keyring as debian.sources) so that
# `apt-get source fio` works for the fio engine build.
set -euo pipefail

PKGS=(
	build-essential pkg-config git python3 dpkg-dev
	qemu-system-x86 linux-image-amd64 linux-headers-amd64
	busybox-static cpio kmod iproute2
	rdma-core ibverbs-providers ibverbs-utils libibverbs-dev librdmacm-dev rdmacm-utils
	perftest fio nvme-cli liburing-dev sparse
	# tests/fuzz: clang; libFuzzer and clang's sanitizer runtimes are in
	# libclang-rt-dev, only recommended by clang (deps install without);
	# llvm: llvm-cov and llvm-profdata for tests/fuzz/coverage.sh
	clang libclang-rt-dev llvm
	gnuplot python3-matplotlib
)
# Upstream RNBD/RTRS baseline is built from this source tarball.
OPT_PKGS=(linux-source-6.1 bison flex libelf-dev libssl-dev bc)

missing=()
want=("${PKGS[@]}")
[ "${DEPS_OPTIONAL:-1}" = 1 ] && want+=("${OPT_PKGS[@]}")
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

src=/etc/apt/sources.list.d/debian-src.sources
need_src=0
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
   ! grep -qs '^deb-src' /etc/apt/sources.list; then
	need_src=1
fi

# The profiler's QEMU plugin header (fetch-header.sh) counts as a dependency.
hdr=$(dirname "$0")/../../build/profiler/include/qemu-plugin.h
# (only root can fetch it; a user without it just gets no profiler).
if [ ${#missing[@]} -eq 0 ] && [ $need_src = 0 ] && { [ -s "$hdr" ] || [ "$(id -u)" != 0 ]; }; then
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root: $0" >&2
	exit 1
fi

if [ $need_src = 1 ]; then
	main=/etc/apt/sources.list.d/debian.sources
	if [ -f "$main" ]; then
		# Copy every stanza of debian.sources with Types: deb-src.
		sed -e 's/^Types:.*/Types: deb-src/' "$main" >"$src"
	else
		grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
			>/etc/apt/sources.list.d/debian-src.list
	fi
	echo "deps: added deb-src entries" >&2
fi

export DEBIAN_FRONTEND=noninteractive
echo "deps: installing ${missing[*]:-(none)}" >&2
apt-get update -qq
[ ${#missing[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Not fatal: without the header only the profiler plugin is skipped.
"$(dirname "$0")/../profiler/fetch-header.sh" || echo "deps: no QEMU plugin header: the profiler will be skipped" >&2
echo "deps: done" >&2
