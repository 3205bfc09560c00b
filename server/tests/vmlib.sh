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

# IBNBD_SRVD: another daemon binary (e.g. an older build, to show that a
# test fails without the fix it covers).
SRVD=${IBNBD_SRVD:-$TB_TOP/server/build/ibnbd-serverd}
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

DM_DEVS=
NULLB_CFS=
cleanup_common() {
	local rc=$? n i
	# shellcheck disable=SC2086
	[ -n "$FIO_PIDS" ] && kill -KILL $FIO_PIDS 2>/dev/null
	[ -n "$SRV_PID" ] && kill -KILL "$SRV_PID" 2>/dev/null
	# A killed daemon's fds stay open until its held IO (dm-delay) ends.
	for n in $DM_DEVS; do
		for i in $(seq 1 30); do
			dmsetup remove --noudevsync "$n" 2>/dev/null && break
			sleep 0.5
		done
	done
	[ -n "$DM_DEVS" ] && dmsetup mknodes 2>/dev/null	# drop stale nodes
	for n in $NULLB_CFS; do
		echo 0 >"$n/power" 2>/dev/null
		rmdir "$n" 2>/dev/null
	done
	# A sanitizer report in the daemon's or fio's output fails the test.
	if ! san_scan "$LOGDIR"/*.log >"$LOGDIR/san-reports.txt"; then
		echo "[$TEST_NAME] FAIL: sanitizer report(s):"
		head -60 "$LOGDIR/san-reports.txt"
		exit 1
	fi
	exit $rc
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

# nullb_cfs NAME attr=value...: one more null_blk device made through
# configfs, with settings of its own whatever the module was loaded with
# (e.g. memory_backed=1 discard=1 size=1024); its path goes to $NULLB_DEV.
nullb_cfs() {
	local d=/sys/kernel/config/nullb/$1 kv i
	shift
	setup_nullb
	[ -d /sys/kernel/config/nullb ] ||
		mount -t configfs none /sys/kernel/config 2>/dev/null
	[ -d /sys/kernel/config/nullb ] || skip "no null_blk configfs"
	if [ -d "$d" ]; then	# left over by an earlier test
		echo 0 >"$d/power" 2>/dev/null
		rmdir "$d" 2>/dev/null
	fi
	mkdir "$d" || skip "cannot create $d"
	NULLB_CFS="$NULLB_CFS $d"
	for kv in "$@"; do
		echo "${kv#*=}" >"$d/${kv%%=*}" || die "null_blk configfs: $kv"
	done
	echo 1 >"$d/power" || die "cannot power on $d"
	# The disk is named after the configfs item (Linux 6.1).
	for i in $(seq 1 30); do
		[ -b "/dev/$(basename "$d")" ] && { NULLB_DEV=/dev/$(basename "$d"); return 0; }
		sleep 0.1
	done
	die "no /dev/$(basename "$d") for $d"
}

# dm_delay NAME DEV READ_MS WRITE_MS: /dev/mapper/NAME maps DEV; reads are
# delayed READ_MS, writes (and flushes, discards) WRITE_MS. No udev needed.
dm_delay() {
	local sz i
	command -v dmsetup >/dev/null || skip "no dmsetup"
	modprobe dm-delay 2>/dev/null
	sz=$(blockdev --getsz "$2") || die "blockdev --getsz $2"
	for i in $(seq 1 30); do	# left over by an earlier test?
		dmsetup info "$1" >/dev/null 2>&1 || break
		dmsetup remove --noudevsync "$1" 2>/dev/null
		sleep 0.5
	done
	dmsetup create --noudevsync "$1" \
		--table "0 $sz delay $2 0 $3 $2 0 $4" || skip "cannot create a dm-delay device"
	DM_DEVS="$DM_DEVS $1"
	dmsetup mknodes "$1" 2>/dev/null
	[ -b "/dev/mapper/$1" ] || die "no /dev/mapper/$1"
}

# line_of PATTERN FILE: number of the first line matching, or 0.
line_of() {
	local n
	n=$(grep -n -m1 -- "$1" "$2" | cut -d: -f1)
	echo "${n:-0}"
}

# fio itself is not built with sanitizers: an engine built with SAN=1 needs
# the ASan runtime preloaded. $FIO_CMD is the command to run fio with.
# Debian's fio 3.33 frees a job's engine options twice at exit (td->eo:
# freed in fio_backend, again in fio_options_free; fixed upstream later), so
# ASan must not halt on that one: it runs fio with halt_on_error=0 and
# san_scan below fails the test on any other report. Our own code is built
# without -fsanitize-recover, so its errors still abort at once.
FIO_CMD=(fio)
if readelf -d "$ENGINE_DIR/ibtrs.so" 2>/dev/null | grep -q 'libasan'; then
	FIO_CMD=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so)"
		 "ASAN_OPTIONS=detect_leaks=0:halt_on_error=0" fio)
fi

# san_scan FILE...: print every sanitizer report in the files except fio's
# known exit-time double free of its options; status 1 if there was one.
san_scan() {
	awk '
	/ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:/ {
		if (rep != "" && !known) { print rep; bad = 1 }
		rep = FILENAME ": " $0; known = 0; n = 0; next
	}
	rep != "" && n < 12 { n++; rep = rep "\n" $0; if (/fio_options_free/) known = 1 }
	END { if (rep != "" && !known) { print rep; bad = 1 }; exit bad }
	' "$@" 2>/dev/null
}

# run_fio NAME [fio args...]: bare engine name via LD_LIBRARY_PATH; output in
# $LOGDIR/fio-NAME.log; returns fio's status.
run_fio() {
	local name=$1
	shift
	LD_LIBRARY_PATH=$ENGINE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		timeout -k 10 "${FIO_TIMEOUT:-240}" "${FIO_CMD[@]}" --name="$name" --ioengine=ibtrs \
		--port="$SRV_PORT" "$@" ${IBNBD_FIO_EXTRA:-} >"$LOGDIR/fio-$name.log" 2>&1
}

# start_fio NAME [fio args...]: like run_fio, in the background, without
# a wrapper: $FIO_PID is fio's own pid (for kill/wait); killed at exit.
FIO_PIDS=
start_fio() {
	local name=$1
	shift
	LD_LIBRARY_PATH=$ENGINE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		"${FIO_CMD[@]}" --name="$name" --ioengine=ibtrs --port="$SRV_PORT" "$@" \
		${IBNBD_FIO_EXTRA:-} >"$LOGDIR/fio-$name.log" 2>&1 &
	FIO_PID=$!
	FIO_PIDS="$FIO_PIDS $FIO_PID"
}

fio_log() { cat "$LOGDIR/fio-$1.log"; }
