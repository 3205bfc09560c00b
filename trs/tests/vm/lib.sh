# lib.sh - helpers for the trs VM tests (source after guest-lib.sh).
B=$TB_TOP/trs/build
SRV_PID=""

# Start trs-test-server on every server address; extra args passed through.
_start_server() {
	local args="" a skip
	for a in $TB_SRV_ADDRS; do args+=" -a $a"; done
	# The log is appended across restarts: look for READY after its old end.
	# (No pipelines whose status counts: callers use set -e -o pipefail.)
	skip=0
	[ ! -f /tmp/trs-srv.log ] || skip=$(wc -l </tmp/trs-srv.log)
	# shellcheck disable=SC2086
	"$B/trs-test-server" $args "$@" >>/tmp/trs-srv.log 2>&1 &
	SRV_PID=$!
	for _ in $(seq 100); do
		[ "$(tail -n +$((skip + 1)) /tmp/trs-srv.log | grep -c READY)" = 0 ] ||
			return 0
		kill -0 $SRV_PID 2>/dev/null || break
		sleep 0.1
	done
	echo "server did not start"; cat /tmp/trs-srv.log; return 1
}

_stop_server() {
	[ -n "$SRV_PID" ] || return 0
	kill "$SRV_PID" 2>/dev/null || true
	wait "$SRV_PID" 2>/dev/null || true
	SRV_PID=""
}

# -s arguments for the first N paths (default all): src@dst
_path_args() {
	local n=${1:-$TB_PATHS} i out=""
	for ((i = 1; i <= n; i++)); do
		out+=" -s $(tb_nth $i "$TB_CLT_ADDRS")@$(tb_nth $i "$TB_SRV_ADDRS")"
	done
	echo "$out"
}

# Value of key=... in the "total" line of a client log.
_total() { grep '^total ' "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# Value of key=... in the "path I" line.
_pathval() { grep "^path $2 " "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$3=//p"; }

_save_logs() {
	[ -n "${TB_OUT:-}" ] && cp /tmp/trs-*.log "$TB_OUT/" 2>/dev/null || true
}
trap '_stop_server; _save_logs' EXIT
rm -f /tmp/trs-*.log

# Wait until a client log shows the session is open.
_wait_connected() {
	for _ in $(seq 300); do
		grep -q '^connected:' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "client did not connect"; cat "$1"; return 1
}

# Wall time ($EPOCHREALTIME) at which the clock of a client started now,
# writing LOG, reads 0: the client's log lines carry "[seconds]" on its own
# clock. Follows LOG (from the start) until the first such line appears and
# takes the time it is seen minus its stamp: an upper bound, late by about
# the 5 ms poll (no forks in the loop; no /dev/fd in the guest).
_clt_clock_zero() {
	local log=$1 part line="" seen t k fifo=/tmp/trs-poll.fifo
	[ -p $fifo ] || mkfifo $fifo
	exec 8<>$fifo
	for ((k = 0; k < 2000; k++)); do
		[ -e "$log" ] && break
		read -r -t 0.005 -u 8 _ || true
	done
	exec 9<"$log"
	for ((k = 0; k < 6000; k++)); do
		while IFS= read -r part <&9; do
			line+=$part
			if [[ $line =~ ^\[\ *([0-9]+\.[0-9]+)\]\ clt\  ]]; then
				seen=$EPOCHREALTIME t=${BASH_REMATCH[1]}
				break 2
			fi
			line=""
		done
		line+=$part	# a line being written
		read -r -t 0.005 -u 8 _ || true
	done
	exec 8<&- 9<&-
	[ -n "${seen:-}" ] || { echo "no timestamped line in $log" >&2; return 1; }
	awk -v s="$seen" -v t="$t" 'BEGIN { printf "%.6f\n", s - t }'
}
