#!/bin/bash
# 032-kclient-mkfs: a file system on the kernel client's device: nullb0 of
# the kernel server mapped over 2 paths (ibnbd tool) as /dev/ibnbd0;
# mkfs.ext4, mount, 8 MiB of random files (1 KiB .. 1 MiB, some in a
# subfolder) copied in, caches dropped, sha256 compared; umount; fsck.ext4
# -fn finds nothing; mounted again, compared again; both paths carried IO;
# the file system's blocks also read equal from /dev/nullb0 (the image
# through the transport = the image on the server); unmap, rmmod, clean
# kernel log.
# TIMEOUT=120
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
command -v fsck.ext4 >/dev/null || skip "no fsck.ext4 (e2fsprogs)"
modprobe ext4 2>/dev/null
grep -qw ext4 /proc/filesystems || skip "no ext4 in the guest kernel"
kclt_cli_need
setup_nullb
kmod_load
kclt_load
MNT=/tmp/kc-mkfs-mnt
SRC=/tmp/kc-mkfs-src
KCLT_EXTRA_CLEANUP="umount $MNT 2>/dev/null"
# shellcheck disable=SC2046
kclt_cli_map --sessname fs $(kclt_paths_args 2) --device nullb0
[ "$KCLT_DEV" = ibnbd0 ] || log "note: mapped as $KCLT_DEV"
D=/dev/$KCLT_DEV

rm -rf "$SRC" && mkdir -p "$SRC/sub" "$MNT"
python3 - "$SRC" <<'PYEOF' || die "cannot make the source files"
import os, random, sys
r = random.Random(32)
total, i = 0, 0
while total < 8 << 20:
    n = r.choice([1024, 4096, 5000, 65536, 300000, 1 << 20])
    d = sys.argv[1] + ("/sub" if i % 3 == 0 else "")
    with open("%s/f%03d" % (d, i), "wb") as f:
        f.write(os.urandom(n))
    total += n
    i += 1
print("%d files, %d bytes" % (i, total))
PYEOF
(cd "$SRC" && find . -type f | sort | xargs sha256sum) >"$LOGDIR/src.sha256"

mkfs.ext4 -F -q "$D" >"$LOGDIR/mkfs.log" 2>&1 || die "mkfs.ext4 $D: $(cat "$LOGDIR/mkfs.log")"
mount -t ext4 "$D" "$MNT" || die "mount $D"
cp -a "$SRC/." "$MNT/" || die "cp into $MNT"
sync
echo 3 >/proc/sys/vm/drop_caches
(cd "$MNT" && sha256sum -c --quiet "$LOGDIR/src.sha256") || die "files differ after the copy"
log "$(wc -l <"$LOGDIR/src.sha256") files copied, sha256 equal"
umount "$MNT" || die "umount $MNT"
fsck.ext4 -fn "$D" >"$LOGDIR/fsck.log" 2>&1 || die "fsck.ext4 -fn: $(tail -20 "$LOGDIR/fsck.log")"
tail -1 "$LOGDIR/fsck.log"
# the image through the transport is the image on the server
python3 - "$D" /dev/nullb0 <<'PYEOF' || die "the file system image differs on nullb0"
import mmap, os, sys
n = 64 << 20
bufs = []
for dev in sys.argv[1:]:
    b = mmap.mmap(-1, n)
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    assert os.preadv(fd, [b], 0) == n
    os.close(fd)
    bufs.append(b)
assert bufs[0][:] == bufs[1][:], "first 64 MiB differ"
print("first 64 MiB equal through the transport and on nullb0")
PYEOF
mount -t ext4 "$D" "$MNT" || die "remount $D"
(cd "$MNT" && sha256sum -c --quiet "$LOGDIR/src.sha256") || die "files differ after the remount"
log "remounted: sha256 equal"
umount "$MNT" || die "umount $MNT"
KCLT_EXTRA_CLEANUP=
cat "$KCLT_CTL/devices/$KCLT_DEV/paths" | tee "$LOGDIR/paths.txt"
[ "$(grep -c 'state=connected reqs=[1-9][0-9]* rsps=[1-9]' "$LOGDIR/paths.txt")" = 2 ] ||
	die "not both paths carried IO"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths.txt" && die "protocol errors counted"
"$IBNBD" unmap "$KCLT_DEV" || die "ibnbd unmap $KCLT_DEV"
kclt_unload
kmod_unload
kmod_log_check 4
log "PASS"
