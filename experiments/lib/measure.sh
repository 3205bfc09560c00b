# measure.sh - run one fio cell in the guest and measure one window of it
# (source it after systems.sh).
#
# The window is opened and closed by tb-snap (experiments/lib/tb-snap.c), a
# coprocess started once per boot: it samples every counter (the IO count of
# the system's own IO source, /proc/stat, null_blk, rxe packets, work-request
# kprobes, CLOCK_MONOTONIC) at the instant it executes the profiler's START
# marker, waits until the window holds a target number of IOs, and samples
# them again at the STOP marker. Every per-IO ratio is Δcounter / ΔIOs of the
# same two instants, and the window is sized in IOs, not in time. No fork
# or exec happens inside a window (the shell only writes a line to tb-snap
# and reads its answer).
#
# Each cell leaves in $EX_RAW:
#   <cell>.json   fio --output-format=json (total latency percentiles:
#                 --lat_percentiles=1, submission + completion)
#   <cell>.snap   "key value" lines: a_* at START, b_* at STOP, window index
#   <cell>.maps   (profiled boots) executable mappings of every process at
#                 STOP (tb-snap's "maps", the format of profiler/guest-dump.sh)

# Work-request counting (a separate, unmeasured pass: kprobes cost
# instructions). rxe runs do_complete() once per send-queue WR (signaled or
# not, including registration WRs) and post_one_recv() once per receive WR.
ex_wr_count_on() {
	mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
	local t=/sys/kernel/tracing
	echo 0 >$t/tracing_on
	echo 'p:tbwr/send rdma_rxe:do_complete' >>$t/kprobe_events &&
		echo 'p:tbwr/recv rdma_rxe:post_one_recv' >>$t/kprobe_events ||
		{ echo "experiment: cannot place kprobes; no WR counts" >&2; return 1; }
	echo 1 >$t/events/tbwr/enable
	_ex_snap_cmd "kprobes on" || { echo "experiment: tb-snap: $_ex_reply" >&2; return 1; }
	EX_COUNT_WR=1
}
ex_wr_count_off() {
	local t=/sys/kernel/tracing
	[ "${EX_COUNT_WR:-0}" = 1 ] || return 0
	_ex_snap_cmd "kprobes off"
	echo 0 >$t/events/tbwr/enable
	echo '-:tbwr/send' >>$t/kprobe_events
	echo '-:tbwr/recv' >>$t/kprobe_events
	EX_COUNT_WR=0
}

# The tb-snap coprocess: ex_snap_open once per boot (after the systems are
# up: it opens null_blk's and rxe's counters), ex_snap_close at the end.
ex_snap_open() {
	local bin=$TB_TOP/build/experiments/tb-snap
	[ -x "$bin" ] || ex_die "$bin not built (make -C experiments/lib)"
	coproc TBSNAP { exec "$bin" --blk nullb0 --rxe "${TB_RXE_DEVS// /,}"; }
	EX_SNAP_PID=$TBSNAP_PID
	if [ "${TB_PROFILE:-0}" = 1 ]; then
		"$TB_TOP/experiments/profiler/guest-dump.sh" kallsyms "$EX_RAW/kallsyms.txt" ||
			ex_die "cannot dump kallsyms"
	fi
}
ex_snap_close() {
	[ -n "${EX_SNAP_PID:-}" ] || return 0
	echo quit >&"${TBSNAP[1]}"
	wait "$EX_SNAP_PID" 2>/dev/null
	EX_SNAP_PID=
}
_ex_snap_cmd() {	# _ex_snap_cmd LINE -> _ex_reply; status 0 on "ok ..."
	echo "$1" >&"${TBSNAP[1]}"
	read -r _ex_reply <&"${TBSNAP[0]}" || _ex_reply="err tb-snap died"
	[[ $_ex_reply == ok* ]]
}

# ex_cell CELL SYSTEM RW BS QD RAMP_MS WINDOW_IOS MAX_MS [JOBS]
# JOBS (default 1): fio's numjobs, each at QD (group_reporting: one JSON
# job for the group); the window counts the IOs of all of them.
# The window opens RAMP_MS after the first IO and closes once the system's
# IO source counted WINDOW_IOS IOs (MAX_MS of guest time at most; a window
# short of its IOs fails the cell). A system says where its IOs are counted
# with sys_<name>_iosrc (tb-snap IOSRC words; blk:DEV of the block device
# fio drives by default); with "time" (fio's rdma engine: no counter) the
# window lasts EX_TIME_WINDOW_MS and IOs are taken from fio's rate (inexact,
# flagged in the summaries).
# Optional per-system hooks (lib/systems.sh): sys_<name>_rw RW (fio's rw for
# the workload), sys_<name>_pre RW BS QD / sys_<name>_post (around each cell).
_ex_progress() {	# sets _prog: a counter that grows while IO flows
	local r1 r2 r3 r4 w1 rest d v
	_prog=0
	for d in $TB_RXE_DEVS; do
		read -r v <"/sys/class/infiniband/$d/ports/1/hw_counters/sent_pkts" &&
			_prog=$((_prog + v))
	done
	read -r r1 r2 r3 r4 w1 rest </sys/block/nullb0/stat
	_prog=$((_prog + r1 + w1))
}

