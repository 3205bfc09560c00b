#!/bin/bash
# 005-large-io: IOs larger than the server's max IO size (its chunk size,
# 128 KiB) are split by the engine into chunk-sized transport requests and
# verify like on a block device: bs=1m and bs=4m and a bssplit mix (sizes
# that are not chunk multiples too), write + crc32c verify over 2 paths, and
# a separate read-only session verifying again. One run caps the engine at 4
# permits (queue_depth=4) with iodepth=8 x 8 parts per IO, one runs
# iodepth=8 x 32 parts (256) against the server's 128 permits: parts that
# find no permit wait, nothing deadlocks. The engine's end-of-job report
# must show the split (parts = ios x parts-per-IO) and, for the capped run,
# parts that waited for a permit.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"
need_bins
need_paths 2
setup_nullb
start_server
P=$(fio_paths 2)

# check_run NAME: fio succeeded without errors, verify ran.
check_run() {
	grep -q 'err= 0' "$LOGDIR/fio-$1.log" || die "$1: fio reported errors"
	has_report "$1" || die "$1: no engine report"
	log "$1: $(grep -h ': report: ios=' "$LOGDIR/fio-$1.log" | head -1)"
}

# check_split NAME PARTS_PER_IO: every IO of the run took exactly that many parts.
check_split() {
	local ios parts
	ios=$(report_val "$1" ios)
	parts=$(report_val "$1" parts)
	[ "$ios" -gt 0 ] || die "$1: no IO in the report"
	[ "$parts" -eq $((ios * $2)) ] ||
		die "$1: $parts parts for $ios IOs, expected $2 each (not split?)"
}

# 1 MiB: 8 parts per IO, iodepth 8 on 4 permits.
run_fio w1m --paths="$P" --devpath=nullb0 --rw=randwrite --bs=1m \
	--iodepth=8 --queue_depth=4 --size=64m --verify=crc32c --do_verify=1 \
	--verify_fatal=1 || die "bs=1m write+verify failed: $(tail -5 "$LOGDIR/fio-w1m.log")"
check_run w1m
check_split w1m 8
[ "$(report_val w1m waits)" -gt 0 ] || die "w1m: no part waited for a permit with queue_depth=4"

# The same data read back by another (read-only) session.
run_fio r1m --paths="$P" --devpath=nullb0 --rw=read --bs=1m --iodepth=4 \
	--size=64m --verify=crc32c --verify_only=1 --verify_fatal=1 ||
	die "bs=1m read-only verify failed: $(tail -5 "$LOGDIR/fio-r1m.log")"
check_run r1m
check_split r1m 8

# 4 MiB: 32 parts per IO, 256 parts at iodepth 8 against 128 permits.
run_fio w4m --paths="$P" --devpath=nullb0 --rw=randwrite --bs=4m \
	--iodepth=8 --size=64m --verify=crc32c --do_verify=1 --verify_fatal=1 ||
	die "bs=4m write+verify failed: $(tail -5 "$LOGDIR/fio-w4m.log")"
check_run w4m
check_split w4m 32

# A mix, with sizes that are not multiples of the chunk (192k, 1540k).
run_fio mix --paths="$P" --devpath=nullb0 --rw=randwrite \
	--bssplit=4k/20:192k/20:1m/20:1540k/20:4m/20 --iodepth=16 --size=96m \
	--verify=crc32c --do_verify=1 --verify_fatal=1 ||
	die "bssplit write+verify failed: $(tail -5 "$LOGDIR/fio-mix.log")"
check_run mix
[ "$(report_val mix split)" -gt 0 ] || die "mix: no IO was split"
[ "$(report_val mix parts)" -gt "$(report_val mix ios)" ] || die "mix: parts <= ios"

stop_server || die "daemon exit status $?"
log "PASS"
