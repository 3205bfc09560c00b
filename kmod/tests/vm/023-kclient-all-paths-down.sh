#!/bin/bash
# 023-kclient-all-paths-down: the kernel client over 2 paths to the kernel
# server; both paths are cut for 5 s during a verified fio write job on
# /dev/ibnbdN, then restored. With every path down, unanswered IO waits
# for a reconnect and new IO is retried (ctrl_loss_tmo_ms, 30 s): fio ends
# without an error and verifies its data, both paths reconnected
# (reconnects >= 1), IO failed over (failovers >= 1 in total); unmap,
# rmmod, clean kernel log.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
setup_nullb
kmod_load
kclt_load reconnect_min_ms=500 reconnect_max_ms=2000

kclt_map "sessname=kdown$(kclt_paths 2) device_path=nullb0"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
FIO_TIMEOUT=150
timeout -k 10 "$FIO_TIMEOUT" fio --name=down --filename="/dev/$KCLT_DEV" \
	--ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=16 \
	--size=48m --rate=6m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	>"$LOGDIR/fio-down.log" 2>&1 &
FIO=$!
sleep 2
[ "$(grep -c 'state=connected reqs=[1-9]' "$P")" = 2 ] ||
	die "not both paths carrying IO before the cut"
log "cutting both paths"
tb_path_cut 1
tb_path_cut 2
sleep 5
kill -0 $FIO 2>/dev/null || die "fio ended while every path was cut"
cat "$P" | tee "$LOGDIR/paths-cut.txt"
log "restoring both paths"
tb_path_restore 1
tb_path_restore 2
wait $FIO
rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the cut: $(tail -5 "$LOGDIR/fio-down.log")"
grep -q 'err= 0' "$LOGDIR/fio-down.log" || die "fio reported errors"
for i in $(seq 1 100); do
	[ "$(grep -c 'state=connected' "$P")" = 2 ] && break
	sleep 0.1
done
cat "$P" | tee "$LOGDIR/paths-after.txt"
[ "$(grep -c 'state=connected.*reconnects=[1-9]' "$LOGDIR/paths-after.txt")" = 2 ] ||
	die "not both paths reconnected"
grep -q 'failovers=[1-9]' "$LOGDIR/paths-after.txt" || die "no IO failed over"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
kmsgs | grep 'ibtrs_client' | grep -E 'failed|closed|connected' | head -12
kclt_unmap "$KCLT_DEV"
kclt_unload
kmod_unload
kmod_log_check 10
log "PASS"
