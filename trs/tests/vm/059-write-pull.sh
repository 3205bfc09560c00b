#!/bin/bash
# write_mode pull: the server RDMA-READs a write's data from the client's
# buffer instead of the client pushing it into the chunk.
#  1. Verified IO (half writes, reads checked against what was written)
#     with --write pull in every client mode, over 2 paths: no error, and
#     the server counts one RDMA READ per write (pulls == writes).
#  2. A server that saw a pulled write's key reads through it after that
#     write ended (trs-test-server -R): in the safe modes the key ended
#     with its IO and the replay fails (remote access error, the path
#     fails); in the unsafe ones (none, global) it succeeds: the client's
#     memory stays readable after the IO, shown, not assumed.
# TIMEOUT=300
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

fail=0
# verified NAME CLIENT-ARGS...
verified() {
	local name=$1 log=/tmp/trs-clt-pull-$1.log rc=0 skip writes pulls w0 w1
	shift
	skip=0
	[ ! -f /tmp/trs-srv.log ] || skip=$(wc -l </tmp/trs-srv.log)
	_start_server
	# shellcheck disable=SC2046
	"$B/trs-test-client" $(_path_args 2) -w 50 -q 8 -T 5 --write pull "$@" \
		>"$log" 2>&1 || rc=$?
	_stop_server
	w0=$(_pathval "$log" 0 writes); w1=$(_pathval "$log" 1 writes)
	writes=$(( ${w0:-0} + ${w1:-0} ))
	pulls=$(tail -n +$((skip + 1)) /tmp/trs-srv.log | sed -n 's/^server done: .* pulls=\([0-9]*\).*/\1/p')
	echo "$name: rc=$rc $(grep '^total ' "$log" | cut -d' ' -f2-6) server pulls=${pulls:-?}"
	grep -q '^connected: .* write=pull' "$log" ||
		{ echo "FAIL: $name: the client did not run in write_mode pull"; fail=1; }
	[ $rc = 0 ] && grep -q '^RESULT OK' "$log" ||
		{ echo "FAIL: $name: client failed ($rc)"; tail -5 "$log"; fail=1; return; }
	[ "$(_total "$log" verify_errors)" = 0 ] && [ "$(_total "$log" errors)" = 0 ] ||
		{ echo "FAIL: $name: IO or verify errors"; fail=1; }
	[ -n "$writes" ] && [ "$writes" -gt 0 ] && [ "${pulls:-0}" = "$writes" ] ||
		{ echo "FAIL: $name: $writes writes but ${pulls:-no} pulls"; fail=1; }
}

# replay NAME safe|unsafe CLIENT-ARGS...
replay() {
	local name=$1 want=$2 log=/tmp/trs-clt-pullrp-$1.log skip rc=0 replays rae
	shift 2
	skip=0
	[ ! -f /tmp/trs-srv.log ] || skip=$(wc -l </tmp/trs-srv.log)
	_start_server -R -v
	# shellcheck disable=SC2046
	"$B/trs-test-client" $(_path_args 1) -w 100 -q 1 -n 200 -T 8 -m 4096 -M 4096 \
		--ctrl-loss-tmo 1000 --write pull "$@" >"$log" 2>&1 || rc=$?
	_stop_server
	tail -n +$((skip + 1)) /tmp/trs-srv.log >/tmp/trs-srv-pullrp-$name.log
	replays=$(grep -c 'test fault replay: .* read at ' /tmp/trs-srv-pullrp-$name.log || true)
	rae=$(grep -c 'remote access error' /tmp/trs-srv-pullrp-$name.log || true)
	echo "$name: client rc=$rc ios=$(_total "$log" ios); server: $replays replays, $rae remote access errors"
	[ "$replays" -gt 0 ] || { echo "FAIL: $name: the server replayed nothing"; fail=1; return; }
	if [ "$want" = safe ]; then
		[ "$rae" -gt 0 ] ||
			{ echo "FAIL: $name: a read through an ended write's key did not fail"; fail=1; }
	else
		[ "$rae" = 0 ] && [ "$replays" -ge 100 ] ||
			{ echo "FAIL: $name: unsafe mode, yet the replays did not all succeed (the test shows nothing)"; fail=1; }
	fi
}

verified mw-remote --mr mw --inval remote
verified mw-local --mr mw --inval local
verified reg-local --mr reg --inval local
verified bounce-remote --mr bounce --inval remote
verified global-none --mr global --inval none
replay mw-remote safe --mr mw --inval remote
replay mw-local safe --mr mw --inval local
replay reg-local safe --mr reg --inval local
replay mw-none unsafe --mr mw --inval none
replay global-none unsafe --mr global --inval none
exit $fail
