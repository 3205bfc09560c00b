#!/usr/bin/env bash
# profiler-callstack.sh - caller attribution of the profiler plugin
# (experiments/profiler/tbprof.c, format 2) on synthetic code: tbsim
# (experiments/profiler/sim/) compiles the plugin with a stand-in for
# QEMU's plugin API and executes scripted translation blocks. One window
# per case, exact instruction counts:
#   nic-helper   rxe calls memcpy: memcpy's instructions are NIC-called
#   sw-helper    the block layer calls the same memcpy: they are not
#   mixed        both in one window (attribute.py below splits memcpy)
#   nested       rxe -> kmalloc -> memset; rxe -> rxe -> memcpy
#   tail         rxe -> h1, which jumps on to h2 (credited to h2)
#   owner        rxe calls a ULP completion handler (it calls memcpy)
#                and a wake-up: neither is a shared helper, nothing moves
#   irq          an interrupt in the middle of rxe's memcpy, whose handler
#                runs rxe -> memcpy of its own (both counted, apart)
#   softirq      rxe -> spin_unlock_bh -> __do_softirq -> rxe -> memcpy
#   switch       a context switch inside the helper: discarded, and the
#                other task's memcpy is not NIC-called
#   syscall      user NIC code -> libc memcpy -> syscall (kernel rxe ->
#                memcpy) -> sysret -> memcpy goes on
#   stray-iret   an iret that matches no entry: discarded
#   edges        START inside a NIC call, STOP inside another: only the
#                complete call in between counts
#   depth        600 nested calls: discarded
# Checked too: every T line is the same with caller=0 (attribution never
# changes the counts), caller=0 and a run without CONF write format 1 (no
# C/S lines), and attribute.py moves the C lines to "nic".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
prof=$top/experiments/profiler
name=profiler-callstack
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $name: $*"; exit 1; }

command -v gcc >/dev/null || { echo "SKIP: $name: no gcc"; exit 0; }
gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -I"$prof/sim" -I"$prof" \
	-o "$tmp/tbsim" "$prof/sim/tbsim.c" -lpthread 2>"$tmp/cc.log" ||
	{ cat "$tmp/cc.log"; fail "tbsim does not build with -Wall -Wextra -Werror"; }
echo "PASS: $name/build"

cat >"$tmp/nic.ranges" <<'EOF'
N ffffffffc0001000 ffffffffc0003000
N 7f0000000000 7f0000001000
H ffffffff81100000 ffffffff81200000
H 7f1000000000 7f1000001000
I ffffffff81e00000
I ffffffff81e01000
S ffffffff81f00000
X ffffffff81d00000
EOF

