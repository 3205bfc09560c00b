#!/bin/bash
# 005-sigterm-inflight: SIGTERM while writes are in flight (held 1 s each by
# dm-delay, so there always are some): the daemon answers every IO that was
# in flight at the signal (its counters: answered since the signal >= in
# flight at the signal, none left in flight at exit), writes its stats,
# closes the sessions and exits 0. The client's view: after the daemon is
# started again, fio re-sends what was left unanswered and its write+verify
# job ends without an error, so the answered writes were really written.
# TIMEOUT=240
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
dm_delay ibnbd-slow5 /dev/nullb0 0 1000
start_server
start_fio busy --paths="$(fio_paths 1)" --devpath=mapper/ibnbd-slow5 \
	--rw=randwrite --bs=16k --iodepth=32 --size=8m --verify=crc32c \
	--do_verify=1 --verify_fatal=1 --ctrl_loss_tmo=60
FIO=$FIO_PID
for i in $(seq 1 100); do
	grep -q 'opened /dev/mapper/ibnbd-slow5' "$SRV_LOG" && break
	sleep 0.1
done
grep -q 'opened /dev/mapper/ibnbd-slow5' "$SRV_LOG" || die "fio never opened the device"
sleep 4
stop_server TERM; rc=$?
[ $rc -eq 0 ] || die "daemon exit status $rc after SIGTERM"
grep -q 'shutting down' "$SRV_LOG" || die "no shutdown message"
grep -q 'exited cleanly' "$SRV_LOG" || die "no clean exit"
grep -q '^total .*writes=[1-9]' "$STATS" || die "stats file missing at exit"

# The daemon's counters (stats file written at exit).
head -1 "$STATS"
at_stop=$(sed -n '1s/.* inflight_at_stop=\([0-9]*\).*/\1/p' "$STATS")
answered=$(sed -n '1s/.* answered_since_stop=\([0-9]*\).*/\1/p' "$STATS")
left=$(sed -n '1s/.* inflight=\([0-9]*\).*/\1/p' "$STATS")
[ "${at_stop:-0}" -ge 1 ] || die "no IO in flight at the signal (${at_stop:-?}): nothing was tested"
[ "${answered:-0}" -ge "$at_stop" ] ||
	die "only ${answered:-?} of the $at_stop IOs in flight at the signal were answered"
[ "${left:-1}" -eq 0 ] || die "$left IOs still in flight at exit"
grep -q '^total .* errors=0' "$STATS" || die "IO errors counted: $(grep '^total' "$STATS")"
log "in flight at the signal: $at_stop, answered since: $answered"

# The client's outcome: restart, fio finishes and verifies.
mv "$SRV_LOG" "$LOGDIR/serverd-1.log"
start_server
wait $FIO; rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the server restart"
grep -q 'err= 0' "$LOGDIR/fio-busy.log" || die "fio reported errors"
stop_server || die "daemon exit status $?"
log "PASS"
