#!/bin/bash
# 027-kclient-server-stuck: a live server that never answers (its backing
# device suspended with `dmsetup suspend`: the server keeps answering
# heartbeats, the IO never completes). Before the fix the client's timeout
# handler only re-armed its timer: an O_DIRECT write hung for good and a
# forced unmap blocked in del_gendisk() (hung task). With ibnbd-client
# io_timeout_ms=2000:
#  1. a write fails (EIO) in bounded time: the first timeout fails its path
#     (the write is re-sent on the other path), the second gives up on it;
#     both are logged, both paths reconnect;
#  2. a forced unmap with a write in flight returns within 15 s and that
#     write fails;
#  3. the device resumed, a new mapping carries verified IO; modules unload,
#     clean kernel log.
# TIMEOUT=180
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
command -v dmsetup >/dev/null || skip "no dmsetup"
_ms() { date +%s%3N; }
setup_nullb
dm_delay kstk /dev/nullb0 0 0
kmod_load
KCLT_NBD_ARGS="io_timeout_ms=2000"
kclt_load reconnect_min_ms=300 reconnect_max_ms=1000
kclt_map "sessname=kstk$(kclt_paths 2) device_path=mapper/kstk"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
dd if=/dev/zero of="/dev/$KCLT_DEV" bs=4k count=16 oflag=direct status=none ||
	die "a write before the suspend failed"

log "suspending the server's device"
dmsetup suspend --noudevsync kstk || die "dmsetup suspend"
KMOD_EXTRA_CLEANUP='dmsetup resume --noudevsync kstk 2>/dev/null'
# 1. a write on the stuck server
t0=$(_ms)
timeout 60 dd if=/dev/urandom of="/dev/$KCLT_DEV" bs=4k count=1 seek=100 \
	oflag=direct status=none 2>"$LOGDIR/dd1.err"
rc=$?
ms=$(($(_ms) - t0))
log "write on the stuck server: exit $rc after $ms ms: $(cat "$LOGDIR/dd1.err")"
[ $rc = 124 ] && die "the write was still pending after 60 s"
[ $rc = 0 ] && die "the write succeeded on a suspended device"
grep -q 'Input/output error\|timed out' "$LOGDIR/dd1.err" || die "dd did not fail with EIO"
[ $ms -lt 30000 ] || die "the write took $ms ms to fail (2 timeouts of 2 s + 2 teardowns)"
kmsgs | grep -q "ibnbd_client: $KCLT_DEV: request .* not answered in 2000 ms: failing its path" ||
	die "no first-timeout line"
kmsgs | grep -q "ibnbd_client: $KCLT_DEV: request .* not answered in 2000 ms, again: failing it" ||
	die "no final-timeout line"
kclt_wait_connected "$P" 2 || die "paths not reconnected after the timeouts: $(cat "$P")"
cat "$P"

# 2. forced unmap with a write in flight
timeout 60 dd if=/dev/urandom of="/dev/$KCLT_DEV" bs=4k count=1 seek=200 \
	oflag=direct status=none 2>"$LOGDIR/dd2.err" &
DD=$!
sleep 1
kill -0 $DD 2>/dev/null || die "the second write ended before the unmap"
t0=$(_ms)
timeout 30 sh -c "echo force >$KCLT_CTL/devices/$KCLT_DEV/unmap_device"
rc=$?
ms=$(($(_ms) - t0))
[ $rc = 124 ] && die "the forced unmap was still blocked after 30 s"
[ $rc = 0 ] || die "the forced unmap failed ($rc)"
log "forced unmap with a write in flight: $ms ms"
[ $ms -lt 15000 ] || die "the forced unmap took $ms ms"
wait $DD && die "the write in flight during the forced unmap succeeded"
log "the write in flight failed: $(cat "$LOGDIR/dd2.err")"
[ ! -b "/dev/$KCLT_DEV" ] || die "/dev/$KCLT_DEV still there"

# 3. resumed: a new mapping works
dmsetup resume --noudevsync kstk || die "dmsetup resume"
KMOD_EXTRA_CLEANUP=
kclt_map "sessname=kstk2$(kclt_paths 2) device_path=mapper/kstk"
kfio after --rw=randwrite --bs=4k --iodepth=8 --size=4m --verify=crc32c \
	--do_verify=1 --verify_fatal=1
kclt_finish 30
log "PASS"
