#!/bin/bash
# 016-kserver-large-io: IO larger than a bio holds (256 pages = 1 MiB): the
# kernel server with chunk_size=2 MiB (queue_depth 16) puts an IO of up to
# 2 MiB on the chunk's pages in several chained bios. Before the fix one
# bio took the whole IO and bvec_alloc() hit BUG() (a kernel panic from one
# `fio --bs=1536k`). Checked:
#  1. the fio engine: writes of 1536k, 2m and 1m+4k (an odd page count),
#     verified, and reads back;
#  2. an independent check: a pattern written through the engine in one
#     2 MiB IO is read from the device directly and compared;
#  3. the kernel client: /dev/ibnbdN with the 2 MiB chunk, direct 2 MiB
#     writes and reads (split by its queue limits), verified;
#  4. the modules unload, the kernel log is clean.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
need_paths 1
setup_nullb
kmod_load queue_depth=16 chunk_size=2097152
kmsgs | grep -q 'listening on port .* chunk 2097152' || die "server not on 2 MiB chunks"

for bs in 1536k 2m 1028k; do
	run_fio "w$bs" --paths="$(fio_paths 1)" --devpath=nullb0 --rw=write \
		--bs="$bs" --iodepth=4 --size=48m --verify=crc32c --do_verify=1 \
		--verify_fatal=1 ||
		die "bs=$bs write+verify failed: $(tail -5 "$LOGDIR/fio-w$bs.log")"
	grep -q 'err= 0' "$LOGDIR/fio-w$bs.log" || die "fio w$bs reported errors"
	log "engine bs=$bs: write + verify OK"
	kmod_log_check_now
done

# 2. a pattern in one 2 MiB IO, read back from the device itself: 509
# bytes long, so every page of the IO starts at another phase of it
pat=$(python3 -c 'print("0x" + "".join("%02x" % ((i * 37 + 11) & 0xff) for i in range(509)))')
run_fio pat --paths="$(fio_paths 1)" --devpath=nullb0 --rw=write --bs=2m \
	--size=2m --offset=100m --buffer_pattern="$pat" ||
	die "pattern write failed: $(tail -5 "$LOGDIR/fio-pat.log")"
python3 - "$pat" <<'EOF2' || die "a 2 MiB IO did not land as written"
import mmap, os, sys
pat = bytes.fromhex(sys.argv[1][2:])
n = 2 << 20
want = (pat * (n // len(pat) + 1))[:n]
buf = mmap.mmap(-1, n)
fd = os.open("/dev/nullb0", os.O_RDONLY | os.O_DIRECT)
r = os.preadv(fd, [buf], 100 << 20)
os.close(fd)
if r != n or buf[:] != want:
    bad = next(i for i in range(n) if buf[i] != want[i])
    print("differs from byte %d (page %d)" % (bad, bad // 4096))
    sys.exit(1)
EOF2
log "2 MiB IO landed intact on the device"

# 3. the kernel client on the same server
kclt_need
kclt_load
kclt_map "sessname=klarge$(kclt_paths 1) device_path=nullb0"
log "max_hw_sectors_kb=$(cat /sys/block/$KCLT_DEV/queue/max_hw_sectors_kb)"
kfio kwr --rw=randwrite --bs=2m --iodepth=4 --size=32m --offset=200m \
	--verify=crc32c --do_verify=1 --verify_fatal=1
kclt_finish 30
log "PASS"
