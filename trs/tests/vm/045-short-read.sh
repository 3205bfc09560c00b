#!/bin/bash
# A successful READ answer shorter than the request never reaches the user
# as good data. Against a server that answers every read one sector short:
#  lib: through ibtrs_srv_resp(), which refuses the short answer (logs it,
#       returns an error to its caller) and sends EIO instead;
#  raw: bypassing that check (library test hook), so the short answer goes
#       out and the client library must catch it: IO fails with EIO, counted
#       in proto_errors, the path failed with the logged protocol error.
# Either way the client sees IO errors and no successful read (a short read
# taken as good would also show as verify errors: buffers start as 0xEE),
# in each registration mode (the answer's length travels in every mode).
# TIMEOUT=200
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
. "$TB_TOP/trs/tests/vm/lib.sh"

fail=0
# check NAME SERVER-MODE CLIENT-ARGS...
check() {
	local name=$1 mode=$2 log=/tmp/trs-clt-short-$1.log skip rc=0
	shift 2
	skip=0
	[ ! -f /tmp/trs-srv.log ] || skip=$(wc -l </tmp/trs-srv.log)
	_stop_server
	_start_server -S "$mode"
	# shellcheck disable=SC2046
	"$B/trs-test-client" $(_path_args 1) -w 0 -T 5 -q 4 "$@" >"$log" 2>&1 || rc=$?
	_stop_server
	tail -n +$((skip + 1)) /tmp/trs-srv.log >/tmp/trs-srv-short-$name.log
	local ios errs verr perr
	ios=$(_total "$log" ios) errs=$(_total "$log" errors)
	verr=$(_total "$log" verify_errors) perr=$(_pathval "$log" 0 proto_errors)
	echo "$name: client rc=$rc ios=$ios errors=$errs verify_errors=$verr" \
		"proto_errors=$perr; server: $(grep -o 'short_answers=.*' \
		/tmp/trs-srv-short-$name.log || echo '?')"
	grep -m1 'IO ERROR' "$log" || true
	[ "$rc" != 0 ] || { echo "FAIL: $name: client reported success"; fail=1; }
	[ "${ios:-x}" = 0 ] || { echo "FAIL: $name: $ios reads completed as good"; fail=1; }
	[ "${errs:-0}" -gt 0 ] || { echo "FAIL: $name: no IO error"; fail=1; }
	[ "${verr:-x}" = 0 ] || { echo "FAIL: $name: verify errors"; fail=1; }
	grep -q 'IO ERROR: read .*Input/output error' "$log" ||
		{ echo "FAIL: $name: no read failed with EIO"; fail=1; }
	if [ "$mode" = lib ]; then
		grep -q 'read answer of chunk .* has .* bytes, the request .*; failing the IO with EIO' \
			/tmp/trs-srv-short-$name.log ||
			{ echo "FAIL: $name: server did not log its refusal"; fail=1; }
		grep -Eq 'short_answers=[1-9][0-9]* refused=[1-9]' /tmp/trs-srv-short-$name.log ||
			{ echo "FAIL: $name: ibtrs_srv_resp did not return an error"; fail=1; }
		[ "${perr:-x}" = 0 ] || { echo "FAIL: $name: client counted protocol errors"; fail=1; }
	else
		grep -Eq 'short_answers=[1-9][0-9]* refused=0' /tmp/trs-srv-short-$name.log ||
			{ echo "FAIL: $name: short answers were not sent"; fail=1; }
		grep -q 'protocol error: successful READ answer of chunk .* has .* bytes, the request' "$log" ||
			{ echo "FAIL: $name: client did not log the protocol error"; fail=1; }
		[ "${perr:-0}" -gt 0 ] || { echo "FAIL: $name: proto_errors not counted"; fail=1; }
	fi
}

check lib lib
check raw raw
check raw-inval-local raw --inval local
check raw-global raw --mr global
exit $fail
