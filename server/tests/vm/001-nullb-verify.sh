#!/bin/bash
# 001-nullb-verify: ibnbd-serverd serves a memory-backed null_blk; fio with
# the "ibtrs" engine (bare name) writes and verifies it with crc32c over one
# path, then reads it back read-only; SIGUSR1 statistics count the IO.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server

run_fio w1 --paths="$(fio_paths 1)" --devpath=/dev/nullb0 --rw=randwrite \
	--bs=4k --iodepth=16 --size=32m --verify=crc32c --do_verify=1 \
	--verify_fatal=1 || die "write+verify over one path failed: $(tail -5 "$LOGDIR/fio-w1.log")"
grep -q 'err= 0' "$LOGDIR/fio-w1.log" || die "fio reported errors"

# Read-only job (access_mode auto -> ro), another session, verifies the
# same data again (same bs: fio's verify header records the block size).
run_fio r1 --paths="$(fio_paths 1)" --devpath=nullb0 --rw=read --bs=4k \
	--iodepth=8 --size=32m --verify=crc32c --do_verify=1 --verify_only=1 \
	--verify_fatal=1 || die "read-only verify failed"

stats_dump
cat "$STATS"
# 32 MiB of 4k writes = 8192 writes; reads: verify (8192) + re-verify (8192).
w=$(sed -n 's/^total .*[^_]writes=\([0-9]*\).*/\1/p' "$STATS")
r=$(sed -n 's/^total reads=\([0-9]*\).*/\1/p' "$STATS")
e=$(sed -n 's/^total .*errors=\([0-9]*\).*/\1/p' "$STATS")
[ "${w:-0}" -ge 8192 ] || die "stats: writes=$w, expected >= 8192"
[ "${r:-0}" -ge 16384 ] || die "stats: reads=$r, expected >= 16384"
[ "${e:-1}" -eq 0 ] || die "stats: errors=$e"
stop_server || die "daemon exit status $?"
grep -q 'exited cleanly' "$SRV_LOG" || die "no clean exit in the log"
log "PASS"
