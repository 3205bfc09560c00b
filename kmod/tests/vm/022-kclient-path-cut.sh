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
kmod_need
kclt_need
need_paths 2
type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
setup_nullb
kmod_load
kclt_load reconnect_min_ms=500 reconnect_max_ms=2000

kclt_map "sessname=kcut$(kclt_paths 2) device_path=nullb0"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
FIO_TIMEOUT=150
# 48 MiB at 6 MiB/s: ~8 s of writes, then the verify reads
timeout -k 10 "$FIO_TIMEOUT" fio --name=cut --filename="/dev/$KCLT_DEV" \
	--ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=16 \
	--size=48m --rate=6m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	>"$LOGDIR/fio-cut.log" 2>&1 &
FIO=$!
sleep 2
cat "$P"
[ "$(grep -c 'state=connected reqs=[1-9]' "$P")" = 2 ] ||
	die "not both paths carrying IO before the cut"
log "cutting path 1"
tb_path_cut 1
sleep 6
kill -0 $FIO 2>/dev/null || die "fio ended while path 1 was cut"
cat "$P" | tee "$LOGDIR/paths-cut.txt"
s1=$(tb_nth 1 "$TB_SRV_ADDRS")
kmsgs | grep -q "path $s1:$SRV_PORT: failed" || die "the client did not fail the cut path"
log "restoring path 1"
tb_path_restore 1
wait $FIO
rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the path cut: $(tail -5 "$LOGDIR/fio-cut.log")"
grep -q 'err= 0' "$LOGDIR/fio-cut.log" || die "fio reported errors"
for i in $(seq 1 100); do
	[ "$(grep -c 'state=connected' "$P")" = 2 ] && break
	sleep 0.1
done
cat "$P" | tee "$LOGDIR/paths-after.txt"
p1=$(sed -n 1p "$LOGDIR/paths-after.txt")
echo "$p1" | grep -q 'state=connected' || die "path 1 did not come back"
echo "$p1" | grep -q 'failovers=[1-9]' || die "no IO failed over from path 1"
echo "$p1" | grep -q 'reconnects=[1-9]' || die "path 1 did not reconnect"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
kmsgs | grep 'ibtrs_client' | grep -E 'failed|closed|reconnect|connected' | head -12
kclt_unmap "$KCLT_DEV"
kclt_unload
kmod_unload
kmod_log_check 10
log "PASS"
