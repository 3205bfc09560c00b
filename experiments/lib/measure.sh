# measure.sh - run one fio cell in the guest and snapshot the counters that
# tell protocols apart (source it after systems.sh). Snapshots use shell
# builtins only: a fork in the window would be charged to the IO.
#
# Each cell leaves in $EX_RAW:
#   <cell>.json   fio --output-format=json
#   <cell>.snap   "key value" lines: a_* before and b_* after the window

_ex_read_stat() {	# sets _cpu_busy _cpu_idle _ctxt (jiffies, all CPUs)
	local tag u n s i w q sq st rest
	while read -r tag u n s i w q sq st rest; do
		case $tag in
		cpu) _cpu_busy=$((u + n + s + q + sq + st)); _cpu_idle=$((i + w)) ;;
		ctxt) _ctxt=$u ;;
		esac
	done </proc/stat
}

_ex_snap() {	# _ex_snap PREFIX -> appends PREFIX_* variables to _snap
	local p=$1 r1 r2 r3 r4 w1 rest up x d v
	_ex_read_stat
	read -r r1 r2 r3 r4 w1 rest </sys/block/nullb0/stat
	read -r up x </proc/uptime
	_snap+="${p}_uptime $up"$'\n'"${p}_cpu_busy $_cpu_busy"$'\n'"${p}_cpu_idle $_cpu_idle"$'\n'
	_snap+="${p}_ctxt $_ctxt"$'\n'"${p}_ios $((r1 + w1))"$'\n'
	local pk=0
	for d in $TB_RXE_DEVS; do
		read -r v <"/sys/class/infiniband/$d/ports/1/hw_counters/sent_pkts" && pk=$((pk + v))
	done
	_snap+="${p}_pkts $pk"$'\n'
	if [ "${EX_COUNT_WR:-0}" = 1 ]; then
		local name hit miss
		while read -r name hit miss; do
			_snap+="${p}_wr_${name#tbwr/} $hit"$'\n'
		done </sys/kernel/tracing/kprobe_profile
	fi
}

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
	EX_COUNT_WR=1
}
ex_wr_count_off() {
	local t=/sys/kernel/tracing
	[ "${EX_COUNT_WR:-0}" = 1 ] || return 0
	echo 0 >$t/events/tbwr/enable
	echo '-:tbwr/send' >>$t/kprobe_events
	echo '-:tbwr/recv' >>$t/kprobe_events
	EX_COUNT_WR=0
}

# ex_cell CELL SYSTEM RW BS QD RAMP_MS WINDOW_MS
# Optional per-system hooks (lib/systems.sh): sys_<name>_rw RW (fio's rw for
# the workload), sys_<name>_pre RW BS QD / sys_<name>_post (around each cell).
# Systems in EX_NOBLK_SYSTEMS have no block device: progress is watched on
# the rxe packet counters and IOs are counted by fio (snapshot ios_from_fio).
_ex_progress() {	# sets _prog: a counter that grows while IO flows
	local r1 r2 r3 r4 w1 rest d v
	if [ "$_noblk" = 1 ]; then
		_prog=0
		for d in $TB_RXE_DEVS; do
			read -r v <"/sys/class/infiniband/$d/ports/1/hw_counters/sent_pkts" &&
				_prog=$((_prog + v))
		done
	else
		read -r r1 r2 r3 r4 w1 rest </sys/block/nullb0/stat
		_prog=$((r1 + w1))
	fi
}

ex_cell() {
	local cell=$1 sys=$2 rw=$3 bs=$4 qd=$5 ramp=$6 win=$7
	local base t fpid fioargs rwarg=$rw rc=0
	_noblk=0
	[[ " $EX_NOBLK_SYSTEMS " == *" $sys "* ]] && _noblk=1
	if declare -F "sys_${sys}_pre" >/dev/null; then sys_${sys}_pre "$rw" "$bs" "$qd" || return 1; fi
	fioargs=$(sys_${sys}_fio "$rw" "$bs" "$qd")
	declare -F "sys_${sys}_rw" >/dev/null && rwarg=$(sys_${sys}_rw "$rw")
	# shellcheck disable=SC2086
	fio $fioargs --name=cell --rw="$rwarg" --bs="$bs" --iodepth="$qd" \
		--numjobs=1 --time_based --ramp_time="${ramp}ms" \
		--runtime="$((win + 100))ms" --norandommap --randrepeat=0 \
		--output-format=json --output="$EX_RAW/$cell.json" >/dev/null 2>"$EX_RAW/$cell.err" &
	fpid=$!
	# fio: ramp (its own start-up to first IO + RAMP), then WINDOW + 100 ms;
	# the window below opens RAMP after the first IO, so it ends inside fio's
	# run with fio's start-up time to spare.
	_ex_progress
	base=$_prog
	for ((t = 0; t < 2000; t++)); do	# wait for IO to flow (fio start-up)
		_ex_progress
		[ $_prog -gt $((base + 4)) ] && break
		kill -0 $fpid 2>/dev/null || break
		sleep 0.01
	done
	_snap=""
	[ $_noblk = 1 ] && _snap+="ios_from_fio 1"$'\n'
	sleep "$(printf '%d.%03d' $((ramp / 1000)) $((ramp % 1000)))"
	_ex_snap a
	sleep "$(printf '%d.%03d' $((win / 1000)) $((win % 1000)))"
	_ex_snap b
	printf '%s' "$_snap" >"$EX_RAW/$cell.snap"
	wait $fpid || { echo "experiment: fio failed in $cell:"; cat "$EX_RAW/$cell.err"; rc=1; }
	if declare -F "sys_${sys}_post" >/dev/null; then sys_${sys}_post; fi
	return $rc
}
