#!/bin/bash
# host-cli.sh - ibnbd-serverd command line and start-up failures on a host
# without RDMA: exit codes and messages. PASS:/FAIL: lines.
set -u
B=${1:-build/ibnbd-serverd}
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; failed=1; }

"$B" --help >"$out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q -- '--root DIR' "$out" && pass help || fail help "rc=$rc"

"$B" --bogus >"$out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option '--bogus'" "$out" && pass bad_option || fail bad_option "rc=$rc $(head -1 "$out")"

"$B" --root /nonexistent/x >"$out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'search root /nonexistent/x' "$out" && pass missing_root || fail missing_root "rc=$rc $(head -1 "$out")"

# No RDMA here: listening fails, clearly, in the foreground...
timeout 20 "$B" --root /tmp --port 4791 >"$out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'cannot listen on port 4791' "$out" && pass listen_failure || fail listen_failure "rc=$rc $(tail -1 "$out")"

# ...and the daemon's parent reports the failure with its exit status.
timeout 20 "$B" --daemon --root /tmp --port 4791 --pidfile /tmp/ibnbd-cli-test.pid >"$out" 2>&1; rc=$?
[ $rc -eq 1 ] && pass daemon_start_failure || fail daemon_start_failure "rc=$rc"
exit $failed
