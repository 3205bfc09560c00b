#!/usr/bin/env bash
# debug-kernel.sh - build the testbed's debug kernel once per machine (cached).
#
# Usage: experiments/testbed/debug-kernel.sh [--print-release | --force]
#   (no option)      build if needed, print where the result is
#   --print-release  print the cached kernel's release string, build nothing
#                    (exit 1 when there is no cached build)
#   --force          rebuild even when the stamp matches (incremental)
#
# Source: Debian's /usr/src/linux-source-6.1.tar.xz (package linux-source-6.1,
# the same patched source as the guest's Debian kernel). Configuration:
# `make x86_64_defconfig`, merged with debug-kernel.config (kconfig's
# merge_config.sh), `make olddefconfig`; then every line of the fragment is
# checked in .config (an option whose dependency is missing is dropped
# silently by kconfig: that fails the build here, loudly).
# Changes to the source, debug-kernel-patches/*.patch (applied in order):
#   0001 FAULT_INJECTION_STACKTRACE_FILTER allowed on x86_64 (6.1 excludes
#        it; 6.2 dropped the exclusion; the ORC unwinder is reliable);
#   0002 the stacktrace filter is checked before space/interval, and the
#        interval counter is in debugfs ("count"): "fail the Nth allocation
#        made by this module" (kmod/tests/vm/040-kmod-failslab.sh).
#
# Cache: ${TB_DEBUG_KERNEL_DIR:-<top>/build/debug-kernel}:
#   src/                     the kernel tree, built in place (KDIR for
#                            out-of-tree modules: make -C kmod KDIR=.../src)
#   bzImage, release         the kernel image and its release string
#   modules/lib/modules/REL  modules_install staging dir (depmod run)
#   stamp                    source package version, patches' and fragment's
#                            hashes; a different stamp means a rebuild (a new
#                            source package or patch set: a fresh tree; a new
#                            fragment: the tree is reconfigured and rebuilt
#                            incrementally)
#   build.log, build-seconds the last build's log and duration
# Builds run under `nice -n 19` with -j$(nproc) (TB_DEBUG_KERNEL_JOBS).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/experiments/testbed
frag=$here/debug-kernel.config
patches=$here/debug-kernel-patches
tarball=${TB_DEBUG_KERNEL_SRC:-/usr/src/linux-source-6.1.tar.xz}
pkg=linux-source-6.1
dir=${TB_DEBUG_KERNEL_DIR:-$top/build/debug-kernel}
jobs=${TB_DEBUG_KERNEL_JOBS:-$(nproc)}
# Bump when this script's way of building changes the result.
recipe=1

die() { echo "debug-kernel: $*" >&2; exit 1; }

force=0
case ${1:-} in
"") ;;
--print-release)
	[ -s "$dir/release" ] && [ -s "$dir/bzImage" ] || die "no debug kernel built in $dir (run $0)"
	cat "$dir/release"
	exit 0 ;;
--force) force=1 ;;
-h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
*) die "unknown option '$1' (see --help)" ;;
esac

[ -r "$tarball" ] || die "$tarball missing (apt-get install $pkg)"
[ -r "$frag" ] || die "$frag missing"
srcver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || srcver=unknown
[ "$srcver" != unknown ] || srcver="file:$(stat -c %s.%Y "$tarball")"
phash=$(cat "$patches"/*.patch | sha256sum | cut -c1-16)
want="recipe=$recipe src=$pkg/$srcver patches=$phash frag=$(sha256sum <"$frag" | cut -c1-16)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# One build at a time (the lead and a helper may share the cache).
exec 9>"$dir/.lock"
if ! flock -n 9; then
	echo "debug-kernel: another build holds $dir/.lock; waiting" >&2
	flock 9
fi

if [ $force = 0 ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$want" ] &&
	[ -s "$dir/bzImage" ] && [ -s "$dir/release" ] &&
	[ -d "$dir/modules/lib/modules/$(cat "$dir/release")" ]; then
	echo "debug-kernel: cached: $dir (release $(cat "$dir/release"), built in $(cat "$dir/build-seconds" 2>/dev/null || echo ?)s)"
	exit 0
fi

start=$(date +%s)
log=$dir/build.log
: >"$log"
echo "debug-kernel: building in $dir (log: $log; $jobs jobs, nice 19)"
# A failed step must name itself and show the end of the log.
step() {	# step WHAT CMD...
	local what=$1
	shift
	echo "debug-kernel: $what" | tee -a "$log"
	if ! "$@" >>"$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "$what failed (full log: $log)"
	fi
}

# 1. The source tree: fresh when the source package (or the recipe) changed.
src=$dir/src
srcstamp="recipe=$recipe src=$pkg/$srcver patches=$phash"
if [ "$(cat "$src/.tb-source" 2>/dev/null)" != "$srcstamp" ]; then
	rm -rf "$src" "$dir/src.tmp" "$dir/stamp"
	mkdir -p "$dir/src.tmp"
	step "extracting $tarball" tar -xJf "$tarball" -C "$dir/src.tmp" --strip-components=1
	for p in "$patches"/*.patch; do
		step "patch $(basename "$p")" patch -d "$dir/src.tmp" -p1 --forward --batch -i "$p"
	done
	echo "$srcstamp" >"$dir/src.tmp/.tb-source"
	mv "$dir/src.tmp" "$src"
fi
cd "$src"

# 2. Configuration.
# LOCALVERSION set (empty) in the environment: no "+" appended to the release.
export LOCALVERSION=
export KBUILD_BUILD_USER=tb KBUILD_BUILD_HOST=testbed
step "make x86_64_defconfig" make x86_64_defconfig
step "merge_config.sh debug-kernel.config" scripts/kconfig/merge_config.sh -m .config "$frag"
step "make olddefconfig" make olddefconfig
bad=0
while IFS= read -r line; do
	if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
		opt=${BASH_REMATCH[1]}
		got=$(grep -E "^$opt=|^# $opt is not set\$" .config || true)
		if [ "$got" != "$line" ]; then
			echo "debug-kernel: $opt: asked '$line', .config has '${got:-nothing (option absent)}'" >&2
			bad=1
		fi
	elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
		opt=${BASH_REMATCH[1]}
		if got=$(grep -E "^$opt=" .config); then
			echo "debug-kernel: $opt: asked not set, .config has '$got'" >&2
			bad=1
		fi
	fi
done <"$frag"
[ $bad = 0 ] || die "the configuration does not have every option of $frag (above); a dependency is missing: fix the fragment"
echo "debug-kernel: every option of $(basename "$frag") is in .config" | tee -a "$log"

# 3. Build and stage.
step "make bzImage modules (-j$jobs)" nice -n 19 make -j"$jobs" bzImage modules
rel=$(make -s kernelrelease)
[ -n "$rel" ] || die "no kernel release from make kernelrelease"
rm -rf "$dir/modules.tmp"
step "make modules_install (staging)" nice -n 19 make INSTALL_MOD_PATH="$dir/modules.tmp" INSTALL_MOD_STRIP=1 modules_install
# The staging tree's build/source links point into src/ (kept).
rm -rf "$dir/modules"
mv "$dir/modules.tmp" "$dir/modules"
cp arch/x86/boot/bzImage "$dir/bzImage.tmp"
mv "$dir/bzImage.tmp" "$dir/bzImage"
echo "$rel" >"$dir/release"
secs=$(( $(date +%s) - start ))
echo "$secs" >"$dir/build-seconds"
echo "$want" >"$dir/stamp"
echo "debug-kernel: built $rel in ${secs}s ($((secs / 60)) min): $dir"
