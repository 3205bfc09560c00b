# lib.sh - helpers of the fio-engine VM tests, on top of
# server/tests/vmlib.sh (source that first).

# srv_ops: READs + WRITEs the daemon has served so far (SIGUSR1 stats).
srv_ops() {
	stats_dump
	sed -n 's/^total reads=\([0-9]*\) writes=\([0-9]*\) .*/\1 \2/p' "$STATS" |
		awk '{ print $1 + $2 }'
}

# wait_srv_io MIN [TIMEOUT_S] [PID]: until the daemon has served MIN IOs;
# dies on timeout, or when PID (the fio run) ends first.
wait_srv_io() {
	local min=$1 to=${2:-60} pid=${3:-} t0 n
	t0=$(date +%s)
	while :; do
		n=$(srv_ops)
		[ "${n:-0}" -ge "$min" ] && { log "server has served $n IOs"; return 0; }
		[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null &&
			die "fio ended before $min IOs were served ($n)"
		[ $(($(date +%s) - t0)) -lt "$to" ] || die "only $n IOs served after ${to}s"
		sleep 0.2
	done
}

# srv_paths: the joined paths of the daemon's first session (SIGUSR1
# stats; empty when it has none).
srv_paths() {
	stats_dump
	sed -n 's/^session [^ ]* paths=\([0-9]*\) .*/\1/p' "$STATS" | head -n1
}

# wait_srv_paths N TIMEOUT_S PID: until the daemon's session has N joined
# paths; dies on timeout, or when PID (the fio run) ends first.
wait_srv_paths() {
	local want=$1 to=$2 pid=$3 t0 n
	t0=$(date +%s)
	while :; do
		n=$(srv_paths)
		[ "${n:-0}" -eq "$want" ] &&
			{ log "session has $n path(s) after $(($(date +%s) - t0))s"; return 0; }
		kill -0 "$pid" 2>/dev/null ||
			die "fio ended before the session had $want path(s) (${n:-none})"
		[ $(($(date +%s) - t0)) -lt "$to" ] ||
			die "session has ${n:-no} path(s), not $want, after ${to}s"
		sleep 0.2
	done
}

# The engine's end-of-job report (fio_ibtrs_report) in fio-NAME.log:
#   ibtrs: SESS: report: ios=.. parts=.. split=.. waits=.. reopens=.. stale=.. ...
#   ibtrs: SESS: report: path I ADDR state=.. reads=.. writes=.. failovers=.. reconnects=..
# report_val NAME KEY: KEY of the session line, summed over the jobs.
report_val() {
	grep -h ': report: ios=' "$LOGDIR/fio-$1.log" |
		sed -n "s/.* $2=\([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'
}

# report_path_val NAME I KEY: KEY of path I (1-based), summed over the jobs.
report_path_val() {
	grep -h ": report: path $2 " "$LOGDIR/fio-$1.log" |
		sed -n "s/.* $3=\([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'
}

# has_report NAME: the engine printed its report (the job got that far).
has_report() {
	grep -q ': report: ios=' "$LOGDIR/fio-$1.log"
}
