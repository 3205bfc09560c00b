#!/bin/bash
# The server is killed (SIGKILL) during IO and restarted: the client queues
# IO while every path is down, reconnects with backoff, and IO resumes with
# no error and verified data (the disk is a file mapping, so it survives).
# TIMEOUT=240
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

rm -f /tmp/trs-disk
_start_server -f /tmp/trs-disk
log=/tmp/trs-clt-restart.log
# shellcheck disable=SC2046
"$B/trs-test-client" $(_path_args) -T 20 -q 16 --connect-timeout 10000 \
	--wait-paths "$TB_PATHS" -v >"$log" 2>&1 &
cpid=$!
_wait_connected "$log"
sleep 3
tb_log "killing the server"
kill -9 "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true; SRV_PID=""
sleep 2
tb_log "restarting the server"
_start_server -f /tmp/trs-disk
rc=0
wait $cpid || rc=$?
grep -v '^progress' "$log" | grep -v 'INF:.*reconnects in' | tail -20
fail=0
[ $rc -eq 0 ] || { echo "FAIL: client exit $rc"; fail=1; }
[ "$(_total "$log" errors)" = 0 ] || { echo "FAIL: IO errors"; fail=1; }
[ "$(_total "$log" verify_errors)" = 0 ] || { echo "FAIL: verify errors"; fail=1; }
[ "$(_pathval "$log" 0 reconnects)" -ge 1 ] || { echo "FAIL: no reconnect"; fail=1; }
# IO after the restart: the last progress lines show IOPS > 0
last=$(grep '^progress' "$log" | tail -3 | awk '{print $4}' | grep -vc 'iops=0' || true)
[ "$last" -ge 1 ] || { echo "FAIL: no IO after the restart"; fail=1; }
grep -c 'session trs-test connected' /tmp/trs-srv.log
exit $fail
