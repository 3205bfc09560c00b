#!/bin/bash
# 010-kserver-fio: the kernel server (build/kmod/ibtrs-server.ko +
# ibnbd-server.ko, built by make -C kmod) serves a memory-backed null_blk
# beneath dev_search_path=/dev to the userspace fio engine:
#  1. write + verify (crc32c) over 1 path, 4k random;
#  2. mixed random read/write + verify over 2 paths (4k..128k blocks), both
#     paths must carry IO, the kernel log must show a 2-path session;
#     then two sessions at once with 2 connections per path, verified;
#  3. a read-only second session re-verifies step 1's data;
#  4. independent check: a known pattern written through the transport is
#     read back from the device directly (O_DIRECT) and compared;
#  5. the same device named outside dev_search_path is refused;
#  6. the modules unload; the kernel log of the test has no WARNING, BUG,
#     Oops, hung task, KASAN/UBSAN/slab report.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
need_paths 2
KMOD_EXTRA_CLEANUP='rm -f /dev/ibnbd-esc'
setup_nullb
kmod_load

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

# 2b. two sessions at once (numjobs; two writers need access_mode
# migration), 2 connections per path: requests of one path arrive on
# several CQs in parallel
run_fio mj --paths="$(fio_paths 2)" --devpath=nullb0 --rw=randrw --bs=8k \
	--iodepth=8 --numjobs=2 --offset=200m --offset_increment=16m \
	--size=8m --cons_per_path=2 --access_mode=migration --verify=crc32c \
	--do_verify=1 --verify_fatal=1 ||
	die "2 jobs x 2 paths x 2 connections failed: $(tail -5 "$LOGDIR/fio-mj.log")"
grep -q 'err= 0' "$LOGDIR/fio-mj.log" || die "fio mj reported errors"
log "2 sessions x 2 paths x 2 connections: randrw + verify OK"

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

# 5b. FLUSH and DISCARD on a null_blk with a write cache and discard: the
# device advertises both, fio's fsync and trim reach it, discarded blocks
# read back as zeroes from the device itself
nullb_cfs kflush memory_backed=1 discard=1 cache_size=16 size=64 blocksize=512
run_fio fl --paths="$(fio_paths 2)" --devpath="$NULLB_DEV" --rw=randwrite \
	--bs=16k --iodepth=4 --size=4m --fsync=4 ||
	die "write+fsync failed: $(tail -5 "$LOGDIR/fio-fl.log")"
run_fio trim --paths="$(fio_paths 2)" --devpath="$NULLB_DEV" --rw=trim \
	--bs=64k --iodepth=4 --size=2m ||
	die "trim failed: $(tail -5 "$LOGDIR/fio-trim.log")"
kmsgs | grep "closed $NULLB_DEV " | tail -2
kmsgs | grep "closed $NULLB_DEV " | grep -q 'flushes=[1-9]' || die "no FLUSH reached the server"
kmsgs | grep "closed $NULLB_DEV " | grep -q 'discards=[1-9]' || die "no DISCARD reached the server"
f=$(kmsgs | grep "opened $NULLB_DEV (rw)" | sed -n 's/.*flags \(0x[0-9a-f]*\).*/\1/p' | tail -1)
(( (${f:-0} & 0xe) == 0xe )) || die "FLUSH/FUA/DISCARD not advertised (flags ${f:-none})"
python3 - "$NULLB_DEV" <<'EOF2' || die "discarded range does not read as zeroes"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 2 << 20)
n = os.preadv(fd, [buf], 0)
os.close(fd)
if n != 2 << 20 or buf[:] != bytes(2 << 20):
    print("discarded 2 MiB: %d bytes read, non-zero content" % n)
    sys.exit(1)
print("discarded 2 MiB read back directly: zeroes")
EOF2

# 6. unload; nothing bad in the kernel log
kmod_unload
kmod_log_check
log "PASS"
