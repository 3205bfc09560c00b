#!/usr/bin/env bash
# two-hosts.sh - the two-host mode of experiments/testbed/run (do not call
# directly): boots a server guest and a client guest, joined by a
# management link and one link per path (named tbm and tbI in the guests by
# paths.sh, found by MAC), each a QEMU
# dgram socket pair on 127.0.0.1 (nothing on the host's network; a TCP
# backend would add ~22 ms per small frame: testbed/README.md). The client
# runs the command (OUT/clt/cmd), the server its agent (OUT/srv/cmd); when
# the client guest powers off, the server guest is told to stop.
#
# While they run, the host serves the client guest's requests for things
# only the host can do (tb_host in guest-lib.sh; files OUT/clt/hostreq/
# N.req -> N.rsp, through the guest's read-write output share):
#   link I up|down [srv|clt|both]   QMP set_link on the NIC of path I (the
#                                    guest sees carrier loss: the cable pulled)
#   kill srv                         the server guest's QEMU killed (a crash)
#   start srv                        the server guest booted again
# The server guest has a disk, /dev/vda: a sparse file OUT/srv/disk.img
# (TB_SRV_DISK_MB, default 128) that survives its crashes.
# Args: OUT PATHS TIMEOUT QUIET GUEST_MAIN KERNEL INITRD MODE CPU PLUGIN
# (PLUGIN: the profiler's .so or "", loaded in both guests, each writing
# OUT/ROLE/profile.raw).
set -euo pipefail
out=$1 paths=$2 timeout=$3 quiet=$4 main=$5 kernel=$6 initrd=$7 mode=$8 cpu=$9 plugin=${10:-}
here=$(cd "$(dirname "$0")" && pwd)
mem=${TB_TWO_HOSTS_MEM:-2048}
# Ports: a block of 2 * (paths + 1) UDP ports per run, from the pid, so two
# runs (which the VM lock should prevent anyway) do not share links.
base=$((21000 + ($$ % 400) * 20))
if [ "$mode" = icount ]; then
	# sleep=on: an idle guest's clock follows real time. With sleep=off
	# an idle guest jumps to its next timer at once, so a guest waiting
	# for the other one would see its heartbeat timeouts expire in
	# microseconds of real time. Busy, one instruction is one ns.
	accel=(-accel tcg,thread=single -icount shift=0,sleep=on -smp 1)
else
	accel=(-accel tcg,thread=multi -smp 1)
