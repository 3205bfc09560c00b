#!/usr/bin/env bash
# rnbd-build.sh - build upstream RNBD/RTRS (the merged descendant of IBNBD/
# IBTRS) as out-of-tree modules from Debian's linux-source-6.1, for use as a
# baseline. Nothing of that code is committed: it is extracted into build/.
#
# Usage: experiments/baselines/rnbd-build.sh [KVER]
# Prints the folder holding rtrs/*.ko and rnbd/*.ko. Cached per KVER.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:-$("$top/experiments/testbed/kver.sh")}
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)
[ -n "$tarball" ] || { echo "rnbd-build: linux-source-6.1 not installed (make deps)" >&2; exit 1; }
dir=$top/build/rnbd/$kver
if [ -f "$dir/rnbd/rnbd-client.ko" ] && [ "$dir/stamp" -nt "$tarball" ]; then
	echo "$dir"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
tar -xf "$tarball" -C "$dir" \
	--transform='s|^linux-source-6.1/drivers/infiniband/ulp/||;s|^linux-source-6.1/drivers/block/||' \
	linux-source-6.1/drivers/infiniband/ulp/rtrs linux-source-6.1/drivers/block/rnbd
# One out-of-tree build with both folders, so rnbd resolves rtrs's symbols.
cat >"$dir/Kbuild" <<'EOT'
subdir-ccflags-y += -I$(src)/rtrs
obj-y += rtrs/ rnbd/
EOT
cfg="CONFIG_INFINIBAND_RTRS=m CONFIG_INFINIBAND_RTRS_CLIENT=m CONFIG_INFINIBAND_RTRS_SERVER=m
     CONFIG_BLK_DEV_RNBD=y CONFIG_BLK_DEV_RNBD_CLIENT=m CONFIG_BLK_DEV_RNBD_SERVER=m"
# shellcheck disable=SC2086
make -s -C "/lib/modules/$kver/build" M="$dir" $cfg -j"$(nproc)" modules >"$dir/build.log" 2>&1 ||
	{ tail -20 "$dir/build.log" >&2; echo "rnbd-build: build failed" >&2; exit 1; }
touch "$dir/stamp"
echo "$dir"
