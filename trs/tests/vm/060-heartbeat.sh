#!/bin/bash
# A silent peer is detected by the heartbeat: the server process is stopped
# (SIGSTOP) during verified IO on 2 paths, so every path goes silent with no
# QP error and no RDMA CM event (rxe still acks in the kernel). The client
# must fail both paths for "heartbeat timeout" within hb_interval x
# hb_missed (500 ms x 3, the defaults) plus slack, queue the IO (all paths
# down for less than ctrl_loss_tmo), and after SIGCONT reconnect (the server
# may see stale sessions) and finish with no IO and no verify error.
# Prints the detection time (STOP -> first heartbeat failure) and the
# recovery times (CONT -> first path / all paths connected again).
# TIMEOUT=180
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"
[ "$TB_PATHS" -ge 2 ] || { echo "SKIP: needs 2 paths"; exit 77; }
# A stopped server ignores SIGTERM: continue it before lib.sh stops it.
trap '[ -z "$SRV_PID" ] || kill -CONT "$SRV_PID" 2>/dev/null || true
	_stop_server; _save_logs' EXIT

HB_MS=500 HB_MISSED=3 MAX_DETECT=2.5

_start_server -v
log=/tmp/trs-clt-hb.log
paths=$(_path_args 2)
t_start=$EPOCHREALTIME
# shellcheck disable=SC2086
"$B/trs-test-client" $paths -T 20 -q 16 --hb-interval $HB_MS \
	--hb-missed $HB_MISSED --ctrl-loss-tmo 30000 --wait-paths 2 -v \
	>"$log" 2>&1 &
cpid=$!
# The client's log lines carry seconds since its own start. Its clock zero
# in wall time, from its first log line seen as it is written, is late by a
# few ms at most, so the times measured below are if anything too long.
t_zero=$(_clt_clock_zero "$log")
_wait_connected "$log"
sleep 3
ios_before=$(grep '^progress' "$log" | tail -1 | tr ' ' '\n' | sed -n 's/^ios=//p')
t_stop=$EPOCHREALTIME
kill -STOP "$SRV_PID"
tb_log "server stopped (client had done ${ios_before:-0} IOs)"
sleep 4
t_cont=$EPOCHREALTIME
kill -CONT "$SRV_PID"
tb_log "server continued"
rc=0
wait $cpid || rc=$?
grep -v '^progress' "$log" | grep -v 'INF:.*reconnects in' || true

fail=0 defect=0
[ "${ios_before:-0}" -gt 0 ] || { echo "FAIL: no IO before the stop"; fail=1; }
[ $rc -eq 0 ] || { echo "FAIL: client exit $rc"; fail=1; }
[ "$(_total "$log" errors)" = 0 ] || { echo "FAIL: IO errors"; fail=1; }
[ "$(_total "$log" verify_errors)" = 0 ] || { echo "FAIL: verify errors"; fail=1; }
[ "$(_total "$log" failed_no_path)" = 0 ] || { echo "FAIL: IO failed with no path"; fail=1; }
[ "$(_total "$log" paths_connected)" = 2 ] || { echo "FAIL: not both paths back"; fail=1; }

# STOP and CONT on the client's clock.
# (No process substitution: the guest has no /dev/fd.)
stop_rel=$(awk -v s="$t_zero" -v t="$t_stop" 'BEGIN { printf "%.3f", t - s }')
cont_rel=$(awk -v s="$t_zero" -v t="$t_cont" 'BEGIN { printf "%.3f", t - s }')
echo "client clock: stop at $stop_rel s, continue at $cont_rel s (client started" \
	"$(awk -v s="$t_start" -v z="$t_zero" 'BEGIN { printf "%.3f", z - s }') s" \
	"after its launch)"
