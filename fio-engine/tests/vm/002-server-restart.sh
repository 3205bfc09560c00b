#!/bin/bash
# 002-server-restart: the daemon is stopped (SIGTERM) mid-run and started
# again 3 s later. IO queues while no path is up (ctrl_loss_tmo=60), the
# transport reconnects, the server answers the old device handle with
# -ESTALE, the engine re-opens the device and resubmits: the job completes
# and verify passes.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server

run_fio rs --paths="$(fio_paths)" --devpath=nullb0 --rw=randwrite --bs=4k \
	--iodepth=16 --size=32m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--rate=4m --ctrl_loss_tmo=60 &
FIO=$!
sleep 4
kill -0 $FIO 2>/dev/null || die "fio ended before the restart"
log "stopping the daemon"
stop_server TERM || die "daemon exit status $? on SIGTERM"
sleep 3
log "starting the daemon again"
start_server
wait $FIO; rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the server restart"
grep -q 'err= 0' "$LOGDIR/fio-rs.log" || die "fio reported errors"
grep -q 're-opening' "$LOGDIR/fio-rs.log" || log "note: engine did not need to re-open (no IO hit the new server with the old handle?)"
stop_server || die "daemon exit status $?"
log "PASS"
