#!/bin/bash
# guest.sh - E01 inside the testbed guest.
# Usage (from run.sh): guest.sh icount|mttcg RAWDIR
# Sets up every system once, then runs runs x workloads x systems cells,
# interleaved (the system order reverses every run), then an unmeasured pass
# that counts work requests per IO with kprobes. The mttcg phase also runs
# perftest per message size.
set -euo pipefail
phase=$1
EX_RAW=$2
mkdir -p "$EX_RAW"
here=$TB_TOP/experiments
. "$here/testbed/guest-lib.sh"
. "$here/lib/systems.sh"
. "$here/lib/measure.sh"
. "$TB_OUT/params.env"	# effective parameters written by run.sh
EX_RNBD_DIR=$(cat "$TB_OUT/rnbd-dir")
EX_TIME_WINDOW_MS=$E01_TIME_WINDOW_MS

if [ "$phase" = icount ]; then
	systems=$E01_SYSTEMS
	workloads=$E01_WORKLOADS ramp=$E01_ICOUNT_RAMP_MS maxms=$E01_ICOUNT_MAX_MS
	runs=$E01_RUNS winios=$E01_WINDOW_IOS
else
	systems=$E01_MTTCG_SYSTEMS
	workloads=$E01_MTTCG_WORKLOADS ramp=$E01_MTTCG_RAMP_MS maxms=$E01_MTTCG_MAX_MS
	runs=${E01_MTTCG_RUNS:-$E01_RUNS} winios=${E01_MTTCG_WINDOW_IOS:-$E01_WINDOW_IOS}
fi
# IOs per window for a workload: "bs:qd:ios ..." entries of $3 (default
# E01_WINDOW_IOS); a lone number (older settings) applies to every workload.
_win_ios() {	# BS QD [LIST]
	local e list=${3:-$E01_WINDOW_IOS}
	for e in $list; do
		[[ $e == "$1:$2:"* ]] && { echo "${e##*:}"; return; }
		[[ $e =~ ^[0-9]+$ ]] && { echo "$e"; return; }
	done
	echo "$E01_WINDOW_IOS_DEFAULT"
}

for s in $systems; do
	tb_log "setting up $s"
	"sys_${s}_up"
done
for s in $systems; do echo "$s $(sys_${s}_desc)"; done >"$EX_RAW/systems.txt"
ex_snap_open
{
	echo "nvme_dev ${EX_NVME_DEV:-}"
	echo "rnbd1_dev ${EX_RNBD1_DEV:-} rnbd2_dev ${EX_RNBD2_DEV:-}"
	echo "cpus $(nproc)"
	grep -m1 'model name' /proc/cpuinfo
	grep -A1 -m1 'crc32c\?$' /proc/crypto | head -4 || true
	grep -m1 '^flags' /proc/cpuinfo | grep -ow 'pclmulqdq' || echo "no pclmulqdq"
	for d in $TB_RXE_DEVS; do echo "$d mtu $(cat /sys/class/infiniband/$d/ports/1/active_mtu)"; done
	for d in $TB_NETDEVS; do echo "$d netdev_mtu $(cat /sys/class/net/$d/mtu)"; done
	for f in /sys/class/rtrs-client/*/mpath_policy; do
		[ -e "$f" ] && echo "$f $(cat "$f")"
	done
	echo "profile ${TB_PROFILE:-0}"
} >"$EX_RAW/guest-info.txt" 2>&1

if [ "$phase" = mttcg ]; then
	# Raw verbs limits per message size (busy-polling perftest over path 1).
	# perftest 4.5 has no RDMA WRITE WITH IMM test; SEND is the closest
	# (it also consumes a receive at the responder).
	srv=$(tb_nth 1 "$TB_SRV_ADDRS")
	port=18600
	for size in $E01_PERFTEST_SIZES; do
		for t in ib_write_bw ib_send_bw ib_write_lat ib_send_lat; do
			port=$((port + 1))
			tb_log "perftest $t -s $size"
			timeout 60 $t -R -d rxe1 -p $port -s "$size" -D "$E01_PERFTEST_SECONDS" >/dev/null 2>&1 &
			spid=$!
			sleep 1
			timeout 60 $t -R -d rxe1 -p $port -s "$size" -D "$E01_PERFTEST_SECONDS" "$srv" \
				>"$EX_RAW/perftest_${t}_s${size}.txt" 2>&1 ||
				echo "perftest $t -s $size failed" >&2
			wait $spid || true	# not a bare wait: the ibtrs daemon is a child too
		done
	done
fi

# A failed cell is recorded (and its raw files set aside) and the suite goes
# on; run.sh reports failed cells and exits non-zero after summarizing.
_cell_failed() {
	echo "$1" >>"$EX_RAW/failed-cells.txt"
	for f in "$EX_RAW/$1".*; do [ -e "$f" ] && mv "$f" "$f.failed"; done
	tb_log "cell $1 FAILED"
}
set -- $systems
nsys=$#
ncells=$(( $(echo $workloads | wc -w) * nsys * runs ))
k=0
for ((run = 1; run <= runs; run++)); do
	order=$systems
	[ $((run % 2)) = 0 ] && order=$(echo $systems | tr ' ' '\n' | tac | tr '\n' ' ')
	for w in $workloads; do
		IFS=: read -r wname rw bs qd jobs <<<"$w"
		for s in $order; do
			k=$((k + 1))
			# numjobs > 1 with the fio engine: every job opens the
			# device in a session of its own, and the server refuses
			# the second rw open; left out until the jobs share one
			if [ "${jobs:-1}" -gt 1 ] && [[ $s == ibtrs* ]]; then
				tb_log "[$phase $k/$ncells] skip $s $wname: numjobs $jobs (one session per job)"
				continue
			fi
			tb_log "[$phase $k/$ncells] run $run $s $wname bs=$bs qd=$qd"
			ex_cell_clean "${s}__${wname}__${bs}__${qd}__r${run}" "$s" "$rw" "$bs" "$qd" \
				"$ramp" "$(_win_ios "$bs" "$qd" "$winios")" "$maxms" "${jobs:-1}" ||
				_cell_failed "${s}__${wname}__${bs}__${qd}__r${run}"
		done
	done
done

if [ "$phase" = icount ] && ex_wr_count_on; then
	for w in $workloads; do
		IFS=: read -r wname rw bs qd jobs <<<"$w"
		[ "$bs" = 4k ] || continue	# WRs per IO: the 4k workloads suffice
		for s in $systems; do
			# kprobes see kernel QPs only: skip local and userspace systems
			case $s in nullblk | ibtrs* | fio_rdma) continue ;; esac
			for ((run = 1; run <= ${E01_WR_RUNS:-1}; run++)); do
				tb_log "[wr count $run] $s $wname"
				ex_cell_clean "${s}__${wname}__${bs}__${qd}__wr$run" "$s" "$rw" "$bs" "$qd" 100 \
					"$(_win_ios "$bs" "$qd" "$E01_WR_WINDOW_IOS")" "$maxms" "${jobs:-1}" ||
					_cell_failed "${s}__${wname}__${bs}__${qd}__wr$run"
			done
		done
	done
	ex_wr_count_off
fi
ex_snap_close
[ -n "${_ibtrs_srv_pid:-}" ] && kill "$_ibtrs_srv_pid" 2>/dev/null
tb_log "E01 $phase done"
