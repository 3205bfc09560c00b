#!/bin/bash
# chunk_mode rekey (trs-test-server -K rekey): every chunk has a type-1
# memory window of its own, bound again after each IO before its answer.
#  1. verified IO over 1 and 2 paths, reads and writes, QD 16, registered
#     and bounce buffers: still 2 messages per IO (the binds are the
#     server's local work requests);
#  2. hostile chunk-replay: after an IO on chunk 1 was answered, the key it
#     used is refused by the NIC and the chunk's next key writes it;
#     cross-session as with static chunks (another session's key, a
#     reconnected path's old key: refused);
#  3. the static server of the same run lets the ended key write (the
#     exposure rekey removes, shown on the same build).
# TIMEOUT=300
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

fail=0
_start_server -K rekey -v
grep -q 'chunk_mode rekey' /tmp/trs-srv.log 2>/dev/null || true
run() {	# run NAME ARGS...
	local name=$1 log=/tmp/trs-clt-rekey-$1.log; shift
	# shellcheck disable=SC2046
	if "$B/trs-test-client" -n 2000 -q 16 -k --expect-msgs-per-io 2 -v "$@" >"$log" 2>&1; then
		echo "PASS: $name: $(grep '^total' "$log" | grep -o 'ios=[0-9]*\|msgs_per_io=[0-9.]*\|errors=[0-9]*' | tr '\n' ' ')"
	else
		echo "FAIL: $name"; grep -v '^progress' "$log" | tail -5; fail=1
		# the server's side of it (why it closed a path, if it did)
		grep -E ' (WRN|ERR): ' /tmp/trs-srv.log | tail -5 | sed 's/^/  server: /'
	fi
	grep -q 'chunk_mode rekey' "$log" ||
		{ echo "FAIL: $name: the client did not see chunk_mode rekey"; fail=1; }
}
# shellcheck disable=SC2046
run 1path $(_path_args 1)
# shellcheck disable=SC2046
run 2paths $(_path_args 2)
# shellcheck disable=SC2046
run bounce $(_path_args 1) -b
# shellcheck disable=SC2046
run reads $(_path_args 1) -w 0 -m 4096 -M 65536

hostile() {	# hostile LOG CASES...
	local log=$1; shift
	"$B/trs-test-hostile" -s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
		"$@" >"$log" 2>&1 || true
	cat "$log"
}
hostile /tmp/trs-hostile-rekey.log chunk-replay cross-session
grep -q '^PASS: hostile chunk-replay: chunk_mode rekey' /tmp/trs-hostile-rekey.log ||
	{ echo "FAIL: rekey: the ended IO's key was not refused"; fail=1; }
grep -q '^PASS: hostile cross-session' /tmp/trs-hostile-rekey.log ||
	{ echo "FAIL: rekey: cross-session"; fail=1; }
kill -0 "$SRV_PID" || { echo "FAIL: the rekey server died"; fail=1; }
_stop_server

_start_server
hostile /tmp/trs-hostile-static.log chunk-replay
grep -q '^PASS: hostile chunk-replay: exposure shown' /tmp/trs-hostile-static.log ||
	{ echo "FAIL: static: the ended key did not write (the comparison shows nothing)"; fail=1; }
exit $fail
