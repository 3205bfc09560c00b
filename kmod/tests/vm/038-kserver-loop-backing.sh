#!/bin/bash
# 038-kserver-loop-backing: the kernel server on a loop device over a file,
# once on tmpfs (/tmp) and once on the guest's 9p share ($TB_OUT), served
# beneath dev_search_path=/dev by name (loopN). A loop device hands the
# server's bio pages to the file system as an ITER_BVEC iov_iter; 9p's
# zero-copy path (p9_get_mapped_pages()/p9_release_pages()) takes and drops
# a reference on every page of each IO, so a chunk pool whose pages do not
# share their block's reference count (blocks allocated without __GFP_COMP)
# is handed back to the page allocator page by page while the server still
# uses it: the guest panicked within seconds (general protection faults in
# the loop worker, rxe, bio code). For each backing file:
#  1. fio engine, 1 path: random writes of 4k..128k blocks, verified
#     (crc32c) by reading them back;
#  2. kernel client (/dev/ibnbdN): random reads and writes of 64k..128k
#     blocks, verified;
#  3. independent check: a 4 MiB pattern written through /dev/ibnbdN in
#     4k, 64k and 128k writes is what the backing file holds, and a
#     pattern written into the file directly reads back through
#     /dev/ibnbdN (4k, 64k, 128k reads);
#  4. no kernel error report so far (kmod_log_check_now).
# Then the modules unload and the test's kernel log has no WARNING, BUG,
# Oops, general protection fault, slab or list corruption report.
# TIMEOUT=300
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
fstype() { findmnt -n -o FSTYPE -T "$1"; }
[ "$(fstype "$TB_OUT")" = 9p ] || skip "$TB_OUT is not a 9p share ($(fstype "$TB_OUT"))"
[ "$(fstype /tmp)" = tmpfs ] || skip "/tmp is not tmpfs ($(fstype /tmp))"
modprobe loop 2>/dev/null
command -v losetup >/dev/null || skip "no losetup"
LOOPS='' FILES=''
KMOD_EXTRA_CLEANUP='for l in $LOOPS; do losetup -d $l; done; rm -f $FILES'
kmod_load
kclt_load

# file_check DEV FILE OFF_MIB: 4 MiB of a pattern written through DEV
# (O_DIRECT, in 4k, 64k and 128k writes) must be what FILE holds; then
# another pattern written into FILE (fsync) must read back through DEV
# (O_DIRECT, 4k, 64k and 128k reads).
file_check() {
	python3 - "$@" <<'PYEOF' || die "$1 / $2: content differs"
import mmap, os, sys
dev, path, off = sys.argv[1], sys.argv[2], int(sys.argv[3]) << 20
n = 4 << 20
sizes = [4 << 10, 64 << 10, 128 << 10]

def pattern(mult):
    pat = bytes((i * mult + 11) & 0xff for i in range(4099))
    return (pat * (n // len(pat) + 1))[:n]

def pieces():	# (offset, size) covering n bytes in 4k, 64k, 128k pieces
    o, k = 0, 0
    while o < n:
        s = min(sizes[k % 3], n - o)
        yield o, s
        o, k = o + s, k + 1

data = pattern(7)
buf = mmap.mmap(-1, 128 << 10)
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
for o, s in pieces():
    buf[:s] = data[o:o + s]
    assert os.pwritev(fd, [memoryview(buf)[:s]], off + o) == s
os.close(fd)
with open(path, 'rb') as f:
    f.seek(off)
    got = f.read(n)
if got != data:
    bad = sum(1 for i in range(0, n, 4096) if got[i:i + 4096] != data[i:i + 4096])
    print("%s -> %s at %d MiB: %d of %d pages differ" % (dev, path, off >> 20, bad, n // 4096))
    sys.exit(1)
data = pattern(13)
with open(path, 'r+b') as f:
    f.seek(off)
    f.write(data)
    f.flush()
    os.fsync(f.fileno())
fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
bad = 0
for o, s in pieces():
    if os.preadv(fd, [memoryview(buf)[:s]], off + o) != s or buf[:s] != data[o:o + s]:
        bad += 1
os.close(fd)
if bad:
    print("%s -> %s at %d MiB: %d reads differ" % (path, dev, off >> 20, bad))
    sys.exit(1)
print("%s <-> %s: 4 MiB at %d MiB equal both ways" % (dev, path, off >> 20))
PYEOF
}

for where in tmpfs 9p; do
	case $where in
	tmpfs) f=/tmp/038-backing.img ;;
	9p) f=$TB_OUT/038-backing.img ;;
	esac
	FILES="$FILES $f"
	rm -f "$f"
	truncate -s 96M "$f" || die "truncate $f"
	l=$(losetup -f --show "$f") || die "losetup $f"
	LOOPS="$LOOPS $l"
	dev=${l#/dev/}
	log "$where: $l over $f ($(fstype "$f"), $(findmnt -n -o OPTIONS -T "$f"))"

	# 1. fio engine, 4k..128k writes, verified
	run_fio w-$where --paths="$(fio_paths 1)" --devpath="$dev" \
		--rw=randwrite --bssplit=4k/25:16k/25:64k/25:128k/25 \
		--iodepth=16 --size=24m --verify=crc32c --do_verify=1 \
		--verify_fatal=1 ||
		die "$where: fio engine write+verify failed: $(tail -5 "$LOGDIR/fio-w-$where.log")"
	grep -q 'err= 0' "$LOGDIR/fio-w-$where.log" || die "$where: fio w reported errors"
	log "$where: fio engine 4k..128k write + verify OK"
	kmod_log_check_now

	# 2. kernel client, 64k..128k randrw, verified
	kclt_map "sessname=lb-$where$(kclt_paths 1) device_path=$dev"
	kfio rw-$where --rw=randrw --bsrange=64k-128k --bs_unaligned=0 \
		--iodepth=8 --offset=32m --size=24m --verify=crc32c \
		--do_verify=1 --verify_fatal=1
	kmod_log_check_now

	# 3. what the client wrote is in the file, and the reverse
	file_check "/dev/$KCLT_DEV" "$f" 64
	file_check "/dev/$KCLT_DEV" "$f" 80
	kclt_unmap "$KCLT_DEV"
	kmod_log_check_now
	log "$where: OK"
done

kclt_unload
kmod_unload
for l in $LOOPS; do losetup -d "$l" || die "losetup -d $l"; done
LOOPS=
rm -f $FILES
kmod_log_check
log "PASS"
