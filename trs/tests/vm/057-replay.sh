#!/bin/bash
# A server that saw a read's key and address writes through them after the
# read ended (trs-test-server -R: before each read's answer, an RDMA WRITE
# of 0x5A bytes into the previous read's buffer with that read's key). The
# client reads at QD1 with --canary: a finished read's buffer is kept as it
# completed and checked after the next IO.
#  mw+remote, mw+local, reg+local, bounce+remote (the safe modes): the key
#    ended with its IO, so the replay fails at the client's NIC (the server
#    logs a remote access error and fails the path) and no finished buffer
#    changes;
#  bounce+none (contained): the bounce buffer's key outlives the IO and the
#    replay lands (no remote access error), but in the bounce buffer: no
#    finished read's buffer (user memory) changes;
#  mw+none, global+none, global+remote (unsafe): the key outlives the IO, the
#    replay lands, and the client sees a finished read's buffer change: the
#    exposure is shown, not assumed.
# TIMEOUT=360
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

fail=0
# check NAME safe|unsafe CLIENT-ARGS...
check() {
	local name=$1 want=$2 log=/tmp/trs-clt-replay-$1.log skip rc=0 ce replays
	shift 2
	skip=0
	[ ! -f /tmp/trs-srv.log ] || skip=$(wc -l </tmp/trs-srv.log)
	_start_server -R -v
	# shellcheck disable=SC2046
	"$B/trs-test-client" $(_path_args 1) -w 0 -q 1 -n 200 -T 8 -m 4096 -M 4096 \
		--canary --ctrl-loss-tmo 1000 "$@" >"$log" 2>&1 || rc=$?
	_stop_server
	tail -n +$((skip + 1)) /tmp/trs-srv.log >/tmp/trs-srv-replay-$name.log
	ce=$(_total "$log" canary_errors)
	replays=$(grep -c 'test fault replay: ' /tmp/trs-srv-replay-$name.log || true)
	echo "$name: client rc=$rc ios=$(_total "$log" ios) errors=$(_total "$log" errors)" \
		"canary_errors=$ce; server: $replays replays," \
		"$(grep -c 'remote access error' /tmp/trs-srv-replay-$name.log || true) remote access errors"
	grep -m1 'CANARY' "$log" || true
	[ "$replays" -gt 0 ] || { echo "FAIL: $name: the server replayed nothing"; fail=1; }
	[ -n "$ce" ] || { echo "FAIL: $name: no totals from the client"; fail=1; return; }
	if [ "$want" = contained ]; then
		[ "$ce" = 0 ] || { echo "FAIL: $name: a replay reached user memory"; fail=1; }
		! grep -q 'remote access error' /tmp/trs-srv-replay-$name.log ||
			{ echo "FAIL: $name: the replay did not land (the bounce buffer's key ended?)"; fail=1; }
	elif [ "$want" = safe ]; then
		[ "$ce" = 0 ] || { echo "FAIL: $name: a replay changed a finished read's buffer"; fail=1; }
		grep -q 'remote access error' /tmp/trs-srv-replay-$name.log ||
			{ echo "FAIL: $name: the replay did not fail with a remote access error"; fail=1; }
	else
		[ "$ce" -gt 0 ] ||
			{ echo "FAIL: $name: unsafe mode, yet no replay landed (the test shows nothing)"; fail=1; }
		grep -q 'CANARY: .* 5a, was' "$log" ||
			{ echo "FAIL: $name: the changed bytes are not the replay's pattern"; fail=1; }
		! grep -q 'remote access error' /tmp/trs-srv-replay-$name.log ||
			{ echo "FAIL: $name: a replay failed in an unsafe mode"; fail=1; }
	fi
}

check mw-remote safe --mr mw --inval remote
check mw-local safe --mr mw --inval local
check reg-local safe --mr reg --inval local
check bounce-remote safe --mr bounce --inval remote
check bounce-none contained --mr bounce --inval none
check mw-none unsafe --mr mw --inval none
check global-none unsafe --mr global --inval none
check global-remote unsafe --mr global --inval remote
exit $fail
