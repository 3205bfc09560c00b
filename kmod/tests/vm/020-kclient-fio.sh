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
