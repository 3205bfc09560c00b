#!/bin/bash
# 005-sigterm-inflight: SIGTERM while fio has IO in flight: the daemon
# drains in-flight IO, writes its stats, closes the sessions and exits 0.
# (The client side of this - reconnect and completion - is fio-engine's
# 002-server-restart test.)
# TIMEOUT=240
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server
run_fio busy --paths="$(fio_paths 1)" --devpath=nullb0 --rw=randrw --bs=16k \
	--iodepth=32 --size=64m --time_based --runtime=60 --ctrl_loss_tmo=2 &
FIO=$!
sleep 6
grep -q 'opened /dev/nullb0' "$SRV_LOG" || die "fio never opened the device"
stop_server TERM; rc=$?
[ $rc -eq 0 ] || die "daemon exit status $rc after SIGTERM"
grep -q 'shutting down' "$SRV_LOG" || die "no shutdown message"
grep -q 'exited cleanly' "$SRV_LOG" || die "no clean exit"
grep -q '^total reads=[1-9]' "$STATS" || die "stats file missing at exit"
wait $FIO
log "fio ended with status $? (expected to fail: ctrl_loss_tmo=2, no server)"
log "PASS"