ex_cell() {
	local cell=$1 sys=$2 rw=$3 bs=$4 qd=$5 ramp=$6 nios=$7 maxms=$8 jobs=${9:-1}
	local t fpid fioargs rwarg=$rw rc=0 src extra=()
	if declare -F "sys_${sys}_pre" >/dev/null; then sys_${sys}_pre "$rw" "$bs" "$qd" || return 1; fi
	fioargs=$(sys_${sys}_fio "$rw" "$bs" "$qd")
	declare -F "sys_${sys}_rw" >/dev/null && rwarg=$(sys_${sys}_rw "$rw")
	src=$(sys_${sys}_iosrc "$cell")
	case $src in u64:*) rm -f "${src#u64:}"; extra=(--ios_file="${src#u64:}") ;; esac
	# fio runs until it is stopped after the window (SIGTERM: fio ends the
	# job and writes its JSON); the runtime is only a backstop.
	# shellcheck disable=SC2086
	fio $fioargs "${extra[@]}" --name=cell --rw="$rwarg" --bs="$bs" --iodepth="$qd" \
		--numjobs="$jobs" --group_reporting --time_based --ramp_time="${ramp}ms" --lat_percentiles=1 \
		--runtime=$(((ramp + maxms) / 1000 + 60))s --norandommap --randrepeat=0 \
		--output-format=json --output="$EX_RAW/$cell.json" >/dev/null 2>"$EX_RAW/$cell.err" &
	fpid=$!
	# Wait for the system's own IO to flow (fio's start-up): its IO source
	# counts (an ios_file exists only once fio's engine is up); other
	# traffic, e.g. the kernel client's heartbeats, must not count.
	local base=-1 n
	for ((t = 0; t < 2000; t++)); do
		if [ "$src" = time ]; then
			_ex_progress
			n=$_prog
		elif _ex_snap_cmd "count $src"; then
			n=${_ex_reply#ok }
		else
			n=-1
		fi
		if [ "$n" -ge 0 ]; then
			[ "$base" -lt 0 ] && base=$n
			[ "$n" -gt $((base + 4)) ] && break
		fi
		kill -0 $fpid 2>/dev/null || break
		sleep 0.01
	done
	sleep "$(printf '%d.%03d' $((ramp / 1000)) $((ramp % 1000)))"
	if [ "$src" = time ]; then
		_ex_snap_cmd "window $EX_RAW/$cell.snap 1 ${EX_TIME_WINDOW_MS:-400} time"
		echo "ios_from_fio 1" >>"$EX_RAW/$cell.snap"
	else
		_ex_snap_cmd "window $EX_RAW/$cell.snap $nios $maxms $src"
	fi
	[[ $_ex_reply == ok* ]] && echo "jobs $jobs" >>"$EX_RAW/$cell.snap"
	if [[ $_ex_reply != ok* ]]; then
		echo "experiment: $cell: $_ex_reply"
		rc=1
	fi
	if [ "${TB_PROFILE:-0}" = 1 ] && ! _ex_snap_cmd "maps $EX_RAW/$cell.maps"; then
		echo "experiment: $cell: no maps dump: $_ex_reply"
		rc=1
	fi
	if kill -0 $fpid 2>/dev/null; then
		kill -TERM $fpid
		wait $fpid
	else
		wait $fpid
		echo "experiment: fio ended before its window closed in $cell"
		rc=1
	fi
	if ! grep -q '"error" : 0' "$EX_RAW/$cell.json" 2>/dev/null ||
	   grep -q '"error" : [1-9]' "$EX_RAW/$cell.json"; then
		echo "experiment: fio failed in $cell:"
		cat "$EX_RAW/$cell.err"
		rc=1
	fi
	if declare -F "sys_${sys}_post" >/dev/null; then sys_${sys}_post; fi
	# A window with a fork in it (fio or a daemon starting a process, a new
	# kworker) measured work of no IO: status 3, the caller may repeat it.
	if [ $rc = 0 ] && [ -e "$EX_RAW/$cell.snap" ]; then
		local forks
		forks=$(awk '$1 == "a_forks" { a = $2 } $1 == "b_forks" { b = $2 } END { print b - a }' \
			"$EX_RAW/$cell.snap")
		if [ "${forks:-0}" != 0 ]; then
			echo "experiment: $cell: $forks fork(s) inside the window: not clean"
			rc=3
		fi
	fi
	return $rc
}

# ex_cell_clean ARGS...: ex_cell, repeated up to EX_CLEAN_TRIES times (3)
# while its window is not clean (status 3); the unclean tries' files are
# kept as <cell>.*.unclean<N>. Status: ex_cell's last.
ex_cell_clean() {
	local cell=$1 try rc f
	for ((try = 1; ; try++)); do
		ex_cell "$@"
		rc=$?
		[ $rc = 3 ] && [ "$try" -lt "${EX_CLEAN_TRIES:-3}" ] || return $rc
		for f in "$EX_RAW/$cell".*; do
			[[ $f == *.unclean* ]] || mv "$f" "$f.unclean$try"
		done
		echo "experiment: $cell: repeating (try $((try + 1)))"
	done
}
