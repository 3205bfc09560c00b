#!/usr/bin/env bash
# profiler-attribute.sh - experiments/profiler/attribute.py on a synthetic
# profile: a raw file with two windows, a made-up kallsyms (built-in and
# module symbols), and a maps dump whose processes map ELF files built here
# (a PIE binary with .symtab named "fio", a stripped shared library with
# only dynamic symbols named "libibverbs.so.1"). Checks symbol lookup,
# component sums, unattributed/ambiguous accounting, batch mode, and the
# exit status for a window that is not in the raw file.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
att=$top/experiments/profiler/attribute.py
name=profiler-attribute
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $name: $*"; exit 1; }

command -v gcc >/dev/null && command -v nm >/dev/null || { echo "SKIP: $name: no gcc/nm"; exit 0; }

cat >"$tmp/prog.c" <<'EOC'
int alpha(int x) { return x * 3 + 1; }
int beta(int x) { int i, s = 0; for (i = 0; i < x; i++) s += alpha(i); return s; }
int main(int argc, char **argv) { (void)argv; return beta(argc); }
EOC
cat >"$tmp/lib.c" <<'EOC'
int gamma_fn(int x) { return x ^ 0x55; }
int delta_fn(int x) { return gamma_fn(x) + 7; }
EOC
gcc -O1 -fno-inline -fPIE -pie -o "$tmp/fio" "$tmp/prog.c" || fail "gcc prog"
gcc -O1 -fno-inline -fPIC -shared -o "$tmp/libibverbs.so.1" "$tmp/lib.c" || fail "gcc lib"
strip --strip-all "$tmp/libibverbs.so.1" || fail strip
cp "$tmp/fio" "$tmp/other-tool"

# Everything address-related is computed from the files themselves.
python3 - "$tmp" <<'EOP' || fail "could not build the synthetic inputs"
import os, struct, subprocess, sys
d = sys.argv[1]

def text_load(path):
    """(p_offset, p_vaddr, p_filesz) of the executable PT_LOAD."""
    b = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", b, 32)
    es, n = struct.unpack_from("<HH", b, 54)
    for i in range(n):
        t, fl, off, va, _, fs, _, _ = struct.unpack_from("<IIQQQQQQ", b, phoff + i * es)
        if t == 1 and fl & 1:
            return off, va, fs
    raise SystemExit("no exec PT_LOAD in " + path)

def sym(path, name, dyn=False):
    out = subprocess.run(["nm"] + (["-D"] if dyn else []) + [path],
                         capture_output=True, text=True, check=True).stdout
    for l in out.splitlines():
        p = l.split()
        if len(p) == 3 and p[2] == name:
            return int(p[0], 16)
    raise SystemExit("no symbol %s in %s" % (name, path))

def mapping(path, base):
    off, va, fs = text_load(path)
    start = base + (va & ~0xfff)
    end = base + ((va + fs + 0xfff) & ~0xfff)
    return "%x-%x r-xp %08x 08:01 1234 %s" % (start, end, off & ~0xfff, path)

fio, lib, other = d + "/fio", d + "/libibverbs.so.1", d + "/other-tool"
FB, LB, OB = 0x555555554000, 0x7f0000000000, 0x560000000000
# Two processes map different files (of different components) at AMB: ambiguous.
AMB = 0x7f1000000000
with open(d + "/maps.0", "w") as f:
    f.write("P 100 fio\n" + mapping(fio, FB) + "\n" + mapping(lib, LB) + "\n")
    f.write("7fff00000000-7fff00002000 r-xp 00000000 00:00 0                  [vdso]\n")
    f.write("7f1000000000-7f1000010000 r-xp 00000000 08:01 99 /nonexistent/libx.so\n")
    # A forked child maps fio identically: not ambiguous.
    f.write("P 101 fio worker\n" + mapping(fio, FB) + "\n")
    f.write("P 102 kworker/0:1\n")
    f.write("P 103 other-tool\n" + mapping(other, OB) + "\n")
    f.write("7f1000000000-7f1000010000 r-xp 00001000 08:01 98 /nonexistent/libc.so.6\n")
with open(d + "/maps.1", "w") as f:
    f.write("P 200 fio\n" + mapping(fio, FB) + "\n")

tbs = {
    # kernel
    0xffffffff81001010: 1000,	# udp_send_skb -> nic
    0xffffffff81002004: 2000,	# blk_mq_submit_bio -> block
    0xffffffff81003000: 300,	# do_syscall_64 -> syscalls+sched
    0xffffffff81004100: 40,	# some_other_fn -> other
    0xffffffffc0001020: 5000,	# rxe_requester [rdma_rxe] -> nic
    0xffffffffc0001100: 500,	# rxe_responder [rdma_rxe] -> nic
    0xffffffffc0002010: 700,	# null_queue_rq [null_blk] -> backend
    0xffffffff80000000: 11,	# below every symbol -> unattributed
    # user
    FB + sym(fio, "alpha") + 2: 4000,
    FB + sym(fio, "beta") + 1: 6000,
    LB + sym(lib, "gamma_fn", True): 800,
    0x7fff00000010: 60,		# [vdso] -> libc, file-level
    0x400000: 13,		# no mapping -> unattributed
    AMB + 0x20: 17,		# two files -> ambiguous, unattributed
    OB + sym(other, "beta"): 5,	# other-tool:beta -> other
}
with open(d + "/profile.raw", "w") as f:
    f.write("# tbprof: x86_64\n")
    f.write("W 0 %d 1000 %d\n" % (sum(tbs.values()), 1000 + sum(tbs.values())))
    for a in sorted(tbs):
        f.write("T %x %d\n" % (a, tbs[a]))
    f.write("E 0\n")
    f.write("W 1 900 5000 5900\nT %x 900\nE 1\n" % (FB + sym(fio, "alpha")))
    # An unfinished window (QEMU killed mid-write) must be ignored.
    f.write("W 2 10 1 2\nT %x 10\n" % (FB + sym(fio, "alpha")))
