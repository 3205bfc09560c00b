#!/bin/bash
# 010-kserver-fio: the kernel server (build/kmod/ibtrs-server.ko +
# ibnbd-server.ko, built by make -C kmod) serves a memory-backed null_blk
# beneath dev_search_path=/dev to the userspace fio engine:
#  1. write + verify (crc32c) over 1 path, 4k random;
#  2. mixed random read/write + verify over 2 paths (4k..128k blocks), both
#     paths must carry IO, the kernel log must show a 2-path session;
#  3. a read-only second session re-verifies step 1's data;
#  4. independent check: a known pattern written through the transport is
#     read back from the device directly (O_DIRECT dd) and compared;
#  5. an open outside dev_search_path is refused;
#  6. the modules unload; the kernel log of the test has no WARNING, BUG,
#     Oops, hung task, KASAN/UBSAN/slab report.
# TIMEOUT=240
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"

KB=${KMOD_BUILD:-$TB_TOP/build/kmod}
[ -f "$KB/ibtrs-server.ko" ] && [ -f "$KB/ibnbd-server.ko" ] ||
	skip "$KB/*.ko not built (make -C kmod)"
vm=$(modinfo -F vermagic "$KB/ibtrs-server.ko" | cut -d' ' -f1)
[ "$vm" = "$(uname -r)" ] || skip "modules built for $vm, guest runs $(uname -r)"
[ -e "$ENGINE_DIR/ibtrs.so" ] || skip "fio engine not built"
command -v fio >/dev/null || skip "fio not installed"
need_paths 2

KLOG=$LOGDIR/dmesg.log
dmesg_start=$(dmesg | wc -l)
kmsgs() { dmesg | tail -n +$((dmesg_start + 1)); }
loaded=0
unload() {
	rmmod ibnbd_server 2>/dev/null
	rmmod ibtrs_server 2>/dev/null
}
# On any exit: unload what is left, keep the kernel log.
trap '_rc=$?; kmsgs >"$KLOG"; [ $loaded = 1 ] && unload; rm -f /dev/ibnbd-esc
	(exit $_rc); cleanup_common' EXIT

modprobe rdma_cm || die "modprobe rdma_cm"
setup_nullb
insmod "$KB/ibtrs-server.ko" port="$SRV_PORT" || die "insmod ibtrs-server"
loaded=1
insmod "$KB/ibnbd-server.ko" dev_search_path=/dev || die "insmod ibnbd-server"
kmsgs | grep -q "ibtrs_server: listening on port $SRV_PORT" ||
	die "no listening line in the kernel log"

# 1. one path, random 4k writes, verified
run_fio w1 --paths="$(fio_paths 1)" --devpath=nullb0 --rw=randwrite \
	--bs=4k --iodepth=16 --size=16m --verify=crc32c --do_verify=1 \
	--verify_fatal=1 ||
	die "1 path write+verify failed: $(tail -5 "$LOGDIR/fio-w1.log")"
grep -q 'err= 0' "$LOGDIR/fio-w1.log" || die "fio w1 reported errors"
log "1 path: write + verify OK"

# 2. two paths, mixed sizes and directions, verified
run_fio rw2 --paths="$(fio_paths 2)" --devpath=/dev/nullb0 --rw=randrw \
	--bssplit=4k/40:16k/30:64k/20:128k/10 --iodepth=16 --offset=64m \
	--size=24m --verify=crc32c --do_verify=1 --verify_fatal=1 ||
	die "2 path randrw+verify failed: $(tail -5 "$LOGDIR/fio-rw2.log")"
grep -q 'err= 0' "$LOGDIR/fio-rw2.log" || die "fio rw2 reported errors"
for p in 1 2; do
	n=$(( $(report_path_val rw2 $p reads) + $(report_path_val rw2 $p writes) ))
	[ "$n" -gt 0 ] || die "path $p carried no IO"
	log "2 paths: path $p carried $n IOs"
done
kmsgs | grep -q 'joined (2 paths)' || die "no 2-path session in the kernel log"

# 3. read-only session re-verifies step 1 (same bs: the verify header)
run_fio r1 --paths="$(fio_paths 2)" --devpath=nullb0 --rw=read --bs=4k \
	--iodepth=8 --size=16m --verify=crc32c --do_verify=1 --verify_only=1 \
	--verify_fatal=1 || die "read-only re-verify failed"
kmsgs | grep -q 'opened /dev/nullb0 (ro)' || die "no ro open in the kernel log"

# 4. pattern through the transport, read back from the device itself
pat=0x0123456789abcdeffedcba9876543210
run_fio pw --paths="$(fio_paths 2)" --devpath=nullb0 --rw=write --bs=64k \
	--iodepth=8 --offset=128m --size=8m --buffer_pattern=$pat ||
	die "pattern write failed"
python3 - "$pat" <<'EOF' || die "device content differs from what was written"
import os, sys
pat = bytes.fromhex(sys.argv[1][2:])
fd = os.open("/dev/nullb0", os.O_RDONLY | os.O_DIRECT)
import mmap
buf = mmap.mmap(-1, 1 << 20)
bad = 0
for i in range(8):
    n = os.preadv(fd, [buf], (128 << 20) + (i << 20))
    if n != 1 << 20 or buf[:] != pat * ((1 << 20) // len(pat)):
        bad += 1
os.close(fd)
if bad:
    print("%d of 8 MiB differ" % bad)
    sys.exit(1)
print("8 MiB read back directly: equal")
EOF

# 5. the same device node outside dev_search_path, named with ".." or
# through a symbolic link in /dev, is refused; the server keeps serving
mknod /tmp/nbdev b $((0x$(stat -c %t /dev/nullb0))) $((0x$(stat -c %T /dev/nullb0))) ||
	die "mknod"
ln -sfn /tmp/nbdev /dev/ibnbd-esc
for name in /dev/../tmp/nbdev ibnbd-esc; do
	run_fio esc --paths="$(fio_paths 1)" --devpath=$name --rw=read \
		--bs=4k --size=4k && die "$name (outside /dev) was served"
	kmsgs | grep -q "refused open of '$name' (ro): path escapes the search root" ||
		die "no refusal of $name in the kernel log"
done
log "escaping names refused"

# 6. unload; nothing bad in the kernel log
rmmod ibnbd_server || die "rmmod ibnbd_server"
rmmod ibtrs_server || die "rmmod ibtrs_server"
loaded=0
kmsgs >"$KLOG"
grep 'ibtrs_server\|ibnbd_server' "$KLOG" | tail -25
if grep -nE 'WARNING:|\bBUG\b|Oops|hung task|KASAN|UBSAN|slab|general protection|corruption|refcount_t:|circular locking|lockdep' "$KLOG"; then
	die "kernel log has errors (above)"
fi
log "PASS"
