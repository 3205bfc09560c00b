#!/usr/bin/env bash
# kmod-install - packaging of the kernel modules:
#  * make -C kmod install INSTALL_MOD_PATH=<tmp> puts the modules Kbuild
#    builds into <tmp>/lib/modules/$KVER/extra and runs depmod -b there:
#    modprobe -d <tmp> resolves each of them (and ibnbd-* to its ibtrs-*);
#  * with DESTDIR the files land under DESTDIR and depmod is skipped;
#  * kmod/dkms.conf names exactly the modules of kmod/Kbuild's obj-m, with
#    PACKAGE_NAME ibtrs, AUTOINSTALL, a MAKE line building against
#    /lib/modules/${kernelver}/build and DEST_MODULE_LOCATION /extra or
#    /updates;
#  * its MAKE line, run in a DKMS-style source tree (dkms.conf at the top,
#    kmod/ and trs/{common,include} below), leaves every module at its
#    BUILT_MODULE_LOCATION (skipped without the guest kernel's headers;
#    KMOD_INSTALL_DKMS_BUILD=0 skips it).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$("$top/experiments/testbed/kver.sh" 2>/dev/null)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "PASS: kmod-install-$1"; }
fail() { echo "FAIL: kmod-install-$1: $2"; fails=$((fails + 1)); }

kbuild_mods=$(sed -n 's/^obj-m[[:space:]]*+=//p' "$top/kmod/Kbuild" | tr ' ' '\n' |
	sed -n 's/\.o$//p' | sort | tr '\n' ' ')
[ -n "$kbuild_mods" ] || { fail kbuild "no obj-m in kmod/Kbuild"; exit 1; }

