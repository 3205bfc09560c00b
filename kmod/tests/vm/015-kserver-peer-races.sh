#!/bin/bash
# 015-kserver-peer-races: what a remote peer could reach in the kernel
# server before the review's fixes (issue 16), driven by trs-test-hostile's
# opt-in cases while a good fio client does verified IO in its own session:
#  1. close-as-read: an IBNBD CLOSE sent as an IBTRS read was answered
#     twice (ibnbd answered, returned an error, and the transport answered
#     again: WARN_ON_ONCE in ibtrs_srv_resp()); now exactly one answer, and
#     a proper CLOSE on the same chunk gets exactly one too.
#  2. connect-race: connections of a path connecting while the path fails
#     (the close work walked the path's connections without the context
#     mutex the connect request holds); 30 rounds of 8 connections, all
#     must end within 20 s (late ones start a new path of the same UUID,
#     dropped by the join timeout); afterwards the server holds no
#     cm_id/QP of them (rdma res back to what it was).
#  3. info-race: INFO_REQ on connection 0 while connection 1 breaks a rule
#     (the heartbeat work was re-armed after the close work cancelled it);
#     30 rounds.
#  4. hb-only: a path that sends heartbeats but never joins must be dropped
#     ("did not join in time", counted from its first connection), not
#     kept alive by its heartbeats with its session's 16.5 MiB pool.
#  5. sess-flood: with max_sessions_per_addr=4, the 5th and 6th new session
#     from one address are refused with TRS_REJ_LIMIT (rate-limited log).
# The good client must verify, the modules unload, the kernel log is clean.
# TIMEOUT=300
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
need_paths 2
command -v rdma >/dev/null || skip "no rdma tool"
HOSTILE=$TB_TOP/trs/build/trs-test-hostile
[ -x "$HOSTILE" ] || skip "$HOSTILE not built (make -C trs)"
H=(-p "$SRV_PORT" -s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")")
setup_nullb
kmod_load

# rdma res of path 1's device: cm_id and qp counts (the hostile client's
# are gone when it exits; what stays is the server's)
_res() {
	rdma res show | sed -n "s/^[0-9]*: $(tb_nth 1 "$TB_RXE_DEVS"): //p"
}
res0=$(_res)

# The good client: verified writes at 2 MiB/s over both paths, in its own
# session, round after round (a new session each) until the hostile cases
# are over, so every case runs beside a live session whatever their speed;
# every round must verify.
FIO_TIMEOUT=200
GOOD_STOP=$LOGDIR/good.stop
good_rounds() {
	local n=0
	while [ ! -e "$GOOD_STOP" ]; do
		n=$((n + 1))
		run_fio good$n --paths="$(fio_paths 2)" --devpath=nullb0 \
			--rw=randwrite --bs=4k --iodepth=8 --size=8m --rate=2m \
			--offset=512m --verify=crc32c --do_verify=1 --verify_fatal=1 ||
			{ echo "round $n: fio failed"; return 1; }
		grep -q 'err= 0' "$LOGDIR/fio-good$n.log" ||
			{ echo "round $n: errors"; return 1; }
	done
	echo "$n rounds verified"
}
good_rounds >"$LOGDIR/good.log" 2>&1 &
FIO=$!
for i in $(seq 1 $((100 * TS))); do
	kmsgs | grep -q 'opened /dev/nullb0 (rw)' && break
	sleep 0.1
done
kmsgs | grep -q 'opened /dev/nullb0 (rw)' || die "the good client did not open nullb0"

"$HOSTILE" "${H[@]}" -d nullb0 close-as-read >"$LOGDIR/h1.log" 2>&1
cat "$LOGDIR/h1.log"
grep -q '^PASS: hostile close-as-read' "$LOGDIR/h1.log" || die "close-as-read failed"
kmod_log_check_now

"$HOSTILE" "${H[@]}" -r 30 -c 8 -w 20000 connect-race >"$LOGDIR/h2.log" 2>&1
cat "$LOGDIR/h2.log"
grep -q '^PASS: hostile connect-race' "$LOGDIR/h2.log" || die "connect-race failed"
kmod_log_check_now

"$HOSTILE" "${H[@]}" -r 30 info-race >"$LOGDIR/h3.log" 2>&1
cat "$LOGDIR/h3.log"
grep -q '^PASS: hostile info-race' "$LOGDIR/h3.log" || die "info-race failed"
kmod_log_check_now

# join timeout: 1.5 s heartbeat timeout + 10 s grace, from the first connection
"$HOSTILE" "${H[@]}" -w 20000 hb-only >"$LOGDIR/h4.log" 2>&1
cat "$LOGDIR/h4.log"
grep -q '^PASS: hostile hb-only' "$LOGDIR/h4.log" || die "hb-only failed"
kmsgs | grep -q 'closing path from .*: did not join in time: connected [0-9]* ms' ||
	die "no 'did not join in time' in the kernel log"

kill -0 $FIO 2>/dev/null || die "the good client failed: $(cat "$LOGDIR/good.log")"
touch "$GOOD_STOP"
wait $FIO || die "the good client failed: $(cat "$LOGDIR/good.log")"
log "good client: $(cat "$LOGDIR/good.log")"
# Every client gone: the paths the races failed, and the good client's
# session, are torn down by work items; then the server holds what it held
# before any client came (rdma res of path 1's device).
ok=0
for i in $(seq 1 $((100 * TS))); do
	[ "$(_res)" = "$res0" ] && { ok=1; break; }
	sleep 0.1
done
[ $ok = 1 ] || die "the server holds more than before the races: '$(_res)' vs '$res0'"
log "resources after the races as before: $res0"
kmod_unload

# session limits
kmod_load max_sessions_per_addr=4
"$HOSTILE" "${H[@]}" -n 6 -k 4 sess-flood >"$LOGDIR/h5.log" 2>&1
cat "$LOGDIR/h5.log"
grep -q '^PASS: hostile sess-flood' "$LOGDIR/h5.log" || die "sess-flood failed"
kmsgs | grep -q "rejecting a connection from .*: server's session limit reached (max_sessions_per_addr reached for this address)" ||
	die "no session-limit reason in the kernel log"
for i in $(seq 1 50); do
	[ "$(_res)" = "$res0" ] && break
	sleep 0.1
done
[ "$(_res)" = "$res0" ] || die "resources left after the flood: '$(_res)' vs '$res0'"
kmod_unload
kmod_log_check 30
log "PASS"
