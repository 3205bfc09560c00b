#!/bin/bash
# 003-access-modes: while one session holds /dev/nullb0 rw, a second rw
# opener is refused with a clear reason; a migration opener is allowed (2nd
# writer), a third writer is refused; ro is always allowed.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server
P=$(fio_paths 1)

# Holder: rw, time based, in the background.
run_fio holder --paths="$P" --devpath=nullb0 --rw=randwrite --bs=4k \
	--size=16m --time_based --runtime=40 --iodepth=1 --rate_iops=50 &
HOLDER=$!
for i in $(seq 1 100); do
	grep -q 'opened /dev/nullb0 (rw' "$SRV_LOG" && break
	sleep 0.2
done
grep -q 'opened /dev/nullb0 (rw' "$SRV_LOG" || die "holder never opened the device"

run_fio second --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=1m \
	--access_mode=rw && die "second rw opener was NOT refused"
grep -q 'already opened for writing' "$LOGDIR/fio-second.log" ||
	die "refusal without a clear reason: $(grep -i ibtrs "$LOGDIR/fio-second.log")"
grep -q "refused open of 'nullb0' (rw)" "$SRV_LOG" || die "server did not log the refusal"

run_fio reader --paths="$P" --devpath=nullb0 --rw=read --bs=4k --size=1m \
	--access_mode=ro || die "ro opener refused"

# migration holds the second writer slot while a third tries.
run_fio mig --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=4m \
	--time_based --runtime=8 --rate_iops=50 --access_mode=migration &
MIG=$!
sleep 4
run_fio third --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=1m \
	--access_mode=migration && die "third writer was NOT refused"
grep -q 'two writers' "$LOGDIR/fio-third.log" || die "third writer: unclear reason"
wait $MIG || die "migration opener failed: $(tail -5 "$LOGDIR/fio-mig.log")"

kill -INT $HOLDER 2>/dev/null
wait $HOLDER
# After the holder is gone, rw is available again.
run_fio again --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=1m ||
	die "rw open after the holder left failed"
stop_server || die "daemon exit status $?"
log "PASS"
