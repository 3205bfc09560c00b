#!/usr/bin/env bash
# two-hosts - the two-host testbed end to end (its own boot of two guests,
# experiments/testbed/run --two-hosts --paths 2): verified IO from the
# client guest to ibnbd-serverd in the server guest over both links, then
# with link 1 down; then the kernel client and server modules in the two
# guests, with the server's NIC of link 1 unplugged by the host (QMP), and
# the server guest killed and booted again during a verified job
# (experiments/testbed/two-hosts-selftest.sh).
# TWO_HOSTS_VM=0 skips it. Takes the VM lock unless TB_VM_LOCK_HELD=1.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
name=two-hosts
[ "${TWO_HOSTS_VM:-1}" = 1 ] || { echo "SKIP: $name: TWO_HOSTS_VM=0"; exit 0; }
[ -r "/boot/vmlinuz-$(experiments/testbed/kver.sh 2>/dev/null)" ] ||
	{ echo "SKIP: $name: no guest kernel (make deps)"; exit 0; }
[ -e fio-engine/build/ibtrs.so ] && [ -x server/build/ibnbd-serverd ] ||
	{ echo "FAIL: $name: engine or daemon not built (make build)"; exit 1; }
out=$top/build/testbed/two-hosts-test
mkdir -p "$top/build/testbed"
lock=(flock /tmp/ibtrs-vm.lock)
[ "${TB_VM_LOCK_HELD:-0}" = 1 ] && lock=()
start=$(date +%s)
"${lock[@]}" experiments/testbed/run --two-hosts --paths 2 -q --timeout 300 --out "$out" -- \
	experiments/testbed/two-hosts-selftest.sh >"$out.log" 2>&1
rc=$?
echo "$name: exit $rc in $(( $(date +%s) - start ))s, output in $out"
grep -h "^two-hosts:" "$out/clt/output.log" 2>/dev/null
if [ $rc = 0 ] && [ "$(grep -c '^PASS: two-hosts' "$out/clt/output.log")" = 5 ]; then
	grep '^PASS: two-hosts' "$out/clt/output.log"
else
	# the FAIL line and the indented lines that explain it
	grep -q '^FAIL: ' "$out/clt/output.log" 2>/dev/null &&
		sed -n '/^FAIL: /,$p' "$out/clt/output.log" | grep -E '^(FAIL: |  \| )' | head -n 100 ||
		echo "FAIL: $name: exit $rc: $(tail -n 5 "$out.log")"
	exit 1
fi
