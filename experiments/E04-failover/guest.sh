#!/bin/bash
# guest.sh - E04-failover inside the testbed guest (started by run.sh).
# Usage: guest.sh RAWDIR
# For each run, system and event: the system connected over 2 paths (and
# nothing else), a sustained verified fio job (E04_RW at E04_BS, QD
# E04_QD, verify=crc32c with a backlog, time based), and on path 1, after
# E04_T_BEFORE s, the event: "link" (its netdev down: a cable cut) or "rxe"
# (its rxe device deleted: a device removal); after E04_T_DOWN s the path is
# restored (a fresh rxe device), and the job runs E04_T_AFTER s more.
# Per cell in RAWDIR: CELL.fio.json (fio's result), CELL_clat.*.log (every
# IO's completion, unix ms: log_unix_epoch; gzipped), CELL.events (unix ms of each
# event), CELL.pkts (each path's rxe sent_pkts every 50 ms, -1 while the
# device is gone), CELL.setup.log. Parameters: $TB_OUT/params.env.
set -euo pipefail
EX_RAW=$1
mkdir -p "$EX_RAW"
here=$TB_TOP/experiments
. "$here/testbed/guest-lib.sh"
. "$here/lib/systems.sh"
. "$TB_OUT/params.env"
EX_RNBD_DIR=$(cat "$TB_OUT/rnbd-dir" 2>/dev/null || true)
[ "$TB_PATHS" -ge 2 ] || ex_die "E04 needs 2 paths"
_ms() { date +%s%3N; }

# _e04_up SYSTEM: connected over paths 1 and 2 (only it), policy E04_POLICY_<SYSTEM>
_e04_up() {
	case $1 in
	ibnbd) _ksrv_load; _ibnbd_paths 2 "$E04_POLICY_IBNBD" ;;
	ibtrs) _ibtrs_srv_up; _ep_release none ;;
	nvme) sys_nvme_rdma_up; EX_NVME_NPATHS=${EX_NVME_NPATHS:-1}; _nvme_paths 2 "$E04_POLICY_NVME" ;;
	*) ex_die "unknown E04 system '$1'" ;;
	esac
}
# _e04_down SYSTEM: every connection ended (the next cell starts afresh:
# after a cut, a system's own reconnect must not be what the next cell
# measures)
_e04_down() {
	_ep_release none
	EX_IBNBD_NPATHS= EX_NVME_NPATHS=
}
_e04_fio() {	# SYSTEM: fio's device arguments
	case $1 in
	ibnbd) sys_ibnbd1_fio ;;
	ibtrs) EX_IBTRS_POLICY=$E04_POLICY_IBTRS _ibtrs_fio 2 ;;
	nvme) sys_nvme_rdma_fio ;;
	esac
}
_e04_desc() {	# SYSTEM
	case $1 in
	ibnbd) echo "ibnbd 2 $E04_POLICY_IBNBD frwr remote" ;;
	ibtrs) echo "ibtrs-fio 2 $E04_POLICY_IBTRS mw remote" ;;
	nvme) echo "nvme-rdma 2 $E04_POLICY_NVME frwr remote" ;;
	esac
}
# _e04_pkts: "unix_ms pkts1 pkts2" every 50 ms until killed
_e04_pkts() {
	local i f out
	while :; do
		out=$(_ms)
		for i in 1 2; do
			f=/sys/class/infiniband/rxe$i/ports/1/hw_counters/sent_pkts
			out+=" $(cat "$f" 2>/dev/null || echo -1)"
		done
		echo "$out"
		sleep 0.05
	done
}

total=$((E04_T_BEFORE + E04_T_DOWN + E04_T_AFTER))
for s in $E04_SYSTEMS; do echo "$s $(_e04_desc "$s")"; done >"$EX_RAW/systems.txt"
for ((run = 1; run <= E04_RUNS; run++)); do
	for s in $E04_SYSTEMS; do
		for ev in $E04_EVENTS; do
			cell=${s}__${ev}__r$run
			tb_log "[E04] $cell: setting up"
			_e04_down
			_e04_up "$s" >"$EX_RAW/$cell.setup.log" 2>&1
			_e04_pkts >"$EX_RAW/$cell.pkts" &
			pk=$!
			# shellcheck disable=SC2046 # the system's fio arguments are words
			timeout -k 10 $((total + E04_FIO_GRACE)) fio --name="$cell" \
				$(_e04_fio "$s") --rw="$E04_RW" --bs="$E04_BS" \
				--iodepth="$E04_QD" --time_based --runtime="$total" \
				--verify=crc32c --verify_backlog="$E04_VERIFY_BACKLOG" \
				--verify_fatal=1 --disable_lat=1 --disable_slat=1 \
				--write_lat_log="$EX_RAW/$cell" \
				--log_unix_epoch=1 --output-format=json \
				--output="$EX_RAW/$cell.fio.json" >"$EX_RAW/$cell.fio.out" 2>&1 &
			fp=$!
			echo "start $(_ms)" >"$EX_RAW/$cell.events"
			sleep "$E04_T_BEFORE"
			echo "cut $(_ms)" >>"$EX_RAW/$cell.events"
			tb_log "[E04] $cell: path 1 cut ($ev)"
			tb_path_cut 1 "$ev" || echo "cut_failed $(_ms)" >>"$EX_RAW/$cell.events"
			echo "cut_done $(_ms)" >>"$EX_RAW/$cell.events"
			sleep "$E04_T_DOWN"
			echo "restore $(_ms)" >>"$EX_RAW/$cell.events"
			tb_log "[E04] $cell: path 1 restored"
			rc=0
			if [ "${TB_MODE:-}" = real ]; then
				tb_path_restore 1 || rc=$?
			else	# exit 3: the testbed defect (paths.sh), recorded
				"$TB_TOP/experiments/testbed/paths.sh" restore 1 || rc=$?
			fi
			echo "restore_done $(_ms) $rc" >>"$EX_RAW/$cell.events"
			frc=0
			wait $fp || frc=$?
			echo "fio_end $(_ms) $frc" >>"$EX_RAW/$cell.events"
			kill $pk 2>/dev/null || true
			wait $pk 2>/dev/null || true
			tb_log "[E04] $cell: fio exit $frc"
			[ $frc = 0 ] || echo "$cell fio exit $frc" >>"$EX_RAW/failed-cells.txt"
			gzip -f "$EX_RAW/${cell}"_clat.*.log 2>/dev/null || true
			if [ $rc = 3 ]; then	# path 1 cannot come back in this boot
				echo "$cell testbed defect: path 1 not restored; boot ended" >>"$EX_RAW/failed-cells.txt"
				break 3
			fi
		done
	done
done
_e04_down
[ -n "${_ibtrs_srv_pid:-}" ] && kill "$_ibtrs_srv_pid" 2>/dev/null
tb_log "E04 done"
