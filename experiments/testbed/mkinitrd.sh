#!/usr/bin/env bash
# mkinitrd.sh - build the testbed guest's tiny initramfs.
#
# Usage: mkinitrd.sh KVER OUTFILE [MODBASE]
# Contents: busybox-static, the virtio/9p/overlay modules of kernel KVER with
# their dependencies (modprobe --show-depends, in load order), and
# experiments/testbed/init. The init mounts the host's / read-only over 9p,
# puts a tmpfs overlay on top and switch_roots into it (see init).
# MODBASE: the modules are in MODBASE/lib/modules/KVER instead of
# /lib/modules/KVER (the debug kernel's staging dir, debug-kernel.sh). A
# module built into the kernel is left out (the debug kernel has them all
# built in: its initramfs loads nothing).
set -euo pipefail
kver=$1 out=$2 base=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
mods="virtio_pci 9pnet_virtio 9p overlay"
[ -z "$base" ] || [ -d "$base/lib/modules/$kver" ] ||
	{ echo "mkinitrd: no $base/lib/modules/$kver" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,mnt,lib/modules,newroot}
cp /bin/busybox "$tmp/bin/busybox"
: >"$tmp/lib/modules/order"
for m in $mods; do
	deps=$(modprobe ${base:+-d "$base"} -S "$kver" --show-depends "$m") ||
		{ echo "mkinitrd: module $m not found for $kver${base:+ in $base}" >&2; exit 1; }
	while read -r what f _; do
		case $what in
		builtin) ;;	# in the kernel image: nothing to load
		insmod)
			grep -qxF "$(basename "$f")" "$tmp/lib/modules/order" && continue
			cp "$f" "$tmp/lib/modules/"
			basename "$f" >>"$tmp/lib/modules/order" ;;
		*) echo "mkinitrd: $m: unexpected modprobe output '$what $f'" >&2; exit 1 ;;
		esac
	done <<<"$deps"
done
cp "$here/init" "$tmp/init"
chmod +x "$tmp/init"
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
