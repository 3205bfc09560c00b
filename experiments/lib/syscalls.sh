#!/bin/bash
# syscalls.sh - system calls and context switches per IO, per process, of
# E01's systems (lib/systems.sh), in the testbed guest. A pass of its own,
# apart from E01's measured windows: the tracing it uses costs instructions.
#
# Usage (host):
#   flock /tmp/ibtrs-vm.lock experiments/testbed/run --mode icount --fast-rxe \
#       --paths 2 -- bash experiments/lib/syscalls.sh "SYSTEMS" "WORKLOADS" [SECONDS]
# SYSTEMS: E01 system names (nvme_rdma ibtrs1 ibtrsk1 ...); WORKLOADS: E01's
# "name:rw:bs:qd" entries. Per cell, fio runs until its IO flows, then a
# window of SECONDS (guest time, default 2) counts, per command name, every
# syscall entry (raw_syscalls:sys_enter) and every switch away from a task
# (sched:sched_switch by prev_comm) with tracing hist triggers, and the IOs
# of the window (the system's IO source, as E01 counts them). Output, one
# line per cell and command with >= 0.01 per IO ("TOTAL" sums all of them):
#   cell SYSTEM WORKLOAD ios N comm COMM syscalls_per_io X cs_per_io Y
# written to stdout and $TB_OUT/syscalls.txt.
# The hist triggers are armed and read by this shell, so the window's edges
# are a few shell commands apart from the IO count's samples (<= 0.2 % of a
# window of thousands of IOs).
set -euo pipefail
systems=$1
workloads=$2
secs=${3:-2}
here=$TB_TOP/experiments
. "$here/testbed/guest-lib.sh"
. "$here/lib/systems.sh"
EX_RAW=$TB_OUT/syscalls-raw
mkdir -p "$EX_RAW"
out=$TB_OUT/syscalls.txt
: >"$out"
t=/sys/kernel/tracing
mountpoint -q $t || mount -t tracefs tracefs $t
sc=$t/events/raw_syscalls/sys_enter/trigger
sw=$t/events/sched/sched_switch/trigger
sc_hist='hist:keys=common_pid.execname:vals=hitcount:size=4096'
sw_hist='hist:keys=prev_comm:vals=hitcount:size=4096'

# The IO count of a system's IO source (E01's iosrc words: blk:DEV, u64:FILE).
_ios() {
	local w n=0 v a b c d e rest
	for w in $1; do
		case $w in
		blk:*)
			read -r a b c d e rest <"/sys/block/${w#blk:}/stat"
			n=$((n + a + e)) ;;
		u64:*)
			[ -e "${w#u64:}" ] || { echo -1; return; }
			v=$(od -An -t u8 -N8 "${w#u64:}" | tr -d ' ')
			n=$((n + ${v:-0})) ;;
		esac
	done
	echo $n
}

for s in $systems; do
	tb_log "setting up $s"
	"sys_${s}_up"
done
for w in $workloads; do
	IFS=: read -r wname rw bs qd <<<"$w"
	for s in $systems; do
		cell=${s}__${wname}__${bs}__${qd}
		src=$(sys_${s}_iosrc "$cell")
		extra=()
		case $src in u64:*) rm -f "${src#u64:}"; extra=(--ios_file="${src#u64:}") ;; esac
		tb_log "$cell"
		# shellcheck disable=SC2046
		fio $(sys_${s}_fio "$rw" "$bs" "$qd") "${extra[@]}" --name=cell --rw="$rw" \
			--bs="$bs" --iodepth="$qd" --time_based --runtime=$((secs * 4 + 60))s \
			--norandommap --randrepeat=0 --output="$EX_RAW/$cell.out" \
			>/dev/null 2>"$EX_RAW/$cell.err" &
		fpid=$!
		base=-1
		for ((i = 0; i < 2000; i++)); do
			n=$(_ios "$src")
			if [ "$n" -ge 0 ]; then
				[ $base -lt 0 ] && base=$n
				[ "$n" -gt $((base + 4)) ] && break
			fi
			kill -0 $fpid 2>/dev/null || break
			sleep 0.01
		done
		sleep 0.3
		echo "$sc_hist" >$sc
		echo "$sw_hist" >$sw
		a=$(_ios "$src")
		sleep "$secs"
		b=$(_ios "$src")
		cat $t/events/raw_syscalls/sys_enter/hist >"$EX_RAW/$cell.sys"
		cat $t/events/sched/sched_switch/hist >"$EX_RAW/$cell.sw"
		echo "!$sc_hist" >$sc
		echo "!$sw_hist" >$sw
		kill -TERM $fpid 2>/dev/null || true
		wait $fpid || echo "fio failed in $cell: $(tail -3 "$EX_RAW/$cell.err")"
		ios=$((b - a))
		[ $ios -gt 0 ] || { echo "cell $s $wname no IO"; continue; }
		# hist lines: "{ common_pid: fio [ 123] } hitcount: N" and
		# "{ prev_comm: ksoftirqd/0 } hitcount: N"; per command name
		awk -v cell="$s $wname qd$qd" -v ios=$ios '
			FNR == 1 { f++ }
			/hitcount:/ {
				line = $0
				sub(/^\{ [a-z_]+: */, "", line)
				sub(/ *(\[[ 0-9]*\])? *\} *hitcount:.*/, "", line)
				gsub(/ /, "_", line)
				n = $NF
				if (f == 1) sysc[line] += n; else csw[line] += n
				names[line] = 1
				if (f == 1) ts += n; else tc += n
			}
			END {
				for (c in names)
					if ((sysc[c] + csw[c]) / ios >= 0.01)
						printf "cell %s ios %d comm %s syscalls_per_io %.3f cs_per_io %.3f\n",
							cell, ios, c, sysc[c] / ios, csw[c] / ios
				printf "cell %s ios %d comm TOTAL syscalls_per_io %.3f cs_per_io %.3f\n",
					cell, ios, ts / ios, tc / ios
			}' "$EX_RAW/$cell.sys" "$EX_RAW/$cell.sw" | sort | tee -a "$out"
	done
done
[ -n "${_ibtrs_srv_pid:-}" ] && kill "$_ibtrs_srv_pid" 2>/dev/null
[ -n "${_ibtrs_rekey_srv_pid:-}" ] && kill "$_ibtrs_rekey_srv_pid" 2>/dev/null
exit 0
