#!/bin/bash
# 007-write-pull: fio --write_mode=pull against ibnbd-serverd. The daemon
# RDMA-READs each write's data from the engine's buffer (trs/PROTOCOL.md 4):
#  - write + crc32c verify (4k and 64k, QD8) in mw/remote, mw/local,
#    bounce/remote and the unsafe global/none, on 1 and 2 paths: no error,
#    and the daemon's pulls counter grew by the job's writes exactly;
#  - a push job after them (the default) makes no pull: the mode is the
#    client's, per session, never a fallback.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"
need_bins
need_paths 2
setup_nullb
start_server
n=0

# pulls: the daemon's RDMA READs of pulled writes so far
pulls() {
	stats_dump
	sed -n 's/^fastpath .* pulls=\([0-9]*\).*/\1/p' "$STATS"
}
# writes NAME: the writes the engine's report counts over its paths
writes() {
	grep -h ': report: path ' "$LOGDIR/fio-$1.log" |
		sed -n 's/.* writes=\([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }'
}

# job NAME WRITE_MODE MR INVAL PATHS
job() {
	local name=$1 before after w
	before=$(pulls)
	run_fio "$name" --paths="$(fio_paths "$5")" --devpath=nullb0 --access_mode=rw \
		--rw=randwrite --bssplit=4k/50:64k/50 --iodepth=8 --size=8m \
		--offset=$((n * 16))m --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--write_mode="$2" --mr_mode="$3" --inval_mode="$4" ||
		die "$name: fio failed: $(tail -5 "$LOGDIR/fio-$name.log")"
	grep -q 'err= 0' "$LOGDIR/fio-$name.log" || die "$name: fio reported errors"
	after=$(pulls)
	w=$(writes "$name")
	[ "$w" -gt 0 ] || die "$name: no writes in the engine's report"
	if [ "$2" = pull ]; then
		[ $((after - before)) = "$w" ] ||
			die "$name: $w writes, but the daemon pulled $((after - before))"
	else
		[ "$after" = "$before" ] || die "$name: a push job made $((after - before)) pulls"
	fi
	n=$((n + 1))
	log "$name: $w writes, $((after - before)) pulls, verified"
}

for m in mw/remote mw/local bounce/remote global/none; do
	for p in 1 2; do
		job "pull-${m%/*}-${m#*/}-$p" pull "${m%/*}" "${m#*/}" $p
	done
done
job push-mw-remote-2 push mw remote 2
stop_server || die "ibnbd-serverd exited with $?"
log "PASS: $n verified jobs"
