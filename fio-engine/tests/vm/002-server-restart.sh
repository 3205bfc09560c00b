#!/bin/bash
# 002-server-restart: the daemon is stopped (SIGTERM) once IO is flowing
# and started again 3 s later. IO queues while no path is up
# (ctrl_loss_tmo=60), the transport reconnects, the server answers the old
# device handle with -ESTALE, the engine re-opens the device and resubmits:
# the job completes, verify passes, and the engine logged the re-open and
# counted it (report: reopens >= 1, stale >= 1).
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"
need_bins
setup_nullb
start_server

run_fio rs --paths="$(fio_paths)" --devpath=nullb0 --rw=randwrite --bs=4k \
	--iodepth=16 --size=32m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--rate=4m --ctrl_loss_tmo=60 &
FIO=$!
wait_srv_io 500 60 $FIO
log "stopping the daemon"
stop_server TERM || die "daemon exit status $? on SIGTERM"
sleep 3
log "starting the daemon again"
start_server
wait $FIO; rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the server restart"
grep -q 'err= 0' "$LOGDIR/fio-rs.log" || die "fio reported errors"
grep -q 're-opening' "$LOGDIR/fio-rs.log" || die "the engine did not log a re-open"
has_report rs || die "no engine report in the fio output"
grep -h ': report: ios=' "$LOGDIR/fio-rs.log"
[ "$(report_val rs reopens)" -ge 1 ] || die "report: no re-open counted"
[ "$(report_val rs stale)" -ge 1 ] || die "report: no -ESTALE answer counted"
stop_server || die "daemon exit status $?"
log "PASS"
