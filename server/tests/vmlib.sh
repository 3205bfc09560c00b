# vmlib.sh - helpers for the ibnbd-serverd / fio "ibtrs" VM tests.
# Sourced by server/tests/vm/NNN-*.sh and fio-engine/tests/vm/NNN-*.sh, which
# run inside the testbed guest (docs/CONVENTIONS.md): TB_TOP, TB_OUT,
# TB_PATHS, TB_SRV_ADDRS, TB_CLT_ADDRS come from the runner.
# Exit codes: 0 pass, 77 skip, anything else fail.
# IBNBD_SRV_EXTRA / IBNBD_FIO_EXTRA: extra daemon / fio arguments for every
# start_server / run_fio (e.g. "-v" / "--mp_policy=min-inflight").

set -u
: "${TB_TOP:?run me through experiments/testbed/run or tests/run-vm}"
: "${TB_OUT:=/tmp/ibnbd-vm-out}"
mkdir -p "$TB_OUT"

SRVD=$TB_TOP/server/build/ibnbd-serverd
ENGINE_DIR=$TB_TOP/fio-engine/build
TEST_NAME=$(basename "$0" .sh)
LOGDIR=$TB_OUT/$TEST_NAME
mkdir -p "$LOGDIR"
SRV_PID=
SRV_PORT=${SRV_PORT:-1234}
SRV_LOG=$LOGDIR/serverd.log
STATS=$LOGDIR/stats.txt

if [ -f "$TB_TOP/experiments/testbed/guest-lib.sh" ]; then
	. "$TB_TOP/experiments/testbed/guest-lib.sh"
fi

log() { echo "[$TEST_NAME $(date +%T)] $*"; }
die() { log "FAIL: $*"; dump_logs; exit 1; }
skip() { log "SKIP: $*"; exit 77; }

dump_logs() {
	[ -f "$SRV_LOG" ] && { echo "--- serverd log (tail)"; tail -40 "$SRV_LOG"; }
	for f in "$LOGDIR"/fio-*.log; do
		[ -f "$f" ] && { echo "--- $f (tail)"; tail -25 "$f"; }
	done
	return 0
}

need_bins() {
	[ -x "$SRVD" ] || skip "$SRVD not built"
	[ -e "$ENGINE_DIR/ibtrs.so" ] || skip "fio engine not built"
	command -v fio >/dev/null || skip "fio not installed"
	[ -n "${TB_SRV_ADDRS:-}" ] || skip "no TB_SRV_ADDRS (no RDMA paths)"
}

need_paths() {	# N
	[ "${TB_PATHS:-1}" -ge "$1" ] || skip "needs $1 paths, have ${TB_PATHS:-1}"
}

# "clt1@srv1,clt2@srv2" for the first N paths (default: all).
fio_paths() {
	local n=${1:-${TB_PATHS:-1}} i=0 out= c s
	local -a C=(${TB_CLT_ADDRS:-}) S=(${TB_SRV_ADDRS})
	while [ $i -lt "$n" ]; do
		s=${S[$i]}
		c=${C[$i]:-}
		out="$out${out:+,}${c:+$c@}$s"
		i=$((i + 1))
	done
	echo "$out"
}

srv_addr_args() {
	local a
	for a in ${TB_SRV_ADDRS}; do printf -- '--addr %s ' "$a"; done
}

# start_server [extra args]: foreground daemon in the background of the
# script, logs to $SRV_LOG; waits until it listens.
start_server() {
	local i
	# shellcheck disable=SC2046
	"$SRVD" $(srv_addr_args) --port "$SRV_PORT" --stats-file "$STATS" "$@" \
		${IBNBD_SRV_EXTRA:-} >>"$SRV_LOG" 2>&1 &
	SRV_PID=$!
	for i in $(seq 1 100); do
		grep -q 'listening on' "$SRV_LOG" 2>/dev/null && return 0
		kill -0 "$SRV_PID" 2>/dev/null || die "ibnbd-serverd exited at start"
		sleep 0.1
	done
	die "ibnbd-serverd did not start listening"
}

# stop_server [signal]: returns the daemon's exit status.
stop_server() {
	local sig=${1:-TERM} rc i
	[ -n "$SRV_PID" ] || return 0
	kill -"$sig" "$SRV_PID" 2>/dev/null
	for i in $(seq 1 150); do
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SRV_PID" 2>/dev/null; then
		log "daemon did not exit after SIG$sig; killing"
		kill -KILL "$SRV_PID"
	fi
	wait "$SRV_PID"
	rc=$?
	SRV_PID=
	return $rc
}

stats_dump() {	# SIGUSR1, then wait for the stats file to be rewritten
	local before
	before=$(stat -c %Y.%s "$STATS" 2>/dev/null || echo none)
	rm -f "$STATS"
	kill -USR1 "$SRV_PID"
	for i in $(seq 1 50); do
		[ -s "$STATS" ] && return 0
		sleep 0.1
	done
	die "no stats file after SIGUSR1 (was $before)"
}

cleanup_common() {
	[ -n "$SRV_PID" ] && kill -KILL "$SRV_PID" 2>/dev/null
	return 0
}
trap cleanup_common EXIT

# null_blk with memory backing (so data verifies), 256 MiB, one device.
setup_nullb() {
	[ -b /dev/nullb0 ] && return 0
	modprobe null_blk nr_devices=${1:-1} gb=1 memory_backed=1 bs=512 \
		>/dev/null 2>&1 || modprobe null_blk nr_devices=${1:-1} \
		>/dev/null 2>&1 || skip "cannot load null_blk"
	for i in $(seq 1 30); do [ -b /dev/nullb0 ] && return 0; sleep 0.1; done
	skip "no /dev/nullb0"
}

# run_fio NAME [fio args...]: bare engine name via LD_LIBRARY_PATH; output in
# $LOGDIR/fio-NAME.log; returns fio's status.
run_fio() {
	local name=$1
	shift
	LD_LIBRARY_PATH=$ENGINE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		timeout "${FIO_TIMEOUT:-240}" fio --name="$name" --ioengine=ibtrs \
		--port="$SRV_PORT" "$@" ${IBNBD_FIO_EXTRA:-} >"$LOGDIR/fio-$name.log" 2>&1
}

fio_log() { cat "$LOGDIR/fio-$1.log"; }
