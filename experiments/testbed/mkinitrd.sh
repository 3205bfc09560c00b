#!/usr/bin/env bash
# mkinitrd.sh - build the testbed guest's tiny initramfs.
#
# Usage: mkinitrd.sh KVER OUTFILE
# Contents: busybox-static, the virtio/9p/overlay modules of kernel KVER, and
# experiments/testbed/init. The init mounts the host's / read-only over 9p,
# puts a tmpfs overlay on top and switch_roots into it (see init).
set -euo pipefail
kver=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mods="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
      netfs fscache 9pnet 9pnet_virtio 9p overlay"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,mnt,lib/modules,newroot}
cp /bin/busybox "$tmp/bin/busybox"
for m in $mods; do
	f=$(modinfo -k "$kver" -n "$m") || { echo "mkinitrd: module $m not found for $kver" >&2; exit 1; }
	cp "$f" "$tmp/lib/modules/"
	echo "$(basename "$f")" >>"$tmp/lib/modules/order"
done
cp "$here/init" "$tmp/init"
chmod +x "$tmp/init"
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
