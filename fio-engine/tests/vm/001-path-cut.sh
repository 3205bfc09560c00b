#!/bin/bash
# 001-path-cut: fio write+verify over 2 paths; path 1 is cut once IO is
# flowing (the daemon has served IO), and restored 3 s after the daemon
# has failed it (the session down to 1 path). The daemon sees the session
# come back to 2 paths while fio still writes; the job completes without
# errors and verify passes; the engine's end-of-job report shows that IO
# failed over from path 1 (failovers), that path 1 reconnected
# (reconnects), and that path 2 carried IO.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"
need_bins
need_paths 2
type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
setup_nullb
start_server

# 128 MiB written at 6 MiB/s: 21 s of writes (the verify read after them
# is not rate-limited and takes 2-4 s), so ~14 s remain after the restore
# for path 1 to rejoin: the first CM request after a link comes back may be
# lost (10 s connect timeout, as trs/tests/vm/020). CI once met a 64 MiB
# job (10.7 s of writes) that ended first.
run_fio cut --paths="$(fio_paths 2)" --devpath=nullb0 --rw=randwrite --bs=4k \
	--iodepth=16 --size=128m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--rate=6m --ctrl_loss_tmo=30 --connect_timeout=10000 &
FIO=$!
wait_srv_io 500 60 $FIO
log "cutting path 1"
tb_path_cut 1
# the daemon fails the silent path on its heartbeat (3 x 500 ms)
wait_srv_paths 1 6 $FIO
sleep 3
kill -0 $FIO 2>/dev/null || die "fio ended while path 1 was cut"
log "restoring path 1"
tb_path_restore 1
wait_srv_paths 2 14 $FIO
wait $FIO; rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the path cut"
grep -q 'err= 0' "$LOGDIR/fio-cut.log" || die "fio reported errors"
has_report cut || die "no engine report in the fio output"
grep -h ': report: path' "$LOGDIR/fio-cut.log"
[ "$(report_path_val cut 1 failovers)" -ge 1 ] || die "no IO failed over from path 1"
[ "$(report_path_val cut 1 reconnects)" -ge 1 ] || die "path 1 did not reconnect"
[ "$(report_path_val cut 2 writes)" -ge 1 ] || die "path 2 carried no writes"
stop_server || die "daemon exit status $?"
log "PASS"
