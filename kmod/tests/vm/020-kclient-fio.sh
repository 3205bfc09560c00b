#!/bin/bash
# 020-kclient-fio: the kernel client (ibtrs-client.ko + ibnbd-client.ko)
# against the kernel server (ibtrs-server.ko + ibnbd-server.ko) in the same
# guest, over the testbed's rxe paths, serving a memory-backed null_blk:
#  1. bad map_device strings are refused with EINVAL (and a log line naming
#     the field);
#  2. nullb0 mapped over 1 path via sysfs: fio libaio direct=1 with
#     verify=crc32c on /dev/ibnbdN, 4k random writes and 64k-128k mixed;
#  3. independent check: a pattern written through /dev/ibnbdN is read from
#     /dev/nullb0 directly and compared, and the reverse;
#  4. unmap; the same device mapped over 2 paths: fio 4k-128k randrw
#     verified, both paths carried requests and answers, reads were
#     remotely invalidated (no LOCAL_INV fallback, no protocol error);
#  5. an open device refuses a normal unmap (EBUSY); unmap; rmmod all; the
#     test's kernel log has no WARNING, BUG, Oops, hung task, KASAN/slab
#     report.
# A 128 KiB IO stays one request (writes: data in a WRITE of its own when
# its 32 segments do not fit beside the header SGE).
# TIMEOUT=300
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
setup_nullb
kmod_load
kclt_load

# 1. bad strings
p1=$(kclt_paths 1)
p2=$(kclt_paths 2)
kclt_map_fails "sessname=bad device_path=nullb0"
kmsgs | grep -q 'map_device: path missing' || die "no log line for the missing path"
kclt_map_fails "sessname=bad path=10.0.0.300 device_path=nullb0"
kmsgs | grep -q "map_device: bad path '10.0.0.300'" || die "no log line for the bad path"
kclt_map_fails "sessname=bad$p1 device_path=nullb0 access_mode=rx"
kmsgs | grep -q "map_device: bad access_mode 'rx'" || die "no log line for the bad access_mode"
kclt_map_fails "sessname=bad$p1 device_path=nullb0 colour=blue"
kmsgs | grep -q "map_device: unknown field 'colour'" || die "no log line for the unknown field"
kclt_map_fails "$p1 device_path=nullb0"
kmsgs | grep -q "map_device: sessname missing" || die "no log line for the missing sessname"
[ -z "$(ls $KCLT_CTL/devices)" ] || die "a refused map left a device"
log "bad map strings refused with EINVAL"

# 2. one path
kclt_map "sessname=kc1$p1 device_path=nullb0"
d1=$KCLT_DEV
cat "$KCLT_CTL/devices/$d1/state" "$KCLT_CTL/devices/$d1/session" \
	"$KCLT_CTL/devices/$d1/mapping_path"
[ "$(cat "$KCLT_CTL/devices/$d1/state")" = open ] || die "state not open"
[ "$(cat "$KCLT_CTL/devices/$d1/session")" = kc1 ] || die "session not kc1"
[ "$(cat "$KCLT_CTL/devices/$d1/mapping_path")" = nullb0 ] || die "mapping_path"
[ "$(blockdev --getsize64 /dev/$d1)" = "$(blockdev --getsize64 /dev/nullb0)" ] ||
	die "size differs from nullb0's"
kfio w4k --rw=randwrite --bs=4k --iodepth=16 --size=16m --verify=crc32c \
	--do_verify=1 --verify_fatal=1
kfio rw64 --rw=randrw --bsrange=64k-128k --bs_unaligned=0 --iodepth=8 \
	--offset=32m --size=32m --verify=crc32c --do_verify=1 --verify_fatal=1
# 3. independent check, both directions
cmp_pattern "/dev/$d1" /dev/nullb0 100
cmp_pattern /dev/nullb0 "/dev/$d1" 120
# a 128 KiB IO (32 pages: more segments than fit beside the request header
# on rxe's 32 SGEs) stays one request: the data goes in a WRITE of its own
# instead of the block layer splitting it (124k + 4k before)
_stat() { awk -v f="$1" '{ print $f }' "/sys/block/$d1/stat"; }
log "max_segments $(cat /sys/block/$d1/queue/max_segments), max_sectors_kb $(cat /sys/block/$d1/queue/max_sectors_kb)"
w0=$(_stat 5) r0=$(_stat 1)
# 16 writes and 16 reads of 128 KiB, each from 32 pages that are never
# adjacent, neither in memory (every other page of a mapping whose pages
# were all faulted in: 32 segments, not merged)
python3 - "/dev/$d1" <<'PYEOF' || die "128 KiB IOs of 32 segments failed"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_DIRECT)
w = mmap.mmap(-1, 64 * 4096)
r = mmap.mmap(-1, 64 * 4096)
# fault every page in first: the even pages then sit on every other frame
# (touching only them would give consecutive frames, merged by the block
# layer into a few segments)
w[:] = bytes(64 * 4096)
r[:] = bytes(64 * 4096)
for k in range(16):
    for p in range(32):
        w[2 * p * 4096:(2 * p + 1) * 4096] = os.urandom(4096)
    wv = [memoryview(w)[2 * p * 4096:(2 * p + 1) * 4096] for p in range(32)]
    rv = [memoryview(r)[2 * p * 4096:(2 * p + 1) * 4096] for p in range(32)]
    off = (300 << 20) + k * (128 << 10)
    assert os.pwritev(fd, wv, off) == 128 << 10
    assert os.preadv(fd, rv, off) == 128 << 10
    if any(bytes(a) != bytes(b) for a, b in zip(wv, rv)):
        sys.exit("IO %d read back different" % k)
os.close(fd)
PYEOF
w=$(($(_stat 5) - w0)) r=$(($(_stat 1) - r0))
[ $w = 16 ] || die "16 writes of 128 KiB became $w requests"
[ $r = 16 ] || die "16 reads of 128 KiB became $r requests"
log "16 x 128 KiB: $w write and $r read requests"
cat "$KCLT_CTL/devices/$d1/paths"
kclt_unmap "$d1"

# 4. two paths
kclt_map "sessname=kc2$p2 device_path=/dev/nullb0"
d2=$KCLT_DEV
kfio rw2 --rw=randrw --bssplit=4k/40:16k/30:64k/20:128k/10 --iodepth=16 \
	--offset=64m --size=32m --verify=crc32c --do_verify=1 --verify_fatal=1
cmp_pattern "/dev/$d2" /dev/nullb0 140
cmp_pattern /dev/nullb0 "/dev/$d2" 160
kclt_check_2paths

# 5. unmap refused while open, then done
exec 3<"/dev/$d2"
err=$(echo normal 2>&1 >"$KCLT_CTL/devices/$d2/unmap_device") &&
	die "unmap of an open device succeeded"
echo "$err" | grep -q 'busy' || die "unmap of an open device: $err (not EBUSY)"
exec 3<&-
kclt_finish
kmsgs | grep 'ibtrs_client\|ibnbd_client' | tail -12
log "PASS"
