#!/bin/bash
# guest-cells.sh - a cell experiment inside the testbed guest (started by
# experiments/lib/run-cells.sh). Usage: guest-cells.sh icount|mttcg RAWDIR
# Sets up every system once, then runs runs x workloads x systems cells,
# interleaved (the system order reverses every run), then an unmeasured pass
# that counts work requests per IO with kprobes. The mttcg phase also runs
# perftest per message size when the experiment lists sizes.
# Parameters: $TB_OUT/params.env, written by run-cells.sh: the experiment's
# PREFIX_* values and EX_PREFIX (E01, E02, ...).
set -euo pipefail
phase=$1
EX_RAW=$2
mkdir -p "$EX_RAW"
here=$TB_TOP/experiments
. "$here/testbed/guest-lib.sh"
. "$here/lib/systems.sh"
. "$here/lib/measure.sh"
. "$TB_OUT/params.env"	# effective parameters written by run-cells.sh
_pv() { local v="${EX_PREFIX}_$1"; echo "${!v:-${2:-}}"; }	# _pv NAME [DEFAULT]
EX_RNBD_DIR=$(cat "$TB_OUT/rnbd-dir")
EX_TIME_WINDOW_MS=$(_pv TIME_WINDOW_MS 400)

if [ "$phase" = icount ]; then
	systems=$(_pv SYSTEMS)
	workloads=$(_pv WORKLOADS) ramp=$(_pv ICOUNT_RAMP_MS 150) maxms=$(_pv ICOUNT_MAX_MS 10000)
	runs=$(_pv RUNS 2) winios=$(_pv WINDOW_IOS)
else
	systems=$(_pv MTTCG_SYSTEMS)
	workloads=$(_pv MTTCG_WORKLOADS) ramp=$(_pv MTTCG_RAMP_MS 500) maxms=$(_pv MTTCG_MAX_MS 20000)
	runs=$(_pv MTTCG_RUNS "$(_pv RUNS 2)") winios=$(_pv MTTCG_WINDOW_IOS "$(_pv WINDOW_IOS)")
fi
# Cell order: "interleaved" (default: per run, per workload, every system;
# the system order reverses every run) or "by-system" (per run, per system,
# every workload: for systems that switch a module parameter in their
# sys_<name>_pre hook, one reload per system and run instead of one per cell).
order_kind=$(_pv ORDER interleaved)
# IOs per window for a workload: "bs:qd:ios ..." entries of $3 (default
# PREFIX_WINDOW_IOS); a lone number (older settings) applies to every workload.
_win_ios() {	# BS QD [LIST]
	local e list=${3:-$(_pv WINDOW_IOS)}
	for e in $list; do
		[[ $e == "$1:$2:"* ]] && { echo "${e##*:}"; return; }
		[[ $e =~ ^[0-9]+$ ]] && { echo "$e"; return; }
	done
	_pv WINDOW_IOS_DEFAULT 4000
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

if [ "$phase" = mttcg ] && [ -n "$(_pv PERFTEST_SIZES)" ]; then
	# Raw verbs limits per message size (busy-polling perftest over path 1).
	# perftest 4.5 has no RDMA WRITE WITH IMM test; SEND is the closest
	# (it also consumes a receive at the responder).
	srv=$(tb_nth 1 "$TB_SRV_ADDRS")
	port=18600
	for size in $(_pv PERFTEST_SIZES); do
		for t in ib_write_bw ib_send_bw ib_write_lat ib_send_lat; do
			port=$((port + 1))
			tb_log "perftest $t -s $size"
			timeout 60 $t -R -d rxe1 -p $port -s "$size" -D "$(_pv PERFTEST_SECONDS 2)" >/dev/null 2>&1 &
			spid=$!
			sleep 1
			timeout 60 $t -R -d rxe1 -p $port -s "$size" -D "$(_pv PERFTEST_SECONDS 2)" "$srv" \
				>"$EX_RAW/perftest_${t}_s${size}.txt" 2>&1 ||
				echo "perftest $t -s $size failed" >&2
			wait $spid || true	# not a bare wait: the ibtrs daemon is a child too
		done
	done
fi

# A failed cell is recorded (and its raw files set aside) and the suite goes
# on; run-cells.sh reports failed cells and exits non-zero after summarizing.
_cell_failed() {
	echo "$1" >>"$EX_RAW/failed-cells.txt"
	for f in "$EX_RAW/$1".*; do [ -e "$f" ] && mv "$f" "$f.failed"; done
	tb_log "cell $1 FAILED"
}
set -- $systems
nsys=$#
ncells=$(( $(echo $workloads | wc -w) * nsys * runs ))
k=0
_run_cell() {	# SYSTEM WORKLOAD
	local s=$1 wname rw bs qd jobs
	IFS=: read -r wname rw bs qd jobs <<<"$2"
	k=$((k + 1))
	# numjobs > 1 with the fio engine: every job opens the device in a
	# session of its own, and the server refuses the second rw open; left
	# out until the jobs share one
	if [ "${jobs:-1}" -gt 1 ] && [[ $s == ibtrs* ]]; then
		tb_log "[$phase $k/$ncells] skip $s $wname: numjobs $jobs (one session per job)"
		return 0
	fi
	tb_log "[$phase $k/$ncells] run $run $s $wname bs=$bs qd=$qd"
	ex_cell_clean "${s}__${wname}__${bs}__${qd}__r${run}" "$s" "$rw" "$bs" "$qd" \
		"$ramp" "$(_win_ios "$bs" "$qd" "$winios")" "$maxms" "${jobs:-1}" ||
		_cell_failed "${s}__${wname}__${bs}__${qd}__r${run}"
}
for ((run = 1; run <= runs; run++)); do
	order=$systems
	[ $((run % 2)) = 0 ] && order=$(echo $systems | tr ' ' '\n' | tac | tr '\n' ' ')
	if [ "$order_kind" = by-system ]; then
		for s in $order; do
			for w in $workloads; do _run_cell "$s" "$w"; done
		done
	else
		for w in $workloads; do
			for s in $order; do _run_cell "$s" "$w"; done
		done
	fi
done

if [ "$phase" = icount ] && [ "$(_pv WR_RUNS 3)" -gt 0 ] && ex_wr_count_on; then
	for s in $systems; do
		# kprobes see kernel QPs only: skip local and userspace systems
		case $s in nullblk | ibtrs* | fio_rdma) continue ;; esac
		for w in $workloads; do
			IFS=: read -r wname rw bs qd jobs <<<"$w"
			[ "$bs" = 4k ] || continue	# WRs per IO: the 4k workloads suffice
			for ((run = 1; run <= $(_pv WR_RUNS 3); run++)); do
				tb_log "[wr count $run] $s $wname"
				ex_cell_clean "${s}__${wname}__${bs}__${qd}__wr$run" "$s" "$rw" "$bs" "$qd" 100 \
					"$(_win_ios "$bs" "$qd" "$(_pv WR_WINDOW_IOS)")" "$maxms" "${jobs:-1}" ||
					_cell_failed "${s}__${wname}__${bs}__${qd}__wr$run"
			done
		done
	done
	ex_wr_count_off
fi
ex_snap_close
[ -n "${_ibtrs_srv_pid:-}" ] && kill "$_ibtrs_srv_pid" 2>/dev/null
[ -n "${_ibtrs_rekey_srv_pid:-}" ] && kill "$_ibtrs_rekey_srv_pid" 2>/dev/null
tb_log "$EX_PREFIX $phase done"