# dkms.conf, read by bash as dkms does (it sources the file)
if ! out=$(kernelver=KVERSION bash -c '
	set -u
	. "$1"
	echo "PACKAGE_NAME=$PACKAGE_NAME"
	echo "AUTOINSTALL=$AUTOINSTALL"
	echo "MAKE=${MAKE[0]}"
	n=${#BUILT_MODULE_NAME[@]}
	for ((i = 0; i < n; i++)); do
		echo "MOD ${BUILT_MODULE_NAME[$i]} ${BUILT_MODULE_LOCATION[$i]} ${DEST_MODULE_LOCATION[$i]}"
	done' _ "$top/kmod/dkms.conf" 2>&1); then
	fail dkms-conf "does not source: $out"
else
	dkms_mods=$(awk '$1 == "MOD" { print $2 }' <<<"$out" | sort | tr '\n' ' ')
	bad_dest=$(awk '$1 == "MOD" && $4 != "/extra" && $4 != "/updates" { print $2 }' <<<"$out")
	if [ "$dkms_mods" != "$kbuild_mods" ]; then
		fail dkms-conf "modules '$dkms_mods', Kbuild builds '$kbuild_mods'"
	elif ! grep -qx 'PACKAGE_NAME=ibtrs' <<<"$out"; then
		fail dkms-conf "PACKAGE_NAME is not ibtrs"
	elif ! grep -qix 'AUTOINSTALL=yes' <<<"$out"; then
		fail dkms-conf "AUTOINSTALL is not yes"
	elif ! grep -q '^MAKE=.*KDIR=/lib/modules/KVERSION/build' <<<"$out"; then
		fail dkms-conf "MAKE does not build against /lib/modules/\${kernelver}/build"
	elif [ -n "$bad_dest" ]; then
		fail dkms-conf "DEST_MODULE_LOCATION neither /extra nor /updates: $bad_dest"
	else
		pass "dkms-conf (modules: $dkms_mods)"
	fi
fi

if [ -z "$kver" ]; then
	echo "SKIP: kmod-install: no guest kernel version (experiments/testbed/kver.sh)"
	exit $((fails > 0))
fi
missing=
for m in $kbuild_mods; do
	[ -f "$top/build/kmod/$m.ko" ] || missing="$missing $m"
done
if [ -n "$missing" ]; then
	echo "SKIP: kmod-install: modules not built:$missing (make -C kmod)"
else
	# INSTALL_MOD_PATH: files + depmod -b, modprobe finds them
	if make -s -C "$top/kmod" install INSTALL_MOD_PATH="$T/root" >"$T/log" 2>&1; then
		ok=1
		for m in $kbuild_mods; do
			f=$T/root/lib/modules/$kver/extra/$m.ko
			[ -f "$f" ] || { fail install-mod-path "$f missing"; ok=0; continue; }
			mn=${m//-/_}
			if ! dep=$(modprobe -d "$T/root" -S "$kver" --show-depends "$mn" 2>/dev/null) ||
				! grep -q "insmod $f" <<<"$dep"; then
				fail install-mod-path "modprobe does not find $mn: $dep"
				ok=0
			fi
		done
		dep=$(modprobe -d "$T/root" -S "$kver" --show-depends ibnbd_client 2>/dev/null)
		grep -q 'extra/ibtrs-client.ko' <<<"$dep" ||
			{ fail install-mod-path "ibnbd_client does not pull ibtrs_client: $dep"; ok=0; }
		[ $ok = 1 ] && pass "install-mod-path ($(cd "$T/root/lib/modules/$kver" && ls extra | tr '\n' ' ')found by modprobe)"
	else
		fail install-mod-path "$(tail -5 "$T/log")"
	fi
	# DESTDIR: files, depmod skipped
	if make -s -C "$top/kmod" install DESTDIR="$T/dest" >"$T/log" 2>&1; then
		n=$(ls "$T/dest/lib/modules/$kver/extra/"*.ko 2>/dev/null | wc -l)
		if [ "$n" != "$(wc -w <<<"$kbuild_mods")" ]; then
			fail install-destdir "$n modules under DESTDIR"
		elif [ -e "$T/dest/lib/modules/$kver/modules.dep" ] || ! grep -q 'depmod skipped' "$T/log"; then
			fail install-destdir "depmod not skipped: $(cat "$T/log")"
		else
			pass "install-destdir ($n modules, depmod skipped)"
		fi
	else
		fail install-destdir "$(tail -5 "$T/log")"
	fi
fi

# the dkms.conf MAKE line in a DKMS-style tree
if [ "${KMOD_INSTALL_DKMS_BUILD:-1}" = 0 ]; then
	echo "SKIP: kmod-install-dkms-build: KMOD_INSTALL_DKMS_BUILD=0"
elif [ ! -d "/lib/modules/$kver/build" ]; then
	echo "SKIP: kmod-install-dkms-build: no headers at /lib/modules/$kver/build"
else
	s=$T/usr/src/ibtrs-0.1
	mkdir -p "$s/trs"
	cp "$top/kmod/dkms.conf" "$s/"
	cp -r "$top/kmod" "$s/kmod"
	rm -rf "$s/kmod/cli"
	cp -r "$top/trs/common" "$top/trs/include" "$s/trs/"
	mk=$(cd "$s" && kernelver=$kver bash -c '. ./dkms.conf; echo "${MAKE[0]}"' 2>/dev/null)
	if (cd "$s" && kernelver=$kver bash -c '. ./dkms.conf; eval "${MAKE[0]}"') >"$T/dkms.log" 2>&1; then
		ok=1
		while read -r _ m loc _; do
			f=$s/$loc/$m.ko
			[ -f "$f" ] || { fail dkms-build "$loc$m.ko not built"; ok=0; continue; }
			vm=$(modinfo -F vermagic "$f" | cut -d' ' -f1)
			[ "$vm" = "$kver" ] || { fail dkms-build "$m.ko built for '$vm'"; ok=0; }
		done < <(grep '^MOD ' <<<"$out")
		[ $ok = 1 ] && pass "dkms-build ('$mk' in a DKMS tree: every BUILT_MODULE_LOCATION holds its module)"
	else
		fail dkms-build "'$mk' failed: $(grep -E 'error|Error' "$T/dkms.log" | head -5)"
	fi
fi
[ $fails -eq 0 ]
