#!/bin/bash
# 037-kclient-hostile-server: the kernel client against a server that
# speaks IBTRS but not IBNBD: trs/build/trs-test-server (an IBTRS test
# server whose only user is trs-test-client; it refuses every request
# whose user header is not its own 16-byte test header with -EINVAL),
# started with -S raw (read answers one sector short, past the library's
# check). For a 1-path and a 2-path map (sessions hs1, hs2):
#  1. the map_device write fails within 20 s (no hang) with an error, and
#     the kernel log says why ("SESS_INFO failed" or "bad SESS_INFO
#     answer");
#  2. no device is left, the session's sysfs directory is gone and the
#     test server logged the session's disconnect within 5 s (path closed);
# then the test server counted the refused requests, answered no read
# (so no short answer ever reached the client), and exits on SIGTERM;
# rmmod, clean kernel log. The short read answer itself cannot be reached
# by the kernel client with this server: ibnbd-client's first request
# (SESS_INFO) is refused before any read is answered.
# TIMEOUT=120
. "$TB_TOP/kmod/tests/vm/klib.sh"
kclt_need
need_paths 2
TS=$TB_TOP/trs/build/trs-test-server
[ -x "$TS" ] || skip "$TS not built (make -C trs)"
TS_LOG=$LOGDIR/trs-test-server.log
args=
for a in $TB_SRV_ADDRS; do args="$args -a $a"; done
# shellcheck disable=SC2086
"$TS" $args -p "$SRV_PORT" -S raw -v >"$TS_LOG" 2>&1 &
TS_PID=$!
KMOD_EXTRA_CLEANUP='kill -KILL $TS_PID 2>/dev/null'
for i in $(seq 1 100); do
	grep -q READY "$TS_LOG" && break
	kill -0 $TS_PID 2>/dev/null || die "trs-test-server exited: $(cat "$TS_LOG")"
	sleep 0.1
done
grep -q READY "$TS_LOG" || die "trs-test-server not ready"
kclt_load

hostile_map() {	# SESSNAME NPATHS
	local s=$1 t0 w i ms
	t0=$(date +%s%N)
	( echo "sessname=$s$(kclt_paths "$2") device_path=nullb0" \
		>"$KCLT_CTL/map_device" ) 2>"$LOGDIR/map-$s.txt" &
	w=$!
	for i in $(seq 1 200); do kill -0 $w 2>/dev/null || break; sleep 0.1; done
	kill -0 $w 2>/dev/null && die "map $s against trs-test-server hangs for 20 s"
	wait $w && die "map $s against trs-test-server succeeded"
	ms=$((($(date +%s%N) - t0) / 1000000))
	log "map $s ($2 paths) failed in $ms ms: $(cat "$LOGDIR/map-$s.txt")"
	kmsgs | grep -E "ibnbd_client: session $s: (SESS_INFO failed|bad SESS_INFO answer)" ||
		die "no kernel line on the failed SESS_INFO of $s"
	[ -z "$(ls "$KCLT_CTL/devices")" ] || die "map $s left a device"
	[ -e "/sys/kernel/ibtrs-client/$s" ] && die "session $s's sysfs directory left"
	for i in $(seq 1 50); do
		grep -q "session $s disconnected" "$TS_LOG" && break
		sleep 0.1
	done
	grep -q "session $s disconnected" "$TS_LOG" ||
		die "trs-test-server did not see session $s close within 5 s"
}
hostile_map hs1 1
hostile_map hs2 2
kill -TERM $TS_PID
for i in $(seq 1 50); do kill -0 $TS_PID 2>/dev/null || break; sleep 0.1; done
kill -0 $TS_PID 2>/dev/null && die "trs-test-server does not exit on SIGTERM"
wait $TS_PID
log "trs-test-server exited with $?"
tail -4 "$TS_LOG"
grep -q 'server done: .*reads=0 writes=0 bad=[1-9]' "$TS_LOG" ||
	die "trs-test-server did not refuse the client's requests without answering"
grep -q 'short_answers=0' "$TS_LOG" || die "a short read answer was sent"
kclt_unload
kmod_log_check
kmsgs | grep 'ibtrs_client\|ibnbd_client' | tail -10
log "PASS"
