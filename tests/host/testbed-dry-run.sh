#!/usr/bin/env bash
# testbed-dry-run - the testbed's real-hardware mode (two hosts over ssh),
# dry-run: the ssh commands it would run carry the per-path environment of
# the hosts file, and bad hosts files are refused with exit status 125.
set -u	# no pipefail: `echo | grep -q` may SIGPIPE the echo
top=$(cd "$(dirname "$0")/../.." && pwd)
run=$top/experiments/testbed/run
ex=$top/experiments/testbed/hosts.conf.example
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
check() {	# check NAME COND-RESULT MESSAGE
	if [ "$2" = 0 ]; then echo "PASS: testbed-dry-run: $1"; else echo "FAIL: testbed-dry-run: $1: $3"; fi
}

out=$("$run" --hosts "$ex" --paths 2 --dry-run -- tests/vm/001-testbed-paths.sh 2>&1); rc=$?
ok=1
[ $rc = 0 ] && echo "$out" | grep -q 'ssh -o BatchMode=yes root@server.example true' &&
	echo "$out" | grep -q 'root@client.example' &&
	echo "$out" | grep -q 'TB_MODE=real' && echo "$out" | grep -q 'TB_PATHS=2' &&
	echo "$out" | grep -qF "TB_SRV_ADDRS=\\'192.0.2.1\\ 198.51.100.1\\'" &&
	echo "$out" | grep -qF "TB_RXE_DEVS=\\'mlx5_0\\ mlx5_1\\'" &&
	echo "$out" | grep -q 'tests/vm/001-testbed-paths.sh' &&
	echo "$out" | grep -q 'scp -rq root@client.example:' && ok=0
check "2-path dry run prints the ssh steps" $ok "rc=$rc output: $out"

out=$("$run" --hosts "$ex" --paths 1 --dry-run -- true 2>&1); rc=$?
ok=1
[ $rc = 0 ] && echo "$out" | grep -qF "TB_SRV_ADDRS=\\'192.0.2.1\\'" &&
	! echo "$out" | grep -q 198.51.100.1 && ok=0
check "1-path dry run takes the first path only" $ok "rc=$rc output: $out"

out=$("$run" --hosts "$ex" --paths 4 --dry-run -- true 2>&1); rc=$?
ok=1; [ $rc = 125 ] && echo "$out" | grep -q 'needs 4' && ok=0
check "more paths than the hosts file lists is refused" $ok "rc=$rc output: $out"

grep -v '^TB_SERVER_SSH' "$ex" >"$tmp/bad.conf"
out=$("$run" --hosts "$tmp/bad.conf" --dry-run -- true 2>&1); rc=$?
ok=1; [ $rc = 125 ] && echo "$out" | grep -q 'does not set TB_SERVER_SSH' && ok=0
check "a hosts file without the server is refused" $ok "rc=$rc output: $out"

out=$("$run" --hosts "$tmp/missing.conf" --dry-run -- true 2>&1); rc=$?
ok=1; [ $rc = 125 ] && echo "$out" | grep -q 'cannot read' && ok=0
check "a missing hosts file is refused" $ok "rc=$rc output: $out"

out=$("$run" --paths 5 -- true 2>&1); rc=$?
ok=1; [ $rc = 125 ] && ok=0
check "--paths 5 is refused" $ok "rc=$rc output: $out"

out=$("$run" --kernel bogus -- true 2>&1); rc=$?
ok=1; [ $rc = 125 ] && echo "$out" | grep -q 'debian or debug' && ok=0
check "--kernel bogus is refused" $ok "rc=$rc output: $out"

out=$(TB_DEBUG_KERNEL_DIR=$tmp/no-kernel "$run" --kernel debug -- true 2>&1); rc=$?
ok=1; [ $rc = 125 ] && echo "$out" | grep -q 'no debug kernel in' && ok=0
check "--kernel debug without a built debug kernel is refused" $ok "rc=$rc output: $out"

out=$("$run" --hosts "$ex" --kernel debug --dry-run -- true 2>&1); rc=$?
ok=1; [ $rc = 125 ] && echo "$out" | grep -q 'QEMU guest only' && ok=0
check "--kernel debug with --hosts is refused" $ok "rc=$rc output: $out"

out=$(TB_DEBUG_KERNEL_DIR=$tmp/no-kernel "$top/experiments/testbed/debug-kernel.sh" --print-release 2>&1); rc=$?
ok=1; [ $rc = 1 ] && echo "$out" | grep -q 'no debug kernel built' && ok=0
check "debug-kernel.sh --print-release without a build fails" $ok "rc=$rc output: $out"
exit 0
