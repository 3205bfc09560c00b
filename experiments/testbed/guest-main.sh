#!/bin/bash
# guest-main.sh - PID 1 of the testbed guest after switch_root.
#
# Mounts the pseudo filesystems, brings up Soft-RoCE paths (paths.sh), runs
# the command stored by the host in /tb-out/cmd with a guest-side timeout,
# writes its exit status to /tb-out/rc and powers the guest off. Never exits
# (PID 1 must not): every path ends in the sysrq power-off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
_poweroff() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}
trap _poweroff EXIT

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# A fresh /tmp; the host's stays reachable at /run/tb-host-tmp, so a
# checkout under the host's /tmp (a CI clone) is bind-mounted back below.
mkdir -p /run/tb-host-tmp
mount --bind /tmp /run/tb-host-tmp
mount -t tmpfs -o size=1g tmpfs /tmp
. /tb-out/env		# TB_* variables written by the host runner
# The debug kernel (run --kernel debug): its modules are not in the host's
# /lib/modules; the staged tree is bind-mounted over a directory made in the
# tmpfs overlay (the host's /lib/modules is never written).
if [ -n "${TB_GUEST_MODULES:-}" ]; then
	gm=$TB_GUEST_MODULES
	case $gm in /tmp/*) gm=/run/tb-host-tmp/${gm#/tmp/} ;; esac
	mkdir -p "/lib/modules/$(uname -r)"
	mount --bind "$gm" "/lib/modules/$(uname -r)" ||
		echo "tb: cannot bind $gm at /lib/modules/$(uname -r)" >&2
fi
modprobe configfs 2>/dev/null; mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
hostname tb-guest
echo 1 >/proc/sys/kernel/sysrq
ulimit -l unlimited
ulimit -n 65536

export TB_OUT=/tb-out
case $TB_TOP in
/tmp/*)
	mkdir -p "$TB_TOP"
	mount --bind "/run/tb-host-tmp/${TB_TOP#/tmp/}" "$TB_TOP"
	;;
esac
cd "$TB_TOP" || _poweroff

{
	dbg=""; [ "${TB_KERNEL:-}" = debug ] && dbg=" (debug kernel)"
	echo "tb: guest $(uname -r)$dbg, $(nproc) vCPU, mode $TB_MODE, $TB_PATHS path(s)"
	if [ -n "${TB_ROLE:-}" ]; then
		up=(up-nic "$TB_PATHS" "$TB_ROLE")	# two-host mode
	else
		up=(up "$TB_PATHS")
	fi
	if ! "$TB_TOP/experiments/testbed/paths.sh" "${up[@]}"; then
		echo "tb: path setup failed"
		echo 125 >/tb-out/rc
		exit
	fi
} 2>&1 | tee -a /tb-out/output.log
[ -f /tb-out/rc ] && exit
. /run/tb-paths.env
export TB_PATHS TB_SRV_ADDRS TB_CLT_ADDRS TB_RXE_DEVS TB_NETDEVS
[ -n "${TB_ROLE:-}" ] && export TB_ROLE TB_SRV_AGENT

set +e
timeout -k 5 "$TB_TIMEOUT" bash -c '. /tb-out/cmd' 2>&1 | tee -a /tb-out/output.log
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "tb: guest command timed out after $TB_TIMEOUT s" | tee -a /tb-out/output.log
dmesg >/tb-out/dmesg.log 2>/dev/null
echo "$rc" >/tb-out/rc
exit
