#!/bin/bash
# A path is cut during IO: no IO error, data verified, IO continues on the
# other paths, and the cut path rejoins after it is restored (stats:
# failovers and reconnects of path 1, final connected path count).
# TIMEOUT=240
# The RDMA CM may lose the first connect REQ after a link comes back and
# retries it only after ~4 s (cma response timeout), so the reconnect uses
# a 10 s connect timeout here.
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"
[ "$TB_PATHS" -ge 2 ] || { echo "SKIP: needs 2 paths"; exit 77; }

_start_server -v
log=/tmp/trs-clt-cut.log
# shellcheck disable=SC2046
"$B/trs-test-client" $(_path_args) -T 25 -q 16 -P round-robin \
	--wait-paths "$TB_PATHS" --connect-timeout 10000 -v >"$log" 2>&1 &
cpid=$!
_wait_connected "$log"
sleep 3
tb_log "cutting path 1"
tb_path_cut 1
sleep 5
tb_log "restoring path 1"
tb_path_restore 1
rc=0
wait $cpid || rc=$?
cat "$log" | grep -v '^progress' || true
fail=0
[ $rc -eq 0 ] || { echo "FAIL: client exit $rc"; fail=1; }
[ "$(_total "$log" errors)" = 0 ] || { echo "FAIL: IO errors"; fail=1; }
[ "$(_total "$log" verify_errors)" = 0 ] || { echo "FAIL: verify errors"; fail=1; }
[ "$(_pathval "$log" 0 reconnects)" -ge 1 ] || { echo "FAIL: path 1 did not reconnect"; fail=1; }
[ "$(_total "$log" paths_connected)" = "$TB_PATHS" ] || { echo "FAIL: not all paths back"; fail=1; }
# IO kept flowing while path 1 was down: every progress line has IOs.
stalls=$(awk '/^progress/ && $4=="iops=0"' "$log" | wc -l)
echo "progress seconds without IO: $stalls"
[ "$stalls" -le 2 ] || { echo "FAIL: IO stalled for $stalls s"; fail=1; }
grep -E 'failed:|reconnect' "$log" | head -5 || true
exit $fail
