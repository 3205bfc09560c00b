#!/usr/bin/env bash
# run-vm-boots - tests/run-vm's handling of a guest that cannot go on, in
# four short boots of the testbed (about a minute): a test that leaves a
# process SIGKILL cannot end (a read of a suspended device-mapper device)
# fails and the tests after it run in a fresh guest; a test that meets a
# testbed defect (exit 75 with a TB_DEFECT line, as tb_path_restore ends a
# script on the rxe removal defect) is run once more in a fresh guest and
# is a SKIP the second time; a script given twice keeps both runs' logs
# (the failing first run's lines are the ones its FAIL shows); every other
# result stands, and the closing count says so.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
mkdir -p build
tmp=$(mktemp -d "$top/build/run-vm-boots-XXXX")
trap 'rm -rf "$tmp"' EXIT
check() {	# NAME OK(0/1) WHY
	if [ "$2" = 0 ]; then echo "PASS: run-vm-boots: $1"; else echo "FAIL: run-vm-boots: $1: $3"; fi
}
printf '#!/bin/bash\n# TIMEOUT=60\necho fine\n' >"$tmp/a-pass.sh"
cat >"$tmp/b-wedge.sh" <<'EOT'
#!/bin/bash
# TIMEOUT=60
modprobe null_blk nr_devices=1 gb=1 || exit 1
dmsetup create --noudevsync rvw --table "0 1024 linear /dev/nullb0 0" && dmsetup mknodes rvw || exit 1
dmsetup suspend rvw || exit 1
dd if=/dev/mapper/rvw of=/dev/null iflag=direct count=1 2>/dev/null &
sleep 1
echo "a read of a suspended device in flight"
EOT
printf '#!/bin/bash\n# TIMEOUT=60\necho "TB_DEFECT: a simulated one"\nexit 75\n' >"$tmp/c-defect.sh"
cp "$tmp/a-pass.sh" "$tmp/d-pass.sh"
cat >"$tmp/e-twice.sh" <<'EOT'
#!/bin/bash
# TIMEOUT=60
[ -e /tmp/rvb-e-ran ] && { echo "second run passes"; exit 0; }
touch /tmp/rvb-e-ran
echo "first run fails"
exit 1
EOT
n=${tmp#"$top"/}
out=$(tests/run-vm --label rvb "$n/a-pass.sh" "$n/b-wedge.sh" "$n/c-defect.sh" "$n/d-pass.sh" "$n/e-twice.sh" "$n/e-twice.sh" 2>&1)
rc=$?
# kept indented: the lines of the inner run must not count as this run's
echo "$out" | grep -v '^    | \[' | sed 's/^/  > /' >"$top/build/run-vm-boots.out"
has() { echo "$out" | grep -q -- "$1"; }
ok=1; has "^PASS: rvb/vm/$n/a-pass.sh" && ok=0
check "a passing test passes" $ok "$(cat build/run-vm-boots.out)"
ok=1; has "^FAIL: rvb/vm/$n/b-wedge.sh: exit 70" && has "left processes SIGKILL cannot end" && ok=0
check "a test that leaves an unkillable process fails" $ok "$(cat build/run-vm-boots.out)"
ok=1; has "^RETRY: rvb/vm/$n/c-defect.sh: TB_DEFECT: a simulated one" &&
	has "^SKIP: rvb/vm/$n/c-defect.sh: the testbed defect again" && ok=0
check "a testbed defect runs the test again in a fresh guest, then skips it" $ok "$(cat build/run-vm-boots.out)"
ok=1; has "^PASS: rvb/vm/$n/d-pass.sh" && [ "$(echo "$out" | grep -c '^run-vm: boot [0-9] ended early')" = 3 ] && ok=0
check "the tests after a wedged guest run in fresh guests (3 early ends)" $ok "$(cat build/run-vm-boots.out)"
e=$(echo "$n/e-twice" | tr / _)
elog=$(echo "$out" | sed -n "s|^FAIL: rvb/vm/$n/e-twice.sh: exit 1 ([0-9]*s); last lines of \(.*\):\$|\1|p")
ok=1; [ "${elog##*/}" = "$e.log" ] && has "^    | first run fails" && has "^PASS: rvb/vm/$n/e-twice.sh" &&
	grep -q "second run passes" "$(dirname "$elog")/$e.2.log" && ok=0
check "a script given twice keeps one log per run" $ok "log '$elog'; $(cat build/run-vm-boots.out)"
ok=1; [ $rc = 1 ] && has "^rvb/vm tests: 3 passed, 2 failed, 1 skipped$" && ok=0
check "the count and the exit status" $ok "rc=$rc; $(cat build/run-vm-boots.out)"
