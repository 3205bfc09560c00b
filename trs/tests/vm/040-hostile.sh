#!/bin/bash
# A hostile client (wrong version/magic/cid, out-of-range chunk id, write and
# read lengths beyond the chunk, oversized user header, unknown type, write
# outside the pool) is rejected or disconnected, while a well-behaved client
# keeps doing verified IO on the same server the whole time.
# TIMEOUT=240
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

_start_server
log=/tmp/trs-clt-good.log
# shellcheck disable=SC2046
"$B/trs-test-client" $(_path_args 1) -T 30 -q 8 >"$log" 2>&1 &
cpid=$!
_wait_connected "$log"
fail=0
"$B/trs-test-hostile" -s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
	>/tmp/trs-hostile.log 2>&1 || fail=1
cat /tmp/trs-hostile.log
rc=0
wait $cpid || rc=$?
grep -E '^(total|RESULT)' "$log"
[ $rc -eq 0 ] || { echo "FAIL: good client failed ($rc)"; tail "$log"; fail=1; }
kill -0 "$SRV_PID" || { echo "FAIL: server died"; fail=1; }
echo "server log (reasons):"
grep -E 'rejecting|closing path' /tmp/trs-srv.log | sed 's/^/  /' || true
n=$(grep -c '^PASS' /tmp/trs-hostile.log || true)
[ "$n" -ge 9 ] || { echo "FAIL: only $n hostile cases passed"; fail=1; }
exit $fail
