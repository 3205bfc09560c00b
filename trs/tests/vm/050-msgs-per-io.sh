#!/bin/bash
# Messages per IO from the client's counters: exactly 2 in the default mode
# (WRITE_WITH_IMM request + SEND_WITH_IMM/SEND_WITH_INV answer), reads and
# writes, registered and bounce buffers; also the other memory modes, which
# must move the same data with the same message count (registration WRs are
# counted apart in reg_wrs).
# TIMEOUT=240
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

_start_server
fail=0
run() {	# run NAME ARGS...
	local name=$1 log=/tmp/trs-clt-$1.log; shift
	# shellcheck disable=SC2046
	if "$B/trs-test-client" $(_path_args 1) -n 2000 -q 16 -k \
		--expect-msgs-per-io 2 "$@" >"$log" 2>&1; then
		echo "PASS: $name: $(grep '^total' "$log" | grep -o 'ios=[0-9]*\|msgs_per_io=[0-9.]*\|reg_wrs_per_io=[0-9.]*' | tr '\n' ' ')"
	else
		echo "FAIL: $name"; grep -v '^progress' "$log" | tail -5; fail=1
	fi
}
run default
run default-reads -w 0
run default-writes -w 100
run bounce -b
run inval-local --inval local
run mr-global --mr global
run inval-none --inval none
# reads only: one memory-window bind per read, writes need none
r=$(_total /tmp/trs-clt-default-reads.log reg_wrs_per_io)
w=$(_total /tmp/trs-clt-default-writes.log reg_wrs_per_io)
echo "reg_wrs per IO: reads $r, writes $w"
[ "$w" = 0.000 ] || { echo "FAIL: writes used registration WRs"; fail=1; }
exit $fail