with open(d + "/kallsyms", "w") as f:
    f.write("0000000000000000 A fixed_percpu_data\n"
            "ffffffff81000000 T _stext\n"
            "ffffffff81001000 T udp_send_skb\n"
            "ffffffff81002000 t blk_mq_submit_bio\n"
            "ffffffff81002800 d some_data\n"
            "ffffffff81003000 T do_syscall_64\n"
            "ffffffff81004000 T some_other_fn\n"
            "ffffffffc0001000 t rxe_requester\t[rdma_rxe]\n"
            "ffffffffc0001080 t rxe_responder\t[rdma_rxe]\n"
            "ffffffffc0002000 t null_queue_rq\t[null_blk]\n")
with open(d + "/batch.list", "w") as f:
    f.write("0 cellA maps.0\n1 cellB maps.1\n")
EOP

python3 "$att" --raw "$tmp/profile.raw" --kallsyms "$tmp/kallsyms" --maps-dir "$tmp" \
	--window 0 --out "$tmp/w0.json" --cell cellA >"$tmp/out.log" 2>&1 ||
	{ cat "$tmp/out.log"; fail "attribute.py window 0 failed"; }

python3 - "$tmp/w0.json" <<'EOP' || fail "window 0 results wrong (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
def eq(what, got, want):
    if got != want:
        bad.append("%s: got %r, want %r" % (what, got, want))
c = r["components"]
eq("total", r["total_insns"], 20446)
eq("plugin total", r["plugin_total_insns"], 20446)
eq("components sum to total", sum(c.values()), r["total_insns"])
eq("kernel", r["kernel_insns"], 9551)
eq("user", r["user_insns"], 10895)
eq("nic", c.get("nic"), 6500)
eq("nic_insns", r["nic_insns"], 6500)
eq("software", r["software_insns"], 20446 - 6500)
eq("block", c.get("block"), 2000)
eq("backend", c.get("backend"), 700)
eq("syscalls+sched", c.get("syscalls+sched"), 300)
eq("fio", c.get("fio"), 10000)
eq("verbs-user", c.get("verbs-user"), 800)
eq("libc", c.get("libc"), 60)
eq("other", c.get("other"), 45)
eq("unattributed", c.get("unattributed"), 41)
eq("unattributed detail", r["unattributed"],
   {"kernel_no_symbol": 11, "user_no_mapping": 13, "user_ambiguous": 17,
    "user_no_symbol": 60})
eq("by process", r["user_by_process"], {"fio|fio worker": 10000, "fio": 860, "other-tool": 5})
f = {x["function"]: x for x in r["top_functions"]}
eq("fio:beta", f.get("fio:beta", {}).get("insns"), 6000)
eq("fio:alpha", f.get("fio:alpha", {}).get("insns"), 4000)
eq("dynamic symbol", f.get("libibverbs.so.1:gamma_fn", {}).get("insns"), 800)
eq("module symbol", f.get("rxe_requester [rdma_rxe]", {}).get("component"), "nic")
eq("module symbol 2", f.get("rxe_responder [rdma_rxe]", {}).get("insns"), 500)
eq("built-in symbol", f.get("blk_mq_submit_bio", {}).get("insns"), 2000)
eq("top order", r["top_functions"][0]["function"], "fio:beta")
eq("cell", r["cell"], "cellA")
if bad:
    print("\n".join(bad))
    sys.exit(1)
EOP
echo "PASS: $name/window"

python3 "$att" --raw "$tmp/profile.raw" --kallsyms "$tmp/kallsyms" --batch "$tmp/batch.list" \
	--out-dir "$tmp/cells" >"$tmp/batch.log" 2>&1 || { cat "$tmp/batch.log"; fail "batch mode failed"; }
python3 - "$tmp/cells" <<'EOP' || fail "batch results wrong"
import json, sys
a = json.load(open(sys.argv[1] + "/cellA.profile.json"))
b = json.load(open(sys.argv[1] + "/cellB.profile.json"))
assert a["total_insns"] == 20446, a["total_insns"]
assert b["window"] == 1 and b["total_insns"] == 900, b
assert b["components"] == {"fio": 900}, b["components"]
assert b["top_functions"][0]["function"] == "fio:alpha", b["top_functions"]
EOP
echo "PASS: $name/batch"

python3 "$att" --raw "$tmp/profile.raw" --kallsyms "$tmp/kallsyms" --maps-dir "$tmp" \
	--window 2 --out "$tmp/w2.json" >"$tmp/w2.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "no profile" "$tmp/w2.log" && [ ! -e "$tmp/w2.json" ] ||
	fail "an unclosed window: want exit 2 and 'no profile', got $rc: $(cat "$tmp/w2.log")"
echo "PASS: $name/missing-window"
