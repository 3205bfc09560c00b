#!/bin/bash
# 007-claim-drain: a writer's session dies with writes still held by a slow
# backend (dm-delay, 6 s per write); the next rw opener (the same client
# reconnected, re-sending its writes) must not get the device before those
# old writes have landed, or they would overwrite its newer data. The
# server refuses it with EBUSY and a reason until the old IO drained;
# afterwards the new data is written and read back.
# TIMEOUT=200
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
dm_delay ibnbd-slow /dev/nullb0 0 6000
start_server
P=$(fio_paths 1)
DEV=mapper/ibnbd-slow

# Old writer: 4 writes in flight at any time, each held 6 s. --thread: the
# session lives in fio's own process, which the SIGKILL below ends.
start_fio old --paths="$P" --devpath=$DEV --rw=write --bs=4k --size=1m \
	--iodepth=4 --access_mode=rw --thread
OLD=$FIO_PID
for i in $(seq 1 100); do
	grep -q "opened /dev/$DEV (rw" "$SRV_LOG" && break
	sleep 0.1
done
OLD_SESS=$(sed -n "s|.*sess \([^:]*\): opened /dev/$DEV (rw.*|\1|p" "$SRV_LOG" | head -1)
[ -n "$OLD_SESS" ] || die "the old writer never opened the device"
sleep 1
kill -KILL $OLD
wait $OLD 2>/dev/null
for i in $(seq 1 80); do
	grep -q "sess $OLD_SESS: disconnected" "$SRV_LOG" && break
	sleep 0.1
done
inflight=$(sed -n "s/.*sess $OLD_SESS: disconnected (\([0-9]*\) IOs in flight).*/\1/p" "$SRV_LOG")
[ "${inflight:-0}" -ge 1 ] ||
	die "old session gone with ${inflight:-?} IOs in flight (wanted >= 1: the test needs held writes)"
log "old session $OLD_SESS dropped with $inflight writes in flight"

# The new writer retries until admitted (the engine's initial open does
# not retry EBUSY; its re-open after a reconnect does).
ok=
for i in $(seq 1 20); do
	if run_fio new$i --paths="$P" --devpath=$DEV --rw=write --bs=4k \
		--size=64k --iodepth=16 --access_mode=rw --verify=crc32c \
		--do_verify=1 --verify_fatal=1; then
		ok=$i
		break
	fi
	grep -q 'IO still in flight' "$LOGDIR/fio-new$i.log" ||
		die "new writer refused for another reason: $(grep -i ibtrs "$LOGDIR/fio-new$i.log" | head -3)"
	sleep 0.5
done
[ -n "$ok" ] || die "new writer never admitted"
log "new writer admitted at attempt $ok"

# Order in the server's log: the old handle drained (its session gone)
# before the new rw open was granted.
gone=$(line_of "sess $OLD_SESS: gone" "$SRV_LOG")
opened=$(grep -n "opened /dev/$DEV (rw" "$SRV_LOG" | sed -n 2p | cut -d: -f1)
[ "$gone" -gt 0 ] || die "old session never finished its IO"
[ "${opened:-0}" -gt "$gone" ] ||
	die "new rw open granted (log line $opened) before the old writes landed (line $gone)"
grep -q "in-flight IO drained, rw claim released" "$SRV_LOG" ||
	die "no claim release logged"
stop_server || die "daemon exit status $?"
log "PASS"