fi
# shellcheck disable=SC2206
cpuarg=(-cpu ${cpu#-cpu })
qmpdir=$(mktemp -d /tmp/tb-qmp.XXXXXX)	# unix socket paths are short
guest() {	# ROLE SIDE(0 srv, 1 clt) -> qemu command in the array g
	local role=$1 side=$2 i lp rp
	g=(qemu-system-x86_64 "${accel[@]}" "${cpuarg[@]}" -m "$mem"
		-nographic -no-reboot -nodefaults -serial stdio -net none
		-qmp "unix:$qmpdir/$role.sock,server=on,wait=off"
		-kernel "$kernel" -initrd "$initrd"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot
		-fsdev "local,id=out,path=$out/$role,security_model=none"
		-device virtio-9p-pci,fsdev=out,mount_tag=tbout)
	[ -n "$plugin" ] && g+=(-plugin "file=$plugin,out=$out/$role/profile.raw")
	# The server guest's disk (/dev/vda, virtio_blk): a sparse file on the
	# host, so what was written survives the guest's crash (tb_host kill).
	[ "$role" = srv ] && g+=(-drive "file=$out/srv/disk.img,if=virtio,format=raw,cache=writethrough")
	for ((i = 0; i <= paths; i++)); do
		lp=$((base + 2 * i + side)) rp=$((base + 2 * i + 1 - side))
		g+=(-netdev "dgram,id=n$i,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp"
			-device "virtio-net-pci,id=nic$i,netdev=n$i,mac=$(printf 52:54:00:10:%02x:%02x "$i" "$side")")
	done
	# TB_GUEST_APPEND: more kernel parameters (e.g. slub_debug=FZPU)
	g+=(-append "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic ${TB_GUEST_APPEND:+$TB_GUEST_APPEND }tb_main=$main")
}
boots=0
start_srv() {	# the server guest, in the background (spid)
	boots=$((boots + 1))
	rm -f "$out/srv/stop" "$out/srv/rc"
	timeout -k 10 $((timeout + 180)) "${sg[@]}" </dev/null >>"$out/srv/console.log" 2>&1 &
	spid=$!
}
# host_req REQUEST -> its output; status 0 on success
host_req() {
	local a b c
	read -r a b c <<<"$1"
	case $a in
	link)
		[[ $b =~ ^[1-9]$ ]] && [ "$b" -le "$paths" ] || { echo "no path '$b'"; return 1; }
		local up side=${c#* } roles
		case ${c%% *} in up) up=true ;; down) up=false ;; *) echo "link: up or down"; return 1 ;; esac
		[ "$side" = "${c%% *}" ] && side=both
		case $side in srv|clt) roles=$side ;; both) roles="srv clt" ;; *) echo "link: srv, clt or both"; return 1 ;; esac
		for r in $roles; do
			"$here/qmp.py" "$qmpdir/$r.sock" set_link "{\"name\": \"nic$b\", \"up\": $up}" || return 1
		done
		echo "link $b $c: done"
		;;
	kill)
		[ "$b" = srv ] || { echo "kill: only srv"; return 1; }
		pkill -KILL -f "$qmpdir/srv.sock" || { echo "no server guest"; return 1; }
		wait "$spid" 2>/dev/null
		echo "server guest killed"
		;;
	start)
		[ "$b" = srv ] || { echo "start: only srv"; return 1; }
		kill -0 "$spid" 2>/dev/null && { echo "the server guest runs"; return 1; }
		echo "---- server guest boot $((boots + 1)) ----" >>"$out/srv/console.log"
		start_srv
		echo "server guest started (boot $boots)"
		;;
	*) echo "unknown request '$a'"; return 1 ;;
	esac
}
host_loop() {	# serves OUT/clt/hostreq/*.req until the client guest ends
	local q=$out/clt/hostreq f rsp
	mkdir -p "$q"
	while kill -0 "$cpid" 2>/dev/null; do
		for f in "$q"/*.req; do
			[ -e "$f" ] || continue
			rsp=${f%.req}.rsp
			# not in a subshell: "start" sets spid for the end's wait
			host_req "$(cat "$f")" >"$rsp.out" 2>&1
			{ echo $(($? != 0)); cat "$rsp.out"; } >"$rsp.tmp"
			rm -f "$f" "$rsp.out"
			mv "$rsp.tmp" "$rsp"
		done
		sleep 0.1
	done
}
start=$(date +%s)
rm -f "$out/srv/disk.img"
truncate -s "${TB_SRV_DISK_MB:-128}M" "$out/srv/disk.img"
guest srv 0
sg=("${g[@]}")
echo "${sg[*]}" >"$out/srv/qemu-cmdline"
rm -f "$out/clt/rc" "$out/srv/console.log"
start_srv
guest clt 1
echo "${g[*]}" >"$out/clt/qemu-cmdline"
set +e
if [ "$quiet" = 1 ]; then
	timeout -k 10 $((timeout + 120)) "${g[@]}" </dev/null >"$out/clt/console.log" 2>&1 &
else
	timeout -k 10 $((timeout + 120)) "${g[@]}" </dev/null > >(tee "$out/clt/console.log") 2>&1 &
fi
cpid=$!
host_loop
wait $cpid
: >"$out/srv/stop"
for ((t = 0; t < 60; t++)); do
	kill -0 $spid 2>/dev/null || break
	sleep 1
done
kill $spid 2>/dev/null
wait $spid 2>/dev/null
rm -rf "$qmpdir"
set -e
wall=$(($(date +%s) - start))
if [ -s "$out/clt/rc" ]; then
	rc=$(cat "$out/clt/rc")
else
	echo "run: client guest did not report a status (crash or timeout after ${wall}s); see $out/clt/console.log" >&2
	rc=125
fi
[ -s "$out/srv/rc" ] || echo "run: server guest did not stop cleanly; see $out/srv/console.log" >&2
echo "run: two hosts: exit $rc after ${wall}s; output in $out/clt and $out/srv" >&2
exit "$rc"
