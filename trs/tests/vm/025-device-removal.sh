#!/bin/bash
# Device removal: the rxe device of path 1 is deleted during verified IO
# (tb_path_cut 1 rxe). Client and server get RDMA_CM_EVENT_DEVICE_REMOVAL
# and must release everything they hold on the device at once: rxe has no
# uverbs disassociation, so `rdma link delete` blocks until they do. IO
# continues on path 2 with no error and data verified, and path 1 rejoins
# once the device is re-added (tb_path_restore 1).
# Second round: a link cut of path 1, then a restore, which deletes the old
# device while the client reconnects on it (or holds only librdmacm's
# cached context of it) and the server still listens on it.
# Every cut/restore must return within 10 s.
# TIMEOUT=240
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"
[ "$TB_PATHS" -ge 2 ] || { echo "SKIP: needs 2 paths"; exit 77; }
[ "${TB_MODE:-}" != real ] || { echo "SKIP: deletes rxe devices (VM only)"; exit 77; }
tb_require_cmd rdma

_ms() { date +%s%3N; }
LIMIT_S=10
fail=0

# _timed NAME CMD...: run CMD, its time in ms goes to $ms; fail when it
# takes LIMIT_S or more (then show who still holds a device: a blocked
# `rdma link delete` cannot be killed, so the test stops here).
_timed() {
	local name=$1 t0 pid
	shift
	t0=$(_ms)
	"$@" &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		if (($(_ms) - t0 >= LIMIT_S * 1000)); then
			echo "FAIL: $name still blocked after ${LIMIT_S} s"
			rdma res show || true
			rdma res show cm_id || true
			for f in /proc/[0-9]*/fd/*; do
				case $(readlink "$f" 2>/dev/null) in
				*uverbs* | *infiniband*) echo "$f -> $(readlink "$f")" ;;
				esac
			done
			exit 1
		fi
		sleep 0.05
	done
	wait $pid || { echo "FAIL: $name exited $?"; fail=1; }
	ms=$(($(_ms) - t0))
	tb_log "$name took $ms ms"
}

# _rejoined LOG N: wait up to 30 s until path 1 has connected N times
# (counted in the client log); print the ms waited.
_rejoined() {
	local t0 n
	t0=$(_ms)
	while (($(_ms) - t0 < 30000)); do
		n=$(grep -c "path $(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS") connected" "$1" || true)
		[ "$n" -ge "$2" ] && { echo $(($(_ms) - t0)); return 0; }
		sleep 0.1
	done
	echo "FAIL: path 1 did not rejoin (connected $n times, want $2)" >&2
	return 1
}

# No leak on the new device: once path 1 is back, client and server hold on
# it exactly what they hold on path 2's device (rdma res show counts).
_same_res() {
	local d1 d2 r1 r2
	d1=$(tb_nth 1 "$TB_RXE_DEVS") d2=$(tb_nth 2 "$TB_RXE_DEVS")
	sleep 0.5
	r1=$(rdma res show | sed -n "s/^[0-9]*: $d1: //p")
	r2=$(rdma res show | sed -n "s/^[0-9]*: $d2: //p")
	echo "$1: $d1: $r1 / $d2: $r2"
	[ "$r1" = "$r2" ] || { echo "FAIL: $1: resources on $d1 differ from $d2"; fail=1; }
}

# Failures of path 1 in the client log so far.
_p1_fails() {
	grep -c "path $(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS") failed:" "$log" || true
}

_start_server -v
log=/tmp/trs-clt-removal.log
# shellcheck disable=SC2046
"$B/trs-test-client" $(_path_args 2) -T 45 -q 16 -P round-robin \
	--wait-paths 2 --connect-timeout 10000 -v >"$log" 2>&1 &
cpid=$!
_wait_connected "$log"
sleep 3

tb_log "round 1: deleting the rxe device of path 1"
fails0=$(_p1_fails)
_timed "cut 1 rxe" tb_path_cut 1 rxe; cut_ms=$ms
rdma res show
[ ! -e "/sys/class/infiniband/$(tb_nth 1 "$TB_RXE_DEVS")" ] ||
	{ echo "FAIL: device still there after the cut"; fail=1; }
# The deletion finished, so both had released the device by then: the
# client's path 1 failed (on DEVICE_REMOVAL, or on the DISCONNECTED that the
# kernel's destruction of the server's cm_id may send first), and so did the
# server's listener on that device.
[ "$(_p1_fails)" -gt "$fails0" ] ||
	{ echo "FAIL: the client's path 1 did not fail during the cut"; fail=1; }
grep -q "listener on $(tb_nth 1 "$TB_SRV_ADDRS"): RDMA_CM_EVENT_DEVICE_REMOVAL" \
	/tmp/trs-srv.log || { echo "FAIL: the server's listener saw no removal"; fail=1; }
sleep 3
tb_log "round 1: restoring path 1"
_timed "restore 1" tb_path_restore 1; restore1_ms=$ms
rejoin1_ms=$(_rejoined "$log" 2) || { fail=1; rejoin1_ms=-1; }
tb_log "round 1: path 1 rejoined $rejoin1_ms ms after the restore"
_same_res "round 1"
sleep 2

tb_log "round 2: link cut of path 1, then restore (deletes the old device)"
tb_path_cut 1
sleep 4
_timed "restore 1 after a link cut" tb_path_restore 1; restore2_ms=$ms
rejoin2_ms=$(_rejoined "$log" 3) || { fail=1; rejoin2_ms=-1; }
tb_log "round 2: path 1 rejoined $rejoin2_ms ms after the restore"
_same_res "round 2"

rc=0
wait $cpid || rc=$?
grep -v '^progress' "$log" | grep -v 'INF:.*reconnect' | tail -25
echo "times: cut(rxe)=${cut_ms}ms restore1=${restore1_ms}ms rejoin1=${rejoin1_ms}ms" \
	"restore2=${restore2_ms}ms rejoin2=${rejoin2_ms}ms"
[ $rc -eq 0 ] || { echo "FAIL: client exit $rc"; fail=1; }
[ "$(_total "$log" errors)" = 0 ] || { echo "FAIL: IO errors"; fail=1; }
[ "$(_total "$log" verify_errors)" = 0 ] || { echo "FAIL: verify errors"; fail=1; }
[ "$(_pathval "$log" 0 reconnects)" -ge 2 ] || { echo "FAIL: path 1 did not reconnect twice"; fail=1; }
echo "path 1: failovers=$(_pathval "$log" 0 failovers) reconnects=$(_pathval "$log" 0 reconnects)"
[ "$(_total "$log" paths_connected)" = 2 ] || { echo "FAIL: not both paths back"; fail=1; }
stalls=$(awk '/^progress/ && $4=="iops=0"' "$log" | wc -l)
echo "progress seconds without IO: $stalls"
[ "$stalls" -le 2 ] || { echo "FAIL: IO stalled for $stalls s"; fail=1; }
exit $fail