# Blocks: name, address, instructions (the last one decides the callback).
cat >"$tmp/script" <<'EOF'
tb conf    400000 conf jmp
tb start   400100 start jmp
tb stop    400200 stop jmp
# rdma_rxe (NIC)
tb nx_a    ffffffffc0001000 nop nop call
tb nx_b    ffffffffc0001010 nop ret
tb nx_c    ffffffffc0001020 nop call
tb rr_a    ffffffffc0002000 nop call
tb rr_b    ffffffffc0002010 nop ret
# shared helpers: memcpy, __kmalloc, memset, h1/h2, _raw_spin_unlock_bh, rec
tb mc_loop ffffffff81100000 nop nop nop jmp
tb mc_ret  ffffffff81100010 nop ret
tb km_a    ffffffff81100100 nop call
tb km_b    ffffffff81100110 nop nop ret
tb ms      ffffffff81100200 nop nop ret
tb h1      ffffffff81100300 nop jmp
tb h2      ffffffff81100400 nop nop ret
tb lk_a    ffffffff81100500 nop call
tb lk_b    ffffffff81100510 nop ret
tb rec     ffffffff81100600 nop call
# owners: block layer, wake-up, a ULP module's completion handler
tb blk_a   ffffffff81200000 nop call
tb blk_b   ffffffff81200010 nop ret
tb wk      ffffffff81300000 nop nop nop ret
tb ulp_a   ffffffffc0005000 nop nop call
tb ulp_c   ffffffffc0005010 nop call
tb ulp_b   ffffffffc0005020 nop ret
# entries: interrupt (and its exit), syscall, softirq, context switch
tb ie      ffffffff81e00000 nop nop call
tb ix      ffffffff81e00010 nop iret
tb se      ffffffff81e01000 nop call
tb sx      ffffffff81e01010 nop sysret
tb sq_a    ffffffff81f00000 nop call
tb sq_b    ffffffff81f00010 nop ret
tb sw      ffffffff81d00000 nop nop ret
# userspace: a NIC library, libc's memcpy
tb un_a    7f0000000000 nop call
tb un_b    7f0000000010 nop ret
tb lm_loop 7f1000000000 nop nop nop jmp
tb lm_ret  7f1000000010 nop ret
x conf
# 0 nic-helper
x start
x nx_a
x mc_loop 10
x mc_ret
x nx_b
x stop
# 1 sw-helper
x start
x blk_a
x mc_loop 10
x mc_ret
x blk_b
x stop
# 2 mixed
x start
x nx_a
x mc_loop 10
x mc_ret
x nx_b
x blk_a
x mc_loop 10
x mc_ret
x blk_b
x nx_a
x mc_loop 10
x mc_ret
x nx_b
x stop
# 3 nested
x start
x nx_a
x km_a
x ms
x km_b
x nx_b
x nx_c
x rr_a
x mc_loop 2
x mc_ret
x rr_b
x nx_b
x stop
# 4 tail
x start
x nx_a
x h1
x h2
x nx_b
x stop
# 5 owner
x start
x nx_a
x ulp_a
x mc_loop 3
x mc_ret
x ulp_c
x wk
x ulp_b
x nx_b
x nx_c
x wk
x nx_b
x stop
# 6 irq
x start
x nx_a
x mc_loop 5
x ie
x rr_a
x mc_loop 2
x mc_ret
x rr_b
x ix
x mc_loop 5
x mc_ret
x nx_b
x stop
# 7 softirq
x start
x nx_a
x lk_a
x sq_a
x rr_a
x mc_loop 2
x mc_ret
x rr_b
x sq_b
x lk_b
x nx_b
x stop
# 8 switch
x start
x nx_a
x km_a
x ms
x sw
x blk_a
x mc_loop 10
x mc_ret
x blk_b
x sw
x km_b
x nx_b
x stop
# 9 syscall
x start
x un_a
x lm_loop 3
x se
x nx_a
x mc_loop 1
x mc_ret
x nx_b
x sx
x lm_loop 2
x lm_ret
x un_b
x stop
# 10 stray-iret
x start
x nx_a
x mc_loop 2
x ix
x mc_ret
x nx_b
x stop
# 11 edges
x nx_a
x mc_loop 2
x start
x mc_loop 2
x mc_ret
x nx_b
x nx_a
x mc_loop 1
x mc_ret
x nx_b
x nx_a
x mc_loop 2
x stop
x mc_ret
x nx_b
# 12 depth
x start
x nx_a
x rec 600
x nx_b
x stop
EOF

run() {	# run OUT SCRIPT ARGS...
	local o=$1 s=$2
	shift 2
	"$tmp/tbsim" "$s" out="$o" nic="$tmp/nic.ranges" "$@" >"$o.log" 2>&1 ||
		{ cat "$o.log"; fail "tbsim $* failed"; }
}
run "$tmp/on.raw" "$tmp/script"
run "$tmp/off.raw" "$tmp/script" caller=0
grep -v '^x conf' "$tmp/script" >"$tmp/noconf"
run "$tmp/noconf.raw" "$tmp/noconf"

python3 - "$tmp" <<'EOP' || fail "caller attribution wrong (see above)"
import sys
d = sys.argv[1]
name = "profiler-callstack"

