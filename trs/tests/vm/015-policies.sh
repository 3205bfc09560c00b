#!/bin/bash
# Multipath policies on 2 paths: a verified run per policy (round-robin,
# min-inflight, min-latency) ends without IO or verify errors and with IO on
# both paths; round-robin splits the IOs evenly (within 10%). Then a run that
# rotates the policy every second at run time (--switch-policy).
# TIMEOUT=180
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"
[ "$TB_PATHS" -ge 2 ] || { echo "SKIP: needs 2 paths"; exit 77; }

fail=0
# IOs posted on path I (reads + writes; 0 when the client printed no stats)
_pathios() {
	local r w
	r=$(_pathval "$1" "$2" reads) w=$(_pathval "$1" "$2" writes)
	echo $((${r:-0} + ${w:-0}))
}
# run NAME SECONDS CLIENT-ARGS...: one verified client run on 2 paths; prints
# the per-path IO counts and leaves them in $n0 / $n1.
run() {
	local name=$1 secs=$2 log=/tmp/trs-clt-$1.log
	shift 2
	# A fresh (all-zero) server disk per run: the client also checks that
	# sectors it never wrote read back as zeros.
	_stop_server
	_start_server
	# shellcheck disable=SC2046
	if ! "$B/trs-test-client" $(_path_args 2) -T "$secs" -q 16 --wait-paths 2 \
		"$@" >"$log" 2>&1; then
		echo "FAIL: $name: client failed"; cat "$log"; fail=1
	fi
	[ "$(_total "$log" errors)" = 0 ] || { echo "FAIL: $name: IO errors"; fail=1; }
	[ "$(_total "$log" verify_errors)" = 0 ] ||
		{ echo "FAIL: $name: verify errors"; fail=1; }
	n0=$(_pathios "$log" 0) n1=$(_pathios "$log" 1)
	echo "$name: path0=$n0 path1=$n1 ios=$(_total "$log" ios)" \
		"failovers=$(_pathval "$log" 0 failovers)+$(_pathval "$log" 1 failovers)"
	[ "$n0" -gt 0 ] || { echo "FAIL: $name: path 0 idle"; fail=1; }
	[ "$n1" -gt 0 ] || { echo "FAIL: $name: path 1 idle"; fail=1; }
}

for pol in round-robin min-inflight min-latency; do
	run "$pol" 3 -P "$pol"
	grep -q "^connected: .* policy=$pol " "/tmp/trs-clt-$pol.log" ||
		{ echo "FAIL: $pol: client reports another policy"; fail=1; }
	if [ "$pol" = round-robin ]; then
		# |n0 - n1| <= 10% of the larger count
		if ! awk -v a="$n0" -v b="$n1" 'BEGIN {
			d = a - b; if (d < 0) d = -d; m = a > b ? a : b
			printf "round-robin: paths differ by %d IOs (%.2f%%)\n", d,
				m ? 100 * d / m : 0
			exit !(m > 0 && d * 10 <= m) }'; then
			echo "FAIL: round-robin: path counts differ by more than 10%"; fail=1
		fi
	fi
done
run switch-policy 5 --switch-policy
exit $fail
