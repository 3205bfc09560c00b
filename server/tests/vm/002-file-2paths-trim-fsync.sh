#!/bin/bash
# 002-file-2paths-trim-fsync: a regular file as the backing store (tmpfs in
# the guest: no O_DIRECT, the daemon falls back to buffered IO and says so),
# served over 2 paths; fio randrw with crc32c verify, plus trims (fallocate
# PUNCH_HOLE) and fsyncs (FLUSH) that must reach the server.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
need_paths 2
ROOT=$(mktemp -d /tmp/ibnbd-root.XXXXXX)
truncate -s 64m "$ROOT/disk.img"
start_server --root "$ROOT"

run_fio rw2 --paths="$(fio_paths 2)" --devpath=disk.img --rw=randwrite \
	--bs=4k --iodepth=32 --size=32m --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --fsync=64 --mp_policy=round-robin ||
	die "randwrite+verify over 2 paths failed"
grep -q 'err= 0' "$LOGDIR/fio-rw2.log" || die "fio reported errors"

run_fio mix --paths="$(fio_paths 2)" --devpath="$ROOT/disk.img" --rw=randrw \
	--bs=8k --iodepth=16 --size=16m --offset=32m --verify=crc32c \
	--verify_fatal=1 || die "randrw verify failed"

# trim: map to DISCARD; the punched range must read back as zeroes.
run_fio trim --paths="$(fio_paths 2)" --devpath=disk.img --rw=trim --bs=1m \
	--size=8m --iodepth=4 || die "trim job failed"
# (no process substitution: the guest may lack /dev/fd)
nz=$(dd if="$ROOT/disk.img" bs=1M count=8 2>/dev/null | tr -d '\0' | wc -c)
[ "$nz" -eq 0 ] || die "trimmed range has $nz non-zero bytes"
nz=$(dd if="$ROOT/disk.img" bs=1M skip=8 count=8 2>/dev/null | tr -d '\0' | wc -c)
[ "$nz" -gt 0 ] || die "data after the trimmed range is gone too"

stats_dump
cat "$STATS"
f=$(sed -n 's/^total .*flushes=\([0-9]*\).*/\1/p' "$STATS")
t=$(sed -n 's/^total .*discards=\([0-9]*\).*/\1/p' "$STATS")
[ "${f:-0}" -ge 100 ] || die "stats: flushes=$f, expected >= 128 (fsync=64)"
[ "${t:-0}" -ge 8 ] || die "stats: discards=$t, expected >= 8"
grep -q 'buffered: no O_DIRECT\|file)' "$SRV_LOG" || log "note: file opened with O_DIRECT"
stop_server || die "daemon exit status $?"
rm -rf "$ROOT"
log "PASS"
