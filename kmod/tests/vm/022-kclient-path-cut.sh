#!/bin/bash
# 022-kclient-path-cut: the kernel client over 2 paths to the kernel
# server; path 1 is cut (link down) during a verified fio write job on
# /dev/ibnbdN and restored 6 s later (the testbed re-creates its rxe
# device). The client must fail path 1 (completion error or heartbeat
# silence), re-post its unanswered IO on path 2 (failovers >= 1), reconnect
# path 1 with backoff (reconnects >= 1, both paths connected again); fio
# ends without error and verifies its data; unmap, rmmod, clean kernel log.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kclt_cut_setup kcut
# 96 MiB: 16 s of writes, so fio still runs when the cut is 6 s old (with
# 48 MiB it once ended first: writes 8 s, the verify reads 2.4 s, the cut
# 4.5 s after fio's start)
kclt_cut_fio cut 96m
log "cutting path 1"
tb_path_cut 1
sleep 6
kill -0 $KFIO_PID 2>/dev/null || die "fio ended while path 1 was cut"
cat "$P" | tee "$LOGDIR/paths-cut.txt"
s1=$(tb_nth 1 "$TB_SRV_ADDRS")
kmsgs | grep -q "path $s1:$SRV_PORT: failed" || die "the client did not fail the cut path"
log "restoring path 1"
tb_path_restore 1
kfio_wait cut "across the path cut"
kclt_wait_connected "$P" 2
cat "$P" | tee "$LOGDIR/paths-after.txt"
p1=$(sed -n 1p "$LOGDIR/paths-after.txt")
echo "$p1" | grep -q 'state=connected' || die "path 1 did not come back"
echo "$p1" | grep -q 'failovers=[1-9]' || die "no IO failed over from path 1"
echo "$p1" | grep -q 'reconnects=[1-9]' || die "path 1 did not reconnect"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
kmsgs | grep 'ibtrs_client' | grep -E 'failed|closed|reconnect|connected' | head -12
kclt_finish 10
log "PASS"
