#!/bin/bash
# 039-kclient-faulty-server: the kernel client's checks of a server that
# breaks the read rules on purpose (ibnbd-serverd --test-fault, a client-test
# mode of the userspace library), which no other kernel test reaches:
#  1. no-inval: reads are answered with a plain SEND although the client
#     asked for remote invalidation. The client must end the server's access
#     itself (LOCAL_INV, completed before the IO ends): 2 paths of verified
#     randrw, local_invs > 0 on both, no protocol error, a pattern checked
#     against the device directly in both directions.
#  2. short-read: successful reads over 4 KiB are answered 512 bytes short.
#     The client must fail such a read (EIO; never complete it with a
#     partly stale buffer), count a protocol error, fail and reconnect the
#     path; 4 KiB reads (answered in full) still work, also afterwards.
# Unmap, rmmod, clean kernel log, daemon exits 0.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kclt_need
need_bins
need_paths 2
setup_nullb
_val() {	# FILE LINE NAME: NAME=<n> of line LINE of a paths file
	sed -n "${2}p" "$1" | sed -n "s/.* $3=\([0-9]*\).*/\1/p"
}

# 1. no remote invalidation
start_server --test-fault no-inval
grep -q 'test faults 0x1' "$SRV_LOG" || die "the daemon did not report its test fault"
kclt_load reconnect_min_ms=300 reconnect_max_ms=1000
kclt_map "sessname=kni$(kclt_paths 2) device_path=nullb0"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
kfio ni --rw=randrw --bssplit=4k/50:16k/30:64k/20 --iodepth=16 --size=16m \
	--verify=crc32c --do_verify=1 --verify_fatal=1
cmp_pattern "/dev/$KCLT_DEV" /dev/nullb0 100 11
cmp_pattern /dev/nullb0 "/dev/$KCLT_DEV" 120 11
cat "$P" | tee "$LOGDIR/paths-ni.txt"
for l in 1 2; do
	n=$(_val "$LOGDIR/paths-ni.txt" $l local_invs)
	[ "${n:-0}" -gt 0 ] || die "path $l: no LOCAL_INV although the server did not invalidate"
	[ "$(_val "$LOGDIR/paths-ni.txt" $l proto_errors)" = 0 ] ||
		die "path $l: protocol errors for answers without invalidation"
	log "path $l: $n local invalidations"
done
kclt_unmap "$KCLT_DEV"
stop_server || die "ibnbd-serverd exited with $?"

# 2. short read answers
start_server --test-fault short-read
kclt_map "sessname=ksr$(kclt_paths 1) device_path=nullb0"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
dd if="/dev/$KCLT_DEV" of=/dev/null bs=4k count=4 iflag=direct status=none ||
	die "a 4 KiB read failed"
if dd if="/dev/$KCLT_DEV" of="$LOGDIR/short.bin" bs=64k count=1 iflag=direct \
	status=none 2>"$LOGDIR/dd-short.err"; then
	die "a read answered short succeeded"
fi
grep -q 'Input/output error' "$LOGDIR/dd-short.err" ||
	die "the short read did not fail with EIO: $(cat "$LOGDIR/dd-short.err")"
kmsgs | grep -q 'protocol error: chunk [0-9]*: successful READ answer shorter or longer than the request' ||
	die "no protocol error logged for the short answer"
[ "$(_val "$P" 1 proto_errors)" -ge 1 ] || die "no protocol error counted"
kclt_wait_connected "$P" 1 || die "the path did not reconnect: $(cat "$P")"
dd if="/dev/$KCLT_DEV" of=/dev/null bs=4k count=4 iflag=direct status=none ||
	die "a 4 KiB read after the reconnect failed"
log "short read refused (EIO), path reconnected, 4 KiB reads work"
kclt_unmap "$KCLT_DEV"
kclt_unload
stop_server || die "ibnbd-serverd exited with $?"
kmod_log_check
log "PASS"
