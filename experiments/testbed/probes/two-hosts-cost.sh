#!/bin/bash
# two-hosts-cost.sh - client-side and server-side instructions per IO, run
# in the client guest of `run --two-hosts --mode icount --profile --paths 1`
# (probes/two-hosts-cost-run.sh drives it). Each guest has its own
# instruction count and profile, so the two sides of one system are
# measured apart: per cell, while fio drives the system from this guest, a
# tb-snap window (experiments/lib/tb-snap.c) opens in each guest and closes
# once that guest's own IO source counted N IOs: here the block device fio
# drives, there the null_blk device the server submits to. Each side's
# per-IO figures are its own window's Δcounter / ΔIOs.
# Systems (SYSTEMS, default "ibnbd nvme_rdma"): ibnbd = our kernel client
# and server modules (FRWR reads + remote invalidation), nvme_rdma = the
# kernel's nvme-rdma host and nvmet-rdma target; both on null_blk, path 1.
# Cells (CELLS): "name:rw:bs:qd:ios". RUNS windows per cell.
set -uo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
raw=$TB_OUT/raw
mkdir -p "$raw"
SYSTEMS=${SYSTEMS:-ibnbd nvme_rdma}
CELLS=${CELLS:-"4k-randread-qd1:randread:4k:1:2000 4k-randwrite-qd1:randwrite:4k:1:2000 4k-randread-qd32:randread:4k:32:8000 4k-randwrite-qd32:randwrite:4k:32:8000"}
RUNS=${RUNS:-3}
kb=$TB_TOP/build/kmod
snap=$TB_TOP/build/experiments/tb-snap
kport=12346
nqn=nqn.2026-11.io.ibtrs:two-hosts
srv=$(tb_nth 1 "$TB_SRV_ADDRS")
clt=$(tb_nth 1 "$TB_CLT_ADDRS")
die() { echo "two-hosts-cost: $*" >&2; exit 1; }
[ -x "$snap" ] || die "$snap not built (make -C experiments/lib)"
[ "${TB_ROLE:-}" = clt ] || die "not the client guest of --two-hosts"

# The server guest: null_blk, the profile's kallsyms after every module is
# loaded, and a tb-snap fed through a FIFO (one process for the boot, so
# its window numbers follow the plugin's).
tb_srv "modprobe null_blk nr_devices=1 queue_mode=2 irqmode=0 gb=16 bs=512 &&
	modprobe rdma_cm && modprobe nvmet-rdma &&
	insmod build/kmod/ibtrs-server.ko port=$kport &&
	insmod build/kmod/ibnbd-server.ko dev_search_path=/dev" || die "server set-up failed"
tb_srv "cfs=/sys/kernel/config/nvmet; sub=\$cfs/subsystems/$nqn
	mkdir -p \$sub/namespaces/1 \$cfs/ports/1 && echo 1 >\$sub/attr_allow_any_host &&
	echo /dev/nullb0 >\$sub/namespaces/1/device_path && echo 1 >\$sub/namespaces/1/enable &&
	echo rdma >\$cfs/ports/1/addr_trtype && echo ipv4 >\$cfs/ports/1/addr_adrfam &&
	echo $srv >\$cfs/ports/1/addr_traddr && echo 4420 >\$cfs/ports/1/addr_trsvcid &&
	ln -s \$sub \$cfs/ports/1/subsystems/$nqn" || die "nvmet set-up failed"
tb_srv "mkdir -p /tb-out/raw && experiments/profiler/guest-dump.sh kallsyms /tb-out/raw/kallsyms.txt &&
	mkfifo /tmp/snap.in && (sleep 100000 >/tmp/snap.in &) &&
	setsid $snap --blk nullb0 --rxe rxe1 </tmp/snap.in >/tmp/snap.out 2>&1 &" ||
	die "server tb-snap failed"
srv_snap() {	# LINE: sent to the server's tb-snap; waits for its answer
	local n t
	n=$(tb_srv "wc -l </tmp/snap.out") || return 1
	tb_srv "echo '$1' >/tmp/snap.in" || return 1
	for ((t = 0; t < 600; t++)); do
		_srv_reply=$(tb_srv "sed -n $((n + 1))p /tmp/snap.out")
		[ -n "$_srv_reply" ] && { [[ $_srv_reply == ok* ]]; return; }
		sleep 0.5
	done
	_srv_reply="err no answer"
	return 1
}
# srv_window CELL N: the server's window of the cell, sent with a 1.5 s
# sleep in front so that it opens after the agent's bash and the agent's
# answer are gone (a command channel's processes must not run inside it);
# srv_window_wait reads its answer (call it only after this guest's window
# closed: polling the agent forks processes in the server guest).
srv_window() {
	_srv_n=$(tb_srv "wc -l </tmp/snap.out") || return 1
	tb_srv "printf 'sleep 1500\nwindow /tb-out/raw/$1.snap $2 120000 blk:nullb0\n' >/tmp/snap.in"
}
srv_window_wait() {
	local t
	sleep 1
	for ((t = 0; t < 600; t++)); do
		_srv_reply=$(tb_srv "sed -n $((_srv_n + 2))p /tmp/snap.out")
		[ -n "$_srv_reply" ] && { [[ $_srv_reply == ok* ]]; return; }
		sleep 0.5
	done
	_srv_reply="err no answer"
	return 1
}

