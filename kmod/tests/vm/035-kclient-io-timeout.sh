#!/bin/bash
# 035-kclient-io-timeout: IO fails instead of hanging when the server is
# gone for good. ibtrs-client loaded with ctrl_loss_tmo_ms=4000; nullb0
# mapped over 2 paths, a read works; the server modules are removed and not
# loaded again:
#  1. an O_DIRECT 4k read of /dev/ibnbdN ends with an I/O error within
#     ctrl_loss_tmo + 5 s of the removal (not before 3 s: it waited);
#  2. a second read fails too (no waiting beyond the deadline is allowed:
#     within 5 s);
#  3. the device can be unmapped (normal; force if normal is refused),
#     within 10 s, and the session goes;
#  4. the server loaded again: a new mapping carries verified IO; unmap,
#     rmmod, clean kernel log.
# TIMEOUT=120
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
setup_nullb
TMO=4000
kmod_load
kclt_load ctrl_loss_tmo_ms=$TMO reconnect_min_ms=500 reconnect_max_ms=1000
kclt_map "sessname=ktmo$(kclt_paths 2) device_path=nullb0"
D=$KCLT_DEV
P=$KCLT_CTL/devices/$D/paths
dd if="/dev/$D" of=/dev/null bs=4k count=1 iflag=direct status=none ||
	die "read before the removal failed"

# rd_bg SKIP: a 4k O_DIRECT read in the background ($RD_PID, its output in
# $LOGDIR/rd-SKIP.txt); rd_wait SKIP MAX_S: waits up to MAX_S s, sets RD_MS
# and RD_RC; fails the test if the read still hangs.
rd_bg() {
	dd if="/dev/$D" of=/dev/null bs=4k count=1 skip="$1" iflag=direct \
		status=none >"$LOGDIR/rd-$1.txt" 2>&1 &
	RD_PID=$!
}
rd_wait() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		kill -0 $RD_PID 2>/dev/null || break
		sleep 0.1
	done
	RD_MS=$((($(date +%s%N) - t0) / 1000000))
	if kill -0 $RD_PID 2>/dev/null; then
		cat "$P"
		die "the read at block $1 still hangs $RD_MS ms after the server went"
	fi
	wait $RD_PID
	RD_RC=$?
}

log "removing the server modules"
t0=$(date +%s%N)
kmod_unload
rd_bg 100
rd_wait 100 $((TMO / 1000 + 5))
cat "$P"
log "first read: exit $RD_RC after $RD_MS ms: $(cat "$LOGDIR/rd-100.txt")"
[ $RD_RC != 0 ] || die "the read succeeded with no server"
grep -q 'Input/output error' "$LOGDIR/rd-100.txt" || die "the read did not fail with EIO"
[ $RD_MS -ge 3000 ] || die "the read failed after $RD_MS ms, without waiting ctrl_loss_tmo_ms"

t0=$(date +%s%N)
rd_bg 200
rd_wait 200 5
log "second read: exit $RD_RC after $RD_MS ms: $(cat "$LOGDIR/rd-200.txt")"
[ $RD_RC != 0 ] || die "the second read succeeded with no server"
grep -q 'Input/output error' "$LOGDIR/rd-200.txt" || die "the second read did not fail with EIO"

t0=$(date +%s%N)
mode=normal
( echo normal >"$KCLT_CTL/devices/$D/unmap_device" ) 2>"$LOGDIR/unmap.txt" &
u=$!
for i in $(seq 1 100); do kill -0 $u 2>/dev/null || break; sleep 0.1; done
kill -0 $u 2>/dev/null && die "normal unmap with the server gone hangs for 10 s"
if ! wait $u; then
	log "normal unmap refused: $(cat "$LOGDIR/unmap.txt"); force"
	mode=force
	( echo force >"$KCLT_CTL/devices/$D/unmap_device" ) 2>"$LOGDIR/unmap.txt" &
	u=$!
	for i in $(seq 1 100); do kill -0 $u 2>/dev/null || break; sleep 0.1; done
	kill -0 $u 2>/dev/null && die "forced unmap with the server gone hangs for 10 s"
	wait $u || die "forced unmap failed: $(cat "$LOGDIR/unmap.txt")"
fi
[ -e "$KCLT_CTL/devices/$D" ] && die "$D still in sysfs after the unmap"
for i in $(seq 1 30); do [ -b "/dev/$D" ] || break; sleep 0.1; done
[ -b "/dev/$D" ] && die "/dev/$D still there after the unmap"
log "unmapped ($mode) in $((($(date +%s%N) - t0) / 1000000)) ms"

log "loading the server modules again"
kmod_load
kclt_map "sessname=ktmo2$(kclt_paths 2) device_path=nullb0"
kfio after --rw=randwrite --bs=4k --iodepth=16 --size=8m --verify=crc32c \
	--do_verify=1 --verify_fatal=1
kmsgs | grep 'ibtrs_client\|ibnbd_client' | grep -E 'fail|closed|error|unmapped' | head -10
kclt_finish 10
log "PASS"
