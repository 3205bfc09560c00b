#!/bin/bash
# Reads and writes of 512 B .. max IO size with data verification over 1, 2
# and (when the testbed has them) 4 paths, registered and bounce buffers.
# TIMEOUT=300
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

fail=0
for n in 1 2 4; do
	[ "$n" -le "$TB_PATHS" ] || continue
	for mode in "" "-b"; do
		log=/tmp/trs-clt-$n$mode.log
		# A fresh (all-zero) server disk per run: the client also checks
		# that sectors it never wrote read back as zeros.
		_stop_server
		_start_server
		# shellcheck disable=SC2046
		if ! "$B/trs-test-client" $(_path_args $n) -T 4 -q 16 -m 512 $mode \
			>"$log" 2>&1; then
			echo "FAIL: $n path(s) $mode"; cat "$log"; fail=1; continue
		fi
		ios=$(_total "$log" ios) verr=$(_total "$log" verify_errors)
		echo "$n path(s) ${mode:-registered}: ios=$ios verify_errors=$verr"
		[ "$ios" -gt 100 ] || { echo "FAIL: too few IOs"; fail=1; }
		# every path must have carried IO
		for ((i = 0; i < n; i++)); do
			r=$(_pathval "$log" $i reads) w=$(_pathval "$log" $i writes)
			[ $((r + w)) -gt 0 ] || { echo "FAIL: path $i idle"; fail=1; }
		done
	done
done
# Largest IO only, both directions, data verified.
_stop_server
_start_server
log=/tmp/trs-clt-max.log
# shellcheck disable=SC2046
"$B/trs-test-client" $(_path_args 1) -n 300 -q 8 -m 131072 -M 131072 >"$log" 2>&1 ||
	{ echo "FAIL: max-size IO"; cat "$log"; fail=1; }
grep '^total' "$log"
exit $fail
