#!/bin/sh
# kver.sh - print the kernel version that linux-image-amd64 installed (the
# guest kernel), e.g. 6.1.0-57-amd64. Never hard-coded: it drifts with Debian.
set -eu
v=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	tr ',' '\n' | sed -n 's/^ *linux-image-\([^ ]*\).*/\1/p' | head -n1)
if [ -z "$v" ] || [ ! -e "/boot/vmlinuz-$v" ]; then
	# Fall back to the newest installed -amd64 kernel.
	v=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -n1)
fi
[ -n "$v" ] || { echo "kver: no linux-image-amd64 installed" >&2; exit 1; }
echo "$v"
