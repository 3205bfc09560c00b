#!/bin/bash
# 009-answer-chains: the daemon's answers go out in chains, signaled every
# few WRs, within a small send queue. With --queue-depth 8 a connection's
# send queue has 48 WRs, 32 of them for answers, so a chain of 8 read
# answers (16 WRs: data + message each) crosses the half-full mark and is
# signaled: fio writes and verify-reads 8 MiB at depth 8 in batches of 8.
# Then, from the "fastpath" stats line: every request answered exactly
# once, at least one signaled answer and fewer posts than answers; no path
# was closed but by the client's disconnect (an overflowing send queue
# fails the post, and the path).
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server --queue-depth 8
P=$(fio_paths 1)

run_fio qd8 --paths="$P" --devpath=nullb0 --rw=randwrite --bs=4k --size=8m \
	--iodepth=8 --iodepth_batch_submit=8 --iodepth_batch_complete_min=8 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 || die "fio failed"
grep -q 'err= 0' "$LOGDIR/fio-qd8.log" || die "fio reported errors"
stats_dump
fast=$(grep '^fastpath ' "$STATS") || die "no fastpath line in the daemon's stats"
log "daemon: $fast"
fval() { echo "$fast" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
[ "$(fval requests)" -ge 4096 ] || die "only $(fval requests) requests"
[ "$(fval answers)" = "$(fval requests)" ] ||
	die "$(fval requests) requests, $(fval answers) answers"
[ "$(fval signaled)" -ge 1 ] || die "no answer was signaled"
[ "$(fval post_sends)" -lt "$(fval answers)" ] || die "no answers were chained"
grep 'closing path' "$SRV_LOG" | grep -v DISCONNECTED && die "the daemon closed a path"
stop_server || die "daemon exit status $?"
log "PASS"