# "[  12.345] clt WRN: trs-test: path A failed: REASON" -> "12.345 A REASON"
events=$(sed -n 's/^\[ *\([0-9.]*\)\] clt [A-Z]*: [^ ]*: path \([^ ]*\) \(failed: .*\|connected .*\)$/\1 \2 \3/p' "$log")
det_all="" rec_all=""
for i in 1 2; do
	addr="$(tb_nth $i "$TB_CLT_ADDRS")@$(tb_nth $i "$TB_SRV_ADDRS")"
	early=$(awk -v a="$addr" -v t="$stop_rel" \
		'$2 == a && $3 == "failed:" && $1 < t { print; exit }' <<<"$events")
	case "$early" in
	"") ;;
	*"memory management operation error"*)
		# rxe ran a finished BIND_MW again on a retry (trs/PROTOCOL.md
		# section 9): the testbed's defect, not the heartbeat's
		echo "path $addr failed before the stop: $early"
		defect=1 ;;
	*) echo "FAIL: path $addr failed before the stop: $early"; fail=1 ;;
	esac
	first=$(awk -v a="$addr" -v t="$stop_rel" \
		'$2 == a && $3 == "failed:" && $1 >= t { print; exit }' <<<"$events")
	case "$first" in
	*"failed: heartbeat timeout"*) ;;
	*) echo "FAIL: path $addr: first failure after the stop is not a" \
		"heartbeat timeout: '${first:-none}'"; fail=1; continue ;;
	esac
	det=$(awk -v t="$stop_rel" '{ printf "%.3f", $1 - t }' <<<"$first")
	back=$(awk -v a="$addr" -v t="$stop_rel" \
		'$2 == a && $3 == "connected" && $1 >= t { print; exit }' <<<"$events")
	[ -n "$back" ] || { echo "FAIL: path $addr did not reconnect"; fail=1; continue; }
	rec=$(awk -v t="$cont_rel" '{ printf "%.3f", $1 - t }' <<<"$back")
	# Nothing can join while the server is stopped.
	awk -v r="$rec" 'BEGIN { exit !(r >= 0) }' ||
		{ echo "FAIL: path $addr connected while the server was stopped"; fail=1; }
	echo "path $addr: heartbeat failure ${det} s after the stop" \
		"(${first#* * }), connected again ${rec} s after the continue"
	det_all+=" $det" rec_all+=" $rec"
done
if [ -n "$det_all" ]; then
	read -r det_first rec_first rec_last <<<"$(echo "$det_all" "|" "$rec_all" | awk '{
		d = 1e9; r = 1e9; l = -1e9; side = 0
		for (i = 1; i <= NF; i++) {
			if ($i == "|") { side = 1; continue }
			if (!side) { if ($i < d) d = $i }
			else { if ($i < r) r = $i; if ($i > l) l = $i }
		}
		printf "%.3f %.3f %.3f\n", d, r, l }')"
	echo "detection: first heartbeat failure $det_first s after SIGSTOP" \
		"(limit $MAX_DETECT s = $HB_MISSED x $HB_MS ms + slack)"
	echo "recovery: first path $rec_first s, all paths $rec_last s after SIGCONT"
	awk -v d="$det_first" -v m="$MAX_DETECT" 'BEGIN { exit !(d >= 0 && d <= m) }' ||
		{ echo "FAIL: detection took $det_first s"; fail=1; }
	# A path fails only once nothing was received for hb_interval x hb_missed.
	awk -v d="$det_first" -v h="$HB_MS" -v n="$HB_MISSED" \
		'BEGIN { exit !(d >= h * n / 1000 - 0.6) }' ||
		{ echo "FAIL: heartbeat failure after only $det_first s"; fail=1; }
fi
# The stop took effect (no IO completed while stopped), and IO resumed.
# (t + 0: substr() gives a string, and "10.3" > "9.268" is false as strings)
zero=$(grep '^progress' "$log" | awk -v a="$stop_rel" -v b="$cont_rel" \
	'{ t = substr($2, 3) + 0 } t > a + 1.5 && t <= b && $4 == "iops=0"' | wc -l)
resumed=$(grep '^progress' "$log" | awk -v b="$cont_rel" \
	'{ t = substr($2, 3) + 0 } t > b && $4 != "iops=0" { print t; exit }')
echo "progress lines without IO while stopped: $zero; first with IO after" \
	"the continue: t=${resumed:-none} (continue at $cont_rel)"
[ "$zero" -ge 1 ] || { echo "FAIL: IO went on while the server was stopped"; fail=1; }
[ -n "$resumed" ] || { echo "FAIL: no IO after the continue"; fail=1; }
fo=0
for i in 0 1; do
	[ "$(_pathval "$log" $i reconnects)" -ge 1 ] ||
		{ echo "FAIL: path $i: no reconnect counted"; fail=1; }
	fo=$((fo + $(_pathval "$log" $i failovers)))
done
# The IO in flight at the stop was queued and completed after the continue.
echo "IOs failed over (queued while the paths were down): $fo"
[ "$fo" -ge 1 ] || { echo "FAIL: no IO was in flight at the stop"; fail=1; }
grep '^total' "$log"
echo "server log (sessions, stale paths):"
grep -E 'session|failed|closing|replaced' /tmp/trs-srv.log | sed 's/^/  /' | tail -20 || true
if [ $fail = 0 ] && [ $defect = 1 ]; then
	echo "TB_DEFECT: a path failed with IBV_WC_MW_BIND_ERR before the stop (rxe re-ran a finished BIND_MW, trs/PROTOCOL.md section 9)"
	exit 75
fi
exit $fail
