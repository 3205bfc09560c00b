#!/usr/bin/env bash
# profiler-vm.sh - the instruction profiler end to end, in its own icount
# guest: `run --mode icount --profile` runs experiments/profiler/
# selftest-guest.sh, where build/profiler/busyloop marks START, spins
# N x 4 instructions in spin(), marks STOP and reads CLOCK_MONOTONIC around
# it; the maps dump is taken right after STOP. Checks:
#   clock:  the plugin's window total is within 1% of the guest's clock
#           delta (icount shift=0: 1 ns per instruction, guest fully busy)
#   spin:   attribute.py puts >90% of the window in busyloop:spin, and
#           spin's count is 4N within 0.1% (inline counters add TB lengths)
#   boot:   the window's since-boot counts at STOP - START equal its total
#   callsplit: (window 1, caller attribution: tbnic's ranges, the CONF
#           marker) libcallsplit-nic.so's nic_entry calls helper_spin
#           (4 x NIC_ITERS) and libc's memcpy; sw_entry, not NIC, calls
#           helper_spin (4 x SW_ITERS) and the same memcpy. Want
#           helper_spin's NIC-called share = 4 x NIC_ITERS within 0.1% and
#           half of libc's instructions NIC-called (40-60%), with the
#           attribution rules of $TB_OUT/callsplit.conf
# A host test that boots a VM (tests/run-vm runs its scripts inside one
# MTTCG guest, where the profiler cannot load): it takes the VM lock like
# every testbed user, and ~30 s of wall time once it has it.
# PROFILER_VM=0 skips it.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
name=profiler-vm
n=50000000
cd "$top"

skip() { echo "SKIP: $name: $*"; exit 0; }
fail() { echo "FAIL: $name: $*"; exit 1; }

[ "${PROFILER_VM:-1}" = 1 ] || skip "PROFILER_VM=0"
[ -r build/profiler/tbprof.so ] || skip "plugin not built (no QEMU plugin header; experiments/profiler/fetch-header.sh)"
[ -x build/profiler/busyloop ] || fail "build/profiler/busyloop missing (make build)"
[ -r "/boot/vmlinuz-$(experiments/testbed/kver.sh 2>/dev/null)" ] || skip "no guest kernel (make deps)"

out=$(mktemp -d "$top/build/profiler/vmtest-XXXX")
start=$(date +%s)
# One guest at a time on a shared machine: take the VM lock unless the
# caller already holds it (TB_VM_LOCK_HELD=1, e.g. a whole make check run
# under flock), which would otherwise deadlock.
lock=(flock /tmp/ibtrs-vm.lock)
[ "${TB_VM_LOCK_HELD:-0}" = 1 ] && lock=()
"${lock[@]}" experiments/testbed/run -q --mode icount --profile --timeout 120 \
	--out "$out" -- experiments/profiler/selftest-guest.sh "$n" >"$out/run.log" 2>&1
rc=$?
echo "$name: testbed exit $rc in $(( $(date +%s) - start ))s (incl. waiting for the VM lock), output in $out"
[ $rc = 0 ] || fail "testbed run failed ($rc): $(tail -n 5 "$out/run.log" "$out/output.log" 2>/dev/null)"

python3 experiments/profiler/attribute.py --raw "$out/profile.raw" --kallsyms "$out/kallsyms" \
	--maps "$out/maps.0" --window 0 --out "$out/busyloop.profile.json" --cell busyloop ||
	fail "attribute.py failed"

python3 - "$out" "$n" <<'EOP'
import json, re, sys
out, n = sys.argv[1], int(sys.argv[2])
name = "profiler-vm"
bl = open(out + "/busyloop.out").read()
m = re.search(r"iterations=(\d+) insns_per_iter=(\d+) clock_ns=(\d+)", bl)
if not m or int(m.group(1)) != n:
    print("FAIL: %s: no busyloop result in %r" % (name, bl))
    sys.exit(1)
per, clock = int(m.group(2)), int(m.group(3))
r = json.load(open(out + "/busyloop.profile.json"))
total = r["plugin_total_insns"]
spin = sum(f["insns"] for f in r["top_functions"] if f["function"] == "busyloop:spin")
ok = True

def check(case, good, msg):
    global ok
    print("%s: %s/%s: %s" % ("PASS" if good else "FAIL", name, case, msg))
    ok = ok and good

dev = abs(total - clock) / clock
check("clock", dev < 0.01,
      "window %d insns, CLOCK_MONOTONIC delta %d ns: %.4f%% apart (limit 1%%)"
      % (total, clock, 100 * dev))
check("spin", total and spin / total > 0.90 and abs(spin - per * n) <= per * n * 0.001,
      "busyloop:spin %d insns = %.2f%% of the window (want > 90%%), %d expected"
      % (spin, 100.0 * spin / max(total, 1), per * n))
bt = r["boot_insns_at_stop"] - r["boot_insns_at_start"]
check("boot", bt == total, "since-boot count STOP - START %d, window total %d" % (bt, total))
sys.exit(0 if ok else 1)
EOP
rc=$?

python3 experiments/profiler/attribute.py --raw "$out/profile.raw" --kallsyms "$out/kallsyms" \
	--rules "$out/callsplit.conf" --maps "$out/maps.1" --window 1 \
	--out "$out/callsplit.profile.json" --cell callsplit || fail "attribute.py (callsplit) failed"
python3 - "$out" <<'EOP' || rc=1
import json, re, sys
out = sys.argv[1]
name = "profiler-vm"
cs = open(out + "/callsplit.out").read()
m = re.search(r"nic_iters=(\d+) sw_iters=(\d+) len=(\d+) insns_per_iter=(\d+)", cs)
if not m:
    print("FAIL: %s/callsplit: no callsplit result in %r" % (name, cs))
    sys.exit(1)
ni, si, ln, per = (int(x) for x in m.groups())
r = json.load(open(out + "/callsplit.profile.json"))
ca = r["caller_attribution"]
st = ca["plugin_stats"] or {}
helpers = {h["function"]: h for h in ca["top_helpers"]}
hs = helpers.get("callsplit:helper_spin", {"insns": 0, "of_function": 0})
libc = [h for h in ca["top_helpers"] if h["function"].startswith("libc.so")]
lm = sum(h["insns"] for h in libc)
lt = sum(h["of_function"] for h in libc)
print("%s: callsplit: nic_called %d, helper_spin %d of %d, libc %d of %d, stats %s"
      % (name, r["nic_called_insns"], hs["insns"], hs["of_function"], lm, lt, st))
ok = True
def check(case, good, msg):
    global ok
    print("%s: %s/%s: %s" % ("PASS" if good else "FAIL", name, case, msg))
    ok = ok and good
check("callsplit-format", ca["format"] == 2 and st.get("helpers", 0) > 0,
      "raw format %d, %s helper ranges" % (ca["format"], st.get("helpers")))
want = per * ni
check("callsplit-helper", abs(hs["insns"] - want) <= want * 0.001 and
      abs(hs["of_function"] - per * (ni + si)) <= per * (ni + si) * 0.001,
      "helper_spin NIC-called %d (want %d), of %d (want %d)"
      % (hs["insns"], want, hs["of_function"], per * (ni + si)))
check("callsplit-memcpy", lt > 0 and 0.4 <= lm / lt <= 0.6,
      "libc: %d of %d NIC-called (want 40-60%%: two equal memcpy calls)" % (lm, lt))
sys.exit(0 if ok else 1)
EOP
exit $rc
