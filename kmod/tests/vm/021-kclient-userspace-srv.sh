#!/bin/bash
# 021-kclient-userspace-srv: the kernel client (ibtrs-client.ko +
# ibnbd-client.ko) against the userspace daemon server/build/ibnbd-serverd
# serving a memory-backed null_blk: nullb0 mapped over 1 path, then over
# 2 paths; fio libaio direct=1 verify=crc32c (4k random writes, 4k-128k
# mixed), a pattern cross-checked with /dev/nullb0 in both directions, both
# paths carried IO with remote invalidation only, unmap, clean rmmod and
# kernel log, daemon exits 0 on SIGTERM.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kclt_need
need_bins
need_paths 2
setup_nullb
start_server
kclt_load

kfio() {
	local name=$1
	shift
	timeout -k 10 "$FIO_TIMEOUT" fio --name="$name" \
		--filename="/dev/$KCLT_DEV" --ioengine=libaio --direct=1 \
		"$@" >"$LOGDIR/fio-$name.log" 2>&1 ||
		die "fio $name failed: $(tail -5 "$LOGDIR/fio-$name.log")"
	grep -q 'err= 0' "$LOGDIR/fio-$name.log" || die "fio $name reported errors"
	log "fio $name: OK ($(grep -o 'IOPS=[^,]*' "$LOGDIR/fio-$name.log" | tr '\n' ' '))"
}

cmp_pattern() {
	python3 - "$@" <<'PYEOF' || die "$1 -> $2: content differs"
import mmap, os, sys
wdev, rdev, off = sys.argv[1], sys.argv[2], int(sys.argv[3]) << 20
n = 4 << 20
pat = bytes((i * 13 + off // 4096) & 0xff for i in range(4099))
buf = mmap.mmap(-1, n)
data = (pat * (n // len(pat) + 1))[:n]
buf[:] = data
fd = os.open(wdev, os.O_WRONLY | os.O_DIRECT)
assert os.pwritev(fd, [buf], off) == n
os.close(fd)
rbuf = mmap.mmap(-1, n)
fd = os.open(rdev, os.O_RDONLY | os.O_DIRECT)
r = os.preadv(fd, [rbuf], off)
os.close(fd)
if r != n or rbuf[:] != data:
    print("%s -> %s at %d: %d bytes read, content differs" % (wdev, rdev, off, r))
    sys.exit(1)
print("%s -> %s: 4 MiB at %d MiB equal" % (wdev, rdev, off >> 20))
PYEOF
}

kclt_map "sessname=ku1$(kclt_paths 1) device_path=nullb0"
kfio w4k --rw=randwrite --bs=4k --iodepth=16 --size=16m --verify=crc32c \
	--do_verify=1 --verify_fatal=1
cmp_pattern "/dev/$KCLT_DEV" /dev/nullb0 100
kclt_unmap "$KCLT_DEV"

kclt_map "sessname=ku2$(kclt_paths 2) device_path=nullb0"
kfio rw2 --rw=randrw --bssplit=4k/40:16k/30:64k/20:128k/10 --iodepth=16 \
	--offset=64m --size=32m --verify=crc32c --do_verify=1 --verify_fatal=1
cmp_pattern "/dev/$KCLT_DEV" /dev/nullb0 140
cmp_pattern /dev/nullb0 "/dev/$KCLT_DEV" 160
cat "$KCLT_CTL/devices/$KCLT_DEV/paths" | tee "$LOGDIR/paths.txt"
[ "$(grep -c 'state=connected reqs=[1-9][0-9]* rsps=[1-9]' "$LOGDIR/paths.txt")" = 2 ] ||
	die "not both paths connected with requests and answers"
[ "$(grep -c 'local_invs=0 ' "$LOGDIR/paths.txt")" = 2 ] ||
	die "reads fell back to LOCAL_INV"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths.txt" && die "protocol errors counted"
kclt_unmap "$KCLT_DEV"
kclt_unload
stop_server || die "ibnbd-serverd exited with $?"
kmod_log_check
kmsgs | grep 'ibtrs_client\|ibnbd_client' | tail -8
log "PASS"