# This guest: both systems' client sides, then kallsyms and tb-snap.
modprobe nvme-rdma && insmod "$kb/ibtrs-client.ko" && insmod "$kb/ibnbd-client.ko" port=$kport ||
	die "client modules"
echo "sessname=cost path=$clt@$srv device_path=nullb0 access_mode=migration" \
	>/sys/class/ibnbd-client/ctl/map_device || die "ibnbd map failed"
nvme connect -t rdma -a "$srv" -s 4420 -n $nqn >/dev/null || die "nvme connect failed"
for ((t = 0; t < 100; t++)); do
	nvme_path=$(ls /sys/block | grep -m1 '^nvme[0-9]*c[0-9]*n1$' || true)
	nvme_head=$(ls /sys/block | grep -m1 '^nvme[0-9]*n1$' || true)
	[ -b /dev/ibnbd0 ] && [ -n "$nvme_path" ] && [ -b "/dev/$nvme_head" ] && break
	sleep 0.1
done
[ -b /dev/ibnbd0 ] && [ -b "/dev/${nvme_head:-none}" ] || die "devices did not appear"
experiments/profiler/guest-dump.sh kallsyms "$raw/kallsyms.txt" || die "kallsyms"
coproc SNAP { exec "$snap" --blk ibnbd0 --rxe rxe1; }
snap_cmd() {
	echo "$1" >&"${SNAP[1]}"
	read -r _reply <&"${SNAP[0]}" || _reply="err tb-snap died"
	[[ $_reply == ok* ]]
}
# IO sources: the block device's own counts (nvme: the path device, the
# multipath head keeps none); for ibnbd also the kernel client's counters.
declare -A dev=([ibnbd]=ibnbd0 [nvme_rdma]=$nvme_head)
declare -A src=([ibnbd]="blk:ibnbd0 kv:/sys/class/ibnbd-client/ctl/devices/ibnbd0/paths"
	[nvme_rdma]="blk:$nvme_path")
: >"$raw/cells.txt"
rc=0
for ((run = 1; run <= RUNS; run++)); do
	for c in $CELLS; do
		IFS=: read -r cname rw bs qd nios <<<"$c"
		for s in $SYSTEMS; do
			cell=$s.$cname.r$run
			tb_log "cell $cell"
			fio --name=cell --filename="/dev/${dev[$s]}" --ioengine=libaio --direct=1 \
				--rw="$rw" --bs="$bs" --iodepth="$qd" --time_based --runtime=600 \
				--norandommap --randrepeat=0 --size=1g >"$raw/$cell.fio" 2>&1 &
			fpid=$!
			sleep 2
			# The server's window holds 10 % fewer IOs, so that it
			# closes before this one (they open about together).
			t0=$(date +%s%N)
			srv_window "$cell" $((nios * 9 / 10)) ||
				{ echo "$cell: server window not started"; rc=1; }
			sleep "$(awk -v t=$(( $(date +%s%N) - t0 )) 'BEGIN { s = 1.5 - t / 1e9; print (s > 0 ? s : 0) }')"
			if ! snap_cmd "window $raw/$cell.snap $nios 120000 ${src[$s]}"; then
				echo "$cell: client window: $_reply"
				rc=1
			fi
			snap_cmd "maps $raw/$cell.maps" || { echo "$cell: client maps: $_reply"; rc=1; }
			if ! srv_window_wait; then
				echo "$cell: server window: $_srv_reply"
				rc=1
			fi
			srv_snap "maps /tb-out/raw/$cell.maps" || { echo "$cell: server maps: $_srv_reply"; rc=1; }
			kill -TERM $fpid
			for ((t = 0; t < 300; t++)); do kill -0 $fpid 2>/dev/null || break; sleep 0.1; done
			if kill -0 $fpid 2>/dev/null; then
				echo "$cell: fio did not stop within 30 s of SIGTERM (IO hung?)"
				exit 1
			fi
			wait $fpid
			grep -q "err=[ ]*0" "$raw/$cell.fio" || { echo "$cell: fio failed"; rc=1; }
			echo "$cell $s $cname $run $rw $bs $qd $nios" >>"$raw/cells.txt"
		done
	done
done
echo quit >&"${SNAP[1]}"
tb_srv "echo quit >/tmp/snap.in; sleep 1; pkill -f 'sleep 100000'"
echo "sessname cost; nvme path $nvme_path head $nvme_head" >"$raw/devices.txt"
nvme disconnect -n $nqn >/dev/null
echo normal >/sys/class/ibnbd-client/ctl/devices/ibnbd0/unmap_device
exit $rc