def windows(path):
    w, cur = {}, None
    for l in open(path):
        p = l.split()
        if not p or p[0] == "#":
            continue
        if p[0] == "W":
            cur = {"total": int(p[2]), "T": {}, "C": {}, "S": None}
        elif p[0] in "TC":
            cur[p[0]][int(p[1], 16)] = int(p[2])
        elif p[0] == "S":
            cur["S"] = dict(kv.split("=") for kv in p[2:])
            cur["S"] = {k: int(v) for k, v in cur["S"].items()}
        elif p[0] == "E":
            w[int(p[1])] = cur
    return w

on, off, nc = windows(d + "/on.raw"), windows(d + "/off.raw"), windows(d + "/noconf.raw")
A = {"mc_ret": 0xffffffff81100010, "km_a": 0xffffffff81100100, "km_b": 0xffffffff81100110,
     "ms": 0xffffffff81100200, "h2": 0xffffffff81100400, "lk_a": 0xffffffff81100500,
     "lk_b": 0xffffffff81100510, "lm_ret": 0x7f1000000010}
# (case, C lines by block, total, S fields that must match)
want = [
    ("nic-helper", {"mc_ret": 42}, 49, {"episodes": 1, "committed": 1, "called": 42}),
    ("sw-helper", {}, 48, {"episodes": 0, "called": 0}),
    ("mixed", {"mc_ret": 84}, 2 * 47 + 46 + 2, {"episodes": 2, "committed": 2, "called": 84}),
    ("nested", {"km_a": 2, "ms": 3, "km_b": 3, "mc_ret": 10}, 5 + 8 + 2 + 2 + 10 + 2 + 2 + 2,
     {"episodes": 2, "committed": 2, "called": 18}),
    ("tail", {"h2": 5}, 3 + 5 + 2 + 2, {"committed": 1, "called": 5}),
    ("owner", {}, 3 + 3 + 14 + 2 + 4 + 2 + 2 + 2 + 4 + 2 + 2,
     {"episodes": 2, "committed": 2, "called": 0, "owner": 2, "pushes": 2}),
    ("irq", {"mc_ret": 52}, 3 + 20 + 3 + 2 + 10 + 2 + 2 + 20 + 2 + 2 + 2,
     {"episodes": 2, "committed": 2, "called": 52, "pushes": 1}),
    ("softirq", {"lk_a": 2, "lk_b": 2, "mc_ret": 10}, 3 + 2 + 2 + 2 + 10 + 2 + 2 + 2 + 2 + 2,
     {"episodes": 2, "committed": 2, "called": 14, "pushes": 1}),
    ("switch", {}, 3 + 2 + 3 + 3 + 2 + 42 + 2 + 3 + 3 + 2 + 2,
     {"episodes": 1, "committed": 0, "ab_switch": 1, "discarded": 5}),
    ("syscall", {"lm_ret": 22, "mc_ret": 6}, 2 + 12 + 2 + 3 + 6 + 2 + 2 + 10 + 2 + 2,
     {"episodes": 2, "committed": 2, "called": 28, "pushes": 1}),
    ("stray-iret", {}, 3 + 8 + 2 + 2 + 2 + 2, {"episodes": 1, "committed": 0, "ab_iret": 1}),
    ("edges", {"mc_ret": 6}, 8 + 2 + 2 + 3 + 4 + 2 + 2 + 3 + 8 + 2,
     {"episodes": 2, "committed": 1, "called": 6, "ab_edge": 1}),
    ("depth", {}, 3 + 1200 + 2 + 2, {"ab_depth": 1, "called": 0}),
]
bad = []
if sorted(on) != list(range(len(want))):
    bad.append("windows %s, want 0..%d" % (sorted(on), len(want) - 1))
