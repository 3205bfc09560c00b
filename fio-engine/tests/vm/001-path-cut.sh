#!/bin/bash
# 001-path-cut: fio write+verify over 2 paths; path 1 is cut mid-run and
# restored later. The job completes and verify passes (IO fails over to the
# surviving path).
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
need_paths 2
type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
setup_nullb
start_server

run_fio cut --paths="$(fio_paths 2)" --devpath=nullb0 --rw=randwrite --bs=4k \
	--iodepth=16 --size=48m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--rate=6m --ctrl_loss_tmo=30 &
FIO=$!
sleep 4
kill -0 $FIO 2>/dev/null || die "fio ended before the cut: $(tail -5 "$LOGDIR/fio-cut.log")"
log "cutting path 1"
tb_path_cut 1
sleep 6
log "restoring path 1"
tb_path_restore 1
wait $FIO; rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the path cut"
grep -q 'err= 0' "$LOGDIR/fio-cut.log" || die "fio reported errors"
stop_server || die "daemon exit status $?"
log "PASS"
