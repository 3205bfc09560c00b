#!/bin/bash
# A hostile client (wrong version/magic/cid, out-of-range chunk id, write and
# read lengths beyond the chunk, oversized user header, unknown type, write
# outside the pool) is rejected or disconnected, while a well-behaved client
# keeps doing verified IO on the same server the whole time.
#
# The hostile client answers the server's heartbeats, so a connection it
# breaks the rules on can only be closed by validation: for every case the
# server must log the case's reason, the close must come within LIMIT_MS of
# the offending message (the heartbeat timeout is 1500 ms), no heartbeat
# timeout may be logged, and the control case "idle" (joins, breaks nothing)
# must stay connected for 3 s. The good client must complete IO in every
# second of the run. Then hb-only: a path that sends heartbeats but never
# joins must be dropped ("did not join within", counted from its first
# connection: heartbeats do not keep it alive). Then cross-session: one
# session's pool key must not write through another session's connection,
# nor through its own path's after a reconnect.
# TIMEOUT=240
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

LIMIT_MS=${LIMIT_MS:-500}
declare -A reason=(
	[badver]='rejecting connection: unsupported protocol major version'
	[badmagic]='rejecting connection: bad magic'
	[badcid]='rejecting connection: connection index out of range'
	[chunk-id]='session hostile: closing path from .*: bad receive: chunk id >= queue depth'
	[write-len]='session hostile: closing path from .*: invalid request in chunk 1: write data_len exceeds chunk'
	[read-len]='session hostile: closing path from .*: invalid request in chunk 1: read length exceeds chunk'
	[usr-len]='session hostile: closing path from .*: invalid request in chunk 1: user header longer than max_usr_len'
	[bad-type]='session hostile: closing path from .*: invalid request in chunk 1: unknown request type'
	[outside-pool]='session hostile: closing path from .*: bad receive: remote access error'
)

_start_server
log=/tmp/trs-clt-good.log
# shellcheck disable=SC2046
"$B/trs-test-client" $(_path_args 1) -T 30 -q 8 >"$log" 2>&1 &
cpid=$!
_wait_connected "$log"
fail=0
"$B/trs-test-hostile" -w 3000 \
	-s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
	>/tmp/trs-hostile.log 2>&1 || fail=1
cat /tmp/trs-hostile.log
rc=0
wait $cpid || rc=$?
grep -E '^(total|RESULT)' "$log"
[ $rc -eq 0 ] || { echo "FAIL: good client failed ($rc)"; tail "$log"; fail=1; }
kill -0 "$SRV_PID" || { echo "FAIL: server died"; fail=1; }
echo "server log (reasons):"
grep -E 'rejecting|closing path|heartbeat|slow' /tmp/trs-srv.log | sed 's/^/  /' || true

for c in "${!reason[@]}"; do
	line=$(grep "^PASS: hostile $c:" /tmp/trs-hostile.log) ||
		{ echo "FAIL: $c: case failed"; fail=1; continue; }
	ms=$(echo "$line" | sed -n 's/.* after \([0-9]*\) ms.*/\1/p')
	[ -n "$ms" ] && [ "$ms" -le "$LIMIT_MS" ] ||
		{ echo "FAIL: $c: took ${ms:-?} ms (limit $LIMIT_MS)"; fail=1; }
	grep -Eq "${reason[$c]}" /tmp/trs-srv.log ||
		{ echo "FAIL: $c: server did not log '${reason[$c]}'"; fail=1; }
done
grep -q '^PASS: hostile idle:' /tmp/trs-hostile.log ||
	{ echo "FAIL: idle: control connection not kept"; fail=1; }
# a path that sends heartbeats but never joins is dropped all the same
"$B/trs-test-hostile" -w 20000 \
	-s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
	hb-only >/tmp/trs-hostile-hb.log 2>&1 || fail=1
cat /tmp/trs-hostile-hb.log
grep -q 'closing path .*did not join within' /tmp/trs-srv.log ||
	{ echo "FAIL: hb-only: the server logged no 'did not join'"; fail=1; }
# (a heartbeat before INFO_REQ used to crash the server: a NULL completion
# handler for its HB_ACK; the hostile client then saw a disconnect too)
kill -0 "$SRV_PID" || { echo "FAIL: hb-only: the server died"; fail=1; }
# a session's pool key works on its own path's connections only: not
# through another session's, not through its own path after a reconnect
# (the server's protection domain is per path; a shared one let B write
# into A's pool)
"$B/trs-test-hostile" -s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
	cross-session chunk-replay >/tmp/trs-hostile-cross.log 2>&1 || fail=1
cat /tmp/trs-hostile-cross.log
grep -q '^PASS: hostile cross-session' /tmp/trs-hostile-cross.log ||
	{ echo "FAIL: cross-session"; fail=1; }
# static chunks: a chunk stays writable with its key after its IO (shown)
grep -q '^PASS: hostile chunk-replay' /tmp/trs-hostile-cross.log ||
	{ echo "FAIL: chunk-replay"; fail=1; }
kill -0 "$SRV_PID" || { echo "FAIL: cross-session: the server died"; fail=1; }
! grep -q 'heartbeat timeout' /tmp/trs-srv.log ||
	{ echo "FAIL: a path was dropped by heartbeat timeout"; fail=1; }
# the good client's IO never stalled: every 1 s progress report has IO
stalls=$(awk '/^progress/ { for (i = 1; i <= NF; i++) if ($i ~ /^iops=/) {
	split($i, a, "="); if (a[2] + 0 == 0) n++ } } END { print n + 0 }' "$log")
reports=$(grep -c '^progress' "$log" || true)
echo "good client: $reports progress reports, $stalls without IO; the slowest:" \
	"$(grep '^progress' "$log" | sort -t= -k4 -n | head -n1)"
if ! [ "$reports" -ge 20 ] || ! [ "$stalls" = 0 ]; then
	echo "FAIL: the good client's IO stalled"
	# which seconds (mono= is the clock of the server log's [stamps])
	grep '^progress' "$log" | sed 's/^/  /'
	echo "server log:"
	sed 's/^/  /' /tmp/trs-srv.log | tail -60
	fail=1
fi
exit $fail
