#!/bin/bash
# Messages per IO from the client's counters: exactly 2 in the default mode
# (WRITE_WITH_IMM request + SEND_WITH_IMM/SEND_WITH_INV answer), reads and
# writes, registered and bounce buffers; also the other memory modes, which
# must move the same data with the same message count (registration WRs are
# counted apart in reg_wrs): mw, reg, bounce and global; the modes userspace
# does not offer (frwr) or cannot combine (reg without inval_mode local) are
# refused by name.
# TIMEOUT=300
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
run mr-reg --mr reg --inval local
run mr-bounce --mr bounce
run mr-bounce-none --mr bounce --inval none
# modes refused by name, with the reason
refused() {	# refused NAME WANT-IN-MESSAGE ARGS...
	local name=$1 want=$2 log=/tmp/trs-clt-$1.log; shift 2
	# shellcheck disable=SC2046
	if "$B/trs-test-client" $(_path_args 1) -n 10 -q 1 "$@" >"$log" 2>&1; then
		echo "FAIL: $name: accepted"; fail=1
	elif grep -qF "$want" "$log"; then
		echo "PASS: $name: $(grep -F "$want" "$log" | head -1)"
	else
		echo "FAIL: $name: no clear message: $(tail -2 "$log")"; fail=1
	fi
}
refused refuse-frwr "mr_mode 'frwr': frwr is a kernel verb" --mr frwr
refused refuse-reg-remote "it needs inval_mode local" --mr reg
refused refuse-bogus "mr_mode is mw, reg, bounce or global" --mr bogus
# reads only: one memory-window bind per read, writes need none
r=$(_total /tmp/trs-clt-default-reads.log reg_wrs_per_io)
w=$(_total /tmp/trs-clt-default-writes.log reg_wrs_per_io)
echo "reg_wrs per IO: reads $r, writes $w"
[ "$w" = 0.000 ] || { echo "FAIL: writes used registration WRs"; fail=1; }
# mr_mode reg registers each read once; bounce with inval none registers none
r=$(_total /tmp/trs-clt-mr-reg.log reg_wrs_per_io)
b=$(_total /tmp/trs-clt-mr-bounce-none.log reg_wrs_per_io)
echo "reg_wrs per IO: mr-reg $r, mr-bounce-none $b"
awk -v r="$r" 'BEGIN { exit !(r > 0.3 && r < 0.7) }' ||
	{ echo "FAIL: mr-reg: $r registrations per IO, expected about half (the reads)"; fail=1; }
[ "$b" = 0.000 ] || { echo "FAIL: mr-bounce-none registered per IO"; fail=1; }
exit $fail