for i, (case, c, total, s) in enumerate(want):
    w = on.get(i)
    if w is None:
        continue
    got = w["C"]
    exp = {A[k]: v for k, v in c.items()}
    msgs = []
    if got != exp:
        msgs.append("C lines %s, want %s" % (
            {"%x" % k: v for k, v in sorted(got.items())}, {"%x" % k: v for k, v in sorted(exp.items())}))
    if w["total"] != total or sum(w["T"].values()) != total:
        msgs.append("total %d (T sum %d), want %d" % (w["total"], sum(w["T"].values()), total))
    if w["S"] is None:
        msgs.append("no S line")
    else:
        for k, v in s.items():
            if w["S"].get(k) != v:
                msgs.append("S %s=%s, want %d" % (k, w["S"].get(k), v))
    if sum(got.values()) != (w["S"] or {}).get("called"):
        msgs.append("C lines sum %d, S called=%s" % (sum(got.values()), (w["S"] or {}).get("called")))
    if off.get(i, {}).get("T") != w["T"] or off[i]["total"] != w["total"]:
        msgs.append("caller=0 counts differ from caller=1")
    if off.get(i, {}).get("C") or off.get(i, {}).get("S"):
        msgs.append("caller=0 wrote C/S lines")
    if nc.get(i, {}).get("T") != w["T"] or nc[i]["C"] or nc[i]["S"]:
        msgs.append("without CONF: counts differ or C/S lines written")
    print("%s: %s/%s%s" % ("FAIL" if msgs else "PASS", name, case,
                          ": " + "; ".join(msgs) if msgs else ""))
    bad += msgs
sys.exit(1 if bad else 0)
EOP

# attribute.py on the "mixed" and "nested" windows: memcpy's NIC-called
# share moves to nic, the block layer's stays in kernel-lib.
cat >"$tmp/kallsyms" <<'EOF'
ffffffff81000000 T _stext
ffffffff81100000 T memcpy
ffffffff81100100 T __kmalloc
ffffffff81100200 T memset
ffffffff81200000 T blk_mq_submit_bio
ffffffff81300000 T try_to_wake_up
ffffffffc0001000 t rxe_requester	[rdma_rxe]
ffffffffc0002000 t rxe_rcv	[rdma_rxe]
EOF
: >"$tmp/maps.none"
for w in 2 3; do
	python3 "$prof/attribute.py" --raw "$tmp/on.raw" --kallsyms "$tmp/kallsyms" --window $w \
		--maps "$tmp/maps.none" --out "$tmp/w$w.json" >"$tmp/att.log" 2>&1 || { cat "$tmp/att.log"; fail "attribute.py window $w"; }
	python3 "$prof/attribute.py" --raw "$tmp/off.raw" --kallsyms "$tmp/kallsyms" --window $w \
		--maps "$tmp/maps.none" --out "$tmp/off$w.json" >"$tmp/att.log" 2>&1 || { cat "$tmp/att.log"; fail "attribute.py caller=0 window $w"; }
done
python3 - "$tmp" <<'EOP' || fail "attribute.py with C lines wrong"
import json, sys
d = sys.argv[1]
r, n, o = (json.load(open(d + f)) for f in ("/w2.json", "/w3.json", "/off2.json"))
bad = []
def eq(what, got, want):
    if got != want:
        bad.append("%s: got %r, want %r" % (what, got, want))
eq("mixed components", r["components"],
   {"nic": 94, "kernel-lib": 42, "block": 4, "unattributed": 2})
eq("mixed symbol only", r["components_symbol_only"],
   {"kernel-lib": 126, "nic": 10, "block": 4, "unattributed": 2})
eq("mixed nic", (r["nic_insns"], r["nic_own_insns"], r["nic_called_insns"]), (94, 10, 84))
eq("mixed software", (r["software_insns"], r["software_insns_symbol_only"]), (48, 132))
eq("mixed format", r["caller_attribution"]["format"], 2)
eq("mixed moved_from", r["caller_attribution"]["moved_from"], {"kernel-lib": 84})
eq("mixed unplaced", r["caller_attribution"]["called_unplaced_insns"], 0)
eq("nested components", n["components"], {"nic": 31, "unattributed": 2})
eq("nested moved_from", n["caller_attribution"]["moved_from"], {"kernel-lib": 13, "kernel-mm": 5})
eq("caller=0: format 1", o["caller_attribution"]["format"], 1)
eq("caller=0: symbol split", (o["components"], o["nic_insns"], o["nic_called_insns"]),
   (r["components_symbol_only"], 10, 0))
if bad:
    print("\n".join(bad))
    sys.exit(1)
EOP
echo "PASS: $name/attribute"
