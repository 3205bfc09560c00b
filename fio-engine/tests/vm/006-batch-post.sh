#!/bin/bash
# 006-batch-post: the engine posts fio's batches as chains and polls
# without system calls; the daemon answers in chains from cached IO
# objects. Functional counters only (the engine's end-of-job "verbs"
# report line, the daemon's "fastpath" stats line), with margins:
#  1. iodepth 32, fio batches of 16 (iodepth_batch_submit=16,
#     iodepth_batch_complete_min=16), coalesce=0 (commit() posts): one
#     ibv_post_send per 16 IOs (<= 0.1 per IO; expected 1/16 plus the
#     short batches at the end of each phase), >= 10 WRs per post; write
#     then verify-read of 16 MiB (the reads chain a MW bind per IO).
#  2. the same with batches of 1: one post per IO (>= 0.95): the counter
#     counts posts, and commit() posts when fio commits. The requests are
#     signaled once per 16 WRs (signaled <= WRs / 16 + 8), so <= 1.3
#     completions per IO (the answer; 2 when every request was signaled).
#  3. poll=1 (busy poll) with the default coalescing: no CQ arm and no
#     completion event over the whole job, data verified.
#  4. the daemon: every request answered once, at most one signaled send
#     per 16 answer WRs (+2), fewer posts than answers, at most 64 IO
#     objects allocated for 3 jobs of >= 8,000 IOs at depth 32 (the rest
#     came from its cache), and every chunk READ/WRITE through the
#     session's io_uring registered buffer (the guest runs it as root).
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"
need_bins
setup_nullb
start_server
P=$(fio_paths 1)

# verbs_val NAME KEY: KEY of the engine's "report: verbs" line.
verbs_val() {
	grep -h ': report: verbs ' "$LOGDIR/fio-$1.log" |
		sed -n "s/.* $2=\([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'
}
# ratio A B: A / B with 3 decimals (awk; B > 0)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# le X Y / ge X Y: X <= Y / X >= Y as decimals
le() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x <= y) }'; }
ge() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= y) }'; }

job() {	# NAME [fio args]: 16 MiB randwrite at depth 32, then verified
	local name=$1
	shift
	run_fio "$name" --paths="$P" --devpath=nullb0 --rw=randwrite --bs=4k \
		--size=16m --iodepth=32 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 "$@" || die "fio $name failed"
	grep -q 'err= 0' "$LOGDIR/fio-$name.log" || die "fio $name reported errors"
	grep -h ': report: verbs ' "$LOGDIR/fio-$name.log" || die "no verbs report in $name"
}

job b16 --iodepth_batch_submit=16 --iodepth_batch_complete_min=16 --coalesce=0
ios=$(verbs_val b16 ios)
posts=$(verbs_val b16 post_sends)
wrs=$(verbs_val b16 send_wrs)
[ "$ios" -ge 8000 ] || die "b16: only $ios IOs"
r=$(ratio "$posts" "$ios")
log "b16: $ios IOs, $posts posts ($r per IO), $wrs WRs ($(ratio "$wrs" "$posts") per post)"
le "$r" 0.1 || die "b16: $r posts per IO, expected <= 0.1 (batches of 16)"
ge "$(ratio "$wrs" "$posts")" 10 || die "b16: fewer than 10 WRs per post"

job b1 --iodepth_batch_submit=1 --iodepth_batch_complete_min=1 --coalesce=0
ios=$(verbs_val b1 ios)
posts=$(verbs_val b1 post_sends)
r=$(ratio "$posts" "$ios")
log "b1: $ios IOs, $posts posts ($r per IO)"
ge "$r" 0.95 || die "b1: $r posts per IO, expected one per IO"
# the engine's requests are signaled once per 16 WRs: one completion per
# IO (the answer) plus ~1/16, not two
sig=$(verbs_val b1 signaled) cqes=$(verbs_val b1 cqes) wrs=$(verbs_val b1 send_wrs)
log "b1: $sig signaled request chains for $wrs send WRs, $(ratio "$cqes" "$ios") completions per IO"
[ "$sig" -ge 1 ] || die "b1: no request was signaled"
[ "$sig" -le $((wrs / 16 + 8)) ] || die "b1: $sig signaled request chains for $wrs WRs (> 1 per 16)"
le "$(ratio "$cqes" "$ios")" 1.3 || die "b1: $(ratio "$cqes" "$ios") completions per IO (every request signaled?)"

job poll --poll=1
ios=$(verbs_val poll ios)
arms=$(verbs_val poll cq_arms)
evs=$(verbs_val poll cq_events)
log "poll: $ios IOs, $arms CQ arms, $evs completion events, $(verbs_val poll post_sends) posts"
[ "$ios" -ge 8000 ] || die "poll: only $ios IOs"
[ "$arms" -eq 0 ] && [ "$evs" -eq 0 ] || die "poll: the CQs were armed ($arms) or signalled ($evs)"

stats_dump
fast=$(grep '^fastpath ' "$STATS") || die "no fastpath line in the daemon's stats"
log "daemon: $fast"
fval() { echo "$fast" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
req=$(fval requests)
[ "$(fval answers)" = "$req" ] || die "daemon: $req requests, $(fval answers) answers"
[ "$req" -ge 24000 ] || die "daemon: only $req requests"
[ "$(fval signaled)" -ge 1 ] || die "daemon: no answer was signaled"
[ "$(fval signaled)" -le $(($(fval send_wrs) / 16 + 2)) ] ||
	die "daemon: $(fval signaled) signaled answers for $(fval send_wrs) WRs (> 1 per 16)"
[ "$(fval post_sends)" -lt "$(fval answers)" ] || die "daemon: no answers were chained"
[ "$(fval io_allocs)" -le 64 ] || die "daemon: $(fval io_allocs) IO objects allocated"
[ "$(fval fixed_ios)" -ge 24576 ] ||
	die "daemon: $(fval fixed_ios) chunk IOs with registered buffers (of 24576)"
grep 'closing path' "$SRV_LOG" | grep -v DISCONNECTED && die "daemon closed a path"
stop_server || die "daemon exit status $?"
log "PASS"
