#!/usr/bin/env bash
# two-hosts.sh - the two-host mode of experiments/testbed/run (do not call
# directly): boots a server guest and a client guest, joined by a
# management link and one link per path (named tbm and tbI in the guests by
# paths.sh, found by MAC), each a QEMU
# dgram socket pair on 127.0.0.1 (nothing on the host's network; a TCP
# backend would add ~22 ms per small frame: testbed/README.md). The client
# runs the command (OUT/clt/cmd), the server its agent (OUT/srv/cmd); when
# the client guest powers off, the server guest is told to stop.
# Args: OUT PATHS TIMEOUT QUIET GUEST_MAIN KERNEL INITRD MODE CPU
set -euo pipefail
out=$1 paths=$2 timeout=$3 quiet=$4 main=$5 kernel=$6 initrd=$7 mode=$8 cpu=$9
mem=${TB_TWO_HOSTS_MEM:-2048}
# Ports: a block of 2 * (paths + 1) UDP ports per run, from the pid, so two
# runs (which the VM lock should prevent anyway) do not share links.
base=$((21000 + ($$ % 400) * 20))
if [ "$mode" = icount ]; then
	accel=(-accel tcg,thread=single -icount shift=0,sleep=off -smp 1)
else
	accel=(-accel tcg,thread=multi -smp 1)
fi
# shellcheck disable=SC2206
cpuarg=(-cpu ${cpu#-cpu })
guest() {	# ROLE SIDE(0 srv, 1 clt) -> qemu command in the array g
	local role=$1 side=$2 i lp rp
	g=(qemu-system-x86_64 "${accel[@]}" "${cpuarg[@]}" -m "$mem"
		-nographic -no-reboot -nodefaults -serial stdio -net none
		-kernel "$kernel" -initrd "$initrd"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot
		-fsdev "local,id=out,path=$out/$role,security_model=none"
		-device virtio-9p-pci,fsdev=out,mount_tag=tbout)
	for ((i = 0; i <= paths; i++)); do
		lp=$((base + 2 * i + side)) rp=$((base + 2 * i + 1 - side))
		g+=(-netdev "dgram,id=n$i,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp"
			-device "virtio-net-pci,netdev=n$i,mac=$(printf 52:54:00:10:%02x:%02x "$i" "$side")")
	done
	g+=(-append "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic tb_main=$main")
}
start=$(date +%s)
guest srv 0
echo "${g[*]}" >"$out/srv/qemu-cmdline"
rm -f "$out/srv/stop" "$out/srv/rc" "$out/clt/rc"
timeout -k 10 $((timeout + 180)) "${g[@]}" </dev/null >"$out/srv/console.log" 2>&1 &
spid=$!
guest clt 1
echo "${g[*]}" >"$out/clt/qemu-cmdline"
set +e
if [ "$quiet" = 1 ]; then
	timeout -k 10 $((timeout + 120)) "${g[@]}" </dev/null >"$out/clt/console.log" 2>&1
else
	timeout -k 10 $((timeout + 120)) "${g[@]}" </dev/null 2>&1 | tee "$out/clt/console.log"
fi
: >"$out/srv/stop"
for ((t = 0; t < 60; t++)); do
	kill -0 $spid 2>/dev/null || break
	sleep 1
done
kill $spid 2>/dev/null
wait $spid 2>/dev/null
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
