#!/usr/bin/env python3
"""attribute.py - attribute a tbprof window's instructions to functions and
components.

One window:
  attribute.py --raw profile.raw --kallsyms K (--maps FILE | --maps-dir D)
               --window N --out cell.profile.json [--cell NAME]
  (--maps-dir D reads D/maps.<N>)
Many windows of one boot (kallsyms and ELF symbols are read once):
  attribute.py --raw profile.raw --kallsyms K --batch LIST --out-dir DIR [--top N]
  LIST: one "<window> <cell-name> <maps-file>" per line (a relative maps
  path is taken from LIST's folder); writes DIR/<cell-name>.profile.json.

Inputs: profile.raw from tbprof.so (W/T/E lines), /proc/kallsyms of the
same boot and the maps dump of the window (both from guest-dump.sh).
A kernel address goes to its kallsyms symbol (and module); a user address
to the process whose executable mapping contains it, then through the
mapped file's program headers to an ELF address and the nearest function
symbol (.symtab, else the dynamic symbols; else only the file). The guest's
/ is the host's /, so the files are read here with nm. Addresses mapped by
processes that disagree on the file or offset are "ambiguous".
Components come from components.conf (first matching rule wins).

Caller attribution (raw format 2, tbprof.c with the guest's tbnic ranges):
the window's C lines are instructions of non-NIC code that ran because NIC
code called it (memcpy called by rxe, ...), per TB address of the
function. They are looked up like T addresses and moved from their
function's component to "nic": nic_insns = nic_own_insns (by symbol) +
nic_called_insns; "components" has them in "nic", "components_symbol_only"
is the split without them. A function is never moved by more than it
executed in the window (the rest, if any, is "called_unplaced": the plugin
credits a tail-jumped-through function's instructions to the function it
ended in). Raw files without C lines (format 1) give nic_called_insns 0.
Exit status: 0, 1 on bad input, 2 when the window is not in the raw file.
"""
import argparse
import bisect
import fnmatch
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_START = 0xffff800000000000
# A kernel address this far past its nearest symbol has no symbol.
KSYM_MAX_GAP = 1 << 20
TEXT_TYPES = set("TtWwi")


class InputError(Exception):
    pass


# ---------------------------------------------------------------- raw file
def read_windows(path):
    """Returns {n: {"total", "boot_start", "boot_stop", "tbs": {vaddr: n},
    "called": {vaddr: n}, "stats": {key: int}}} ("called", "stats": format 2)."""
    wins, cur = {}, None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            p = line.split()
            if not p or p[0].startswith("#"):
                continue
            try:
                if p[0] == "W":
                    cur = {"n": int(p[1]), "total": int(p[2]), "tbs": {},
                           "called": {}, "stats": None,
                           "boot_start": int(p[3]) if len(p) > 3 else None,
                           "boot_stop": int(p[4]) if len(p) > 4 else None}
                elif p[0] == "T" and cur is not None:
                    a = int(p[1], 16)
                    cur["tbs"][a] = cur["tbs"].get(a, 0) + int(p[2])
                elif p[0] == "C" and cur is not None:
                    a = int(p[1], 16)
                    cur["called"][a] = cur["called"].get(a, 0) + int(p[2])
                elif p[0] == "S" and cur is not None:
                    cur["stats"] = {k: int(v) for k, v in
                                    (kv.split("=", 1) for kv in p[2:])}
                elif p[0] == "E" and cur is not None:
                    wins[cur["n"]] = cur
                    cur = None
            except (IndexError, ValueError):
                raise InputError("%s:%d: bad line %r" % (path, lineno, line))
    # A window without its E line (QEMU killed mid-write) is dropped.
    return wins


# ---------------------------------------------------------------- kernel
class Kallsyms:
    def __init__(self, path):
        syms = []
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 3 or p[1] not in TEXT_TYPES:
                    continue
                a = int(p[0], 16)
                if a < KERNEL_START:
                    continue
                mod = p[3].strip("[]") if len(p) > 3 else ""
                syms.append((a, p[2], mod))
        if not syms:
            raise InputError("%s: no kernel text symbols with addresses "
                             "(dumped without root?)" % path)
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms
        self.cache = {}

    def lookup(self, addr):
        """(symbol, module) or None."""
        r = self.cache.get(addr, False)
        if r is not False:
            return r
        i = bisect.bisect_right(self.addrs, addr) - 1
        r = None
        if i >= 0 and addr - self.addrs[i] < KSYM_MAX_GAP:
            # Past the last symbol of a module the next one is far away.
            if i + 1 < len(self.addrs) or addr - self.addrs[i] < 1 << 16:
                _, name, mod = self.syms[i]
                r = (name, mod)
        self.cache[addr] = r
        return r


# ---------------------------------------------------------------- user ELF
class Elf:
    """Program headers and function symbols of one file (via nm)."""

    def __init__(self, path):
        self.path = path
        self.loads = []
        self.addrs, self.syms = [], []
        self.ok = False
        try:
            self._read_phdrs()
        except (OSError, struct.error, ValueError):
            return
        self.ok = True
        self._read_syms()

    def _read_phdrs(self):
        with open(self.path, "rb") as f:
            eh = f.read(64)
            if eh[:4] != b"\x7fELF" or eh[4] != 2 or eh[5] != 1:
                raise ValueError("not a little-endian ELF64")
            phoff, = struct.unpack_from("<Q", eh, 32)
            phentsize, phnum = struct.unpack_from("<HH", eh, 54)
            f.seek(phoff)
            ph = f.read(phentsize * phnum)
        for i in range(phnum):
            typ, _, off, vaddr, _, filesz, _, _ = struct.unpack_from(
                "<IIQQQQQQ", ph, i * phentsize)
            if typ == 1:	# PT_LOAD
                self.loads.append((off, vaddr, filesz))

    def _nm(self, dynamic):
        cmd = ["nm", "-n", "-S", "-C", "--defined-only"]
        if dynamic:
            cmd.append("-D")
        try:
            out = subprocess.run(cmd + [self.path], capture_output=True,
                                 text=True).stdout
        except OSError:
            return []
        syms = []
        for line in out.splitlines():
            p = line.split(None, 3)
            if len(p) == 4 and p[2] in TEXT_TYPES:
                syms.append((int(p[0], 16), int(p[1], 16), p[3]))
            elif len(p) == 3 and p[1] in TEXT_TYPES:
                syms.append((int(p[0], 16), 0, p[2]))
        return syms

    def _read_syms(self):
        syms = self._nm(False) or self._nm(True)
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def function(self, file_off):
        """Function name at a file offset, or None (file-level only)."""
        for off, vaddr, filesz in self.loads:
            if off <= file_off < off + filesz:
                a = file_off - off + vaddr
                break
        else:
            return None
        i = bisect.bisect_right(self.addrs, a) - 1
        if i < 0:
            return None
        start, size, name = self.syms[i]
        # Stripped files have only exported symbols: an address past the
        # symbol's size is some other (static) function.
        if size and a >= start + size:
            return None
        return name


class Elves:
    def __init__(self):
        self.files = {}

    def get(self, path):
        e = self.files.get(path)
        if e is None:
            e = self.files[path] = Elf(path)
        return e


# ---------------------------------------------------------------- maps
def read_maps(path):
    """Executable mappings: sorted list of (start, end, offset, file, pid, comm)."""
    maps, pid, comm = [], None, ""
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("P "):
                p = line.split(" ", 2)
                pid, comm = int(p[1]), p[2] if len(p) > 2 else ""
                continue
            p = line.split(None, 5)
            if len(p) < 5 or "x" not in p[1] or pid is None:
                continue
            s, e = p[0].split("-")
            name = p[5].strip() if len(p) > 5 else "[anon]"
            if name.endswith(" (deleted)"):
                name = name[:-len(" (deleted)")]
            maps.append((int(s, 16), int(e, 16), int(p[2], 16), name, pid, comm))
    maps.sort()
    return maps


class Mappings:
    def __init__(self, maps):
        self.maps = maps
        self.starts = [m[0] for m in maps]
        self.maxlen = max((m[1] - m[0] for m in maps), default=0)

    def find(self, addr):
        """Every mapping containing addr."""
        i = bisect.bisect_right(self.starts, addr) - 1
        hits = []
        while i >= 0 and self.maps[i][0] + self.maxlen > addr:
            if self.maps[i][1] > addr:
                hits.append(self.maps[i])
            i -= 1
        return hits


# ---------------------------------------------------------------- rules
def read_rules(path):
    rules = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            p = line.split()
            if len(p) == 2 and p[0] == "shared":
                continue	# a shared-helper component (tbnic; caller attribution)
            if len(p) != 3 or p[0] not in ("module", "ksym", "user"):
                raise InputError("%s:%d: want '<module|ksym|user> GLOB COMPONENT'"
                                 % (path, lineno))
            rules.append(tuple(p))
    return rules


def match(name, pat):
    # Exact first: "[vdso]" is a name, not a character class.
    return name == pat or fnmatch.fnmatchcase(name, pat)


class Classifier:
    def __init__(self, rules):
        self.rules = rules
        self.cache = {}

    def kernel(self, sym, mod):
        key = ("k", sym, mod)
        c = self.cache.get(key)
        if c is None:
            c = "other"
            for kind, pat, comp in self.rules:
                if (kind == "module" and mod and match(mod, pat)) or \
                   (kind == "ksym" and match(sym, pat)):
                    c = comp
                    break
            self.cache[key] = c
        return c

    def user(self, path):
        key = ("u", path)
        c = self.cache.get(key)
        if c is None:
            base = os.path.basename(path) or path
            c = "other"
            for kind, pat, comp in self.rules:
                if kind == "user" and match(base, pat):
                    c = comp
                    break
            self.cache[key] = c
        return c


# ---------------------------------------------------------------- attribution
class Attributor:
    def __init__(self, kallsyms, rules_path, top=40):
        self.top = top
        self.ksyms = Kallsyms(kallsyms)
        self.cls = Classifier(read_rules(rules_path))
        self.elves = Elves()

    def _user(self, addr, mappings):
        """(component, function key, unattributed reason or None, comm)."""
        hits = mappings.find(addr)
        if not hits:
            return "unattributed", "[user: no mapping]", "user_no_mapping", None
        where = {(h[3], addr - h[0] + h[2]) for h in hits}
        if len(where) > 1:
            comps = {self.cls.user(f) for f, _ in where}
            comp = comps.pop() if len(comps) == 1 else "unattributed"
            return comp, "[user: ambiguous]", "user_ambiguous", None
        path, off = where.pop()
        # Identical mappings in several processes (forked children): the
        # code is attributed to all of their names.
        comm = "|".join(sorted({h[5] for h in hits}))
        comp = self.cls.user(path)
        base = os.path.basename(path) or path
        fn = None
        if path.startswith("/"):
            elf = self.elves.get(path)
            fn = elf.function(off) if elf.ok else None
        if fn is None:
            return comp, "%s:[0x%x]" % (base, off & ~0xfff), "user_no_symbol", comm
        return comp, "%s:%s" % (base, fn), None, comm

    def _where(self, addr, mappings):
        """(space, component, function key, unattributed reason, comm)."""
        if addr >= KERNEL_START:
            r = self.ksyms.lookup(addr)
            if r is None:
                return "kernel", "unattributed", "[kernel: no symbol]", "kernel_no_symbol", None
            sym, mod = r
            return ("kernel", self.cls.kernel(sym, mod),
                    "%s [%s]" % (sym, mod) if mod else sym, None, None)
        comp, fn, why, comm = self._user(addr, mappings)
        return "user", comp, fn, why, comm

    def window(self, win, mappings):
        comps, funcs, unattr, procs = {}, {}, {}, {}
        kern = user = 0
        for addr, n in win["tbs"].items():
            space, comp, fn, why, comm = self._where(addr, mappings)
            if space == "kernel":
                kern += n
            else:
                user += n
                if comm is not None:
                    procs[comm] = procs.get(comm, 0) + n
            comps[comp] = comps.get(comp, 0) + n
            if why:
                unattr[why] = unattr.get(why, 0) + n
            k = (space, fn)
            if k in funcs:
                funcs[k][0] += n
            else:
                funcs[k] = [n, comp]
        total = kern + user
        top = sorted(funcs.items(), key=lambda kv: -kv[1][0])[:self.top]
        own = dict(comps)
        nic_own = comps.get("nic", 0)
        # Caller attribution: NIC-called instructions per function.
        called = {}
        for addr, n in win.get("called", {}).items():
            space, comp, fn, _, _ = self._where(addr, mappings)
            k = (space, fn)
            called[k] = called.get(k, 0) + n
        moved, moved_from, unplaced, already = {}, {}, 0, 0
        for k, c in called.items():
            if k not in funcs:
                unplaced += c
                continue
            n, comp = funcs[k]
            if comp == "nic":
                already += c	# NIC by symbol now (rules changed since the run)
                continue
            m = min(c, n)
            unplaced += c - m
            if m:
                moved[k] = m
                moved_from[comp] = moved_from.get(comp, 0) + m
                comps[comp] -= m
                comps["nic"] = comps.get("nic", 0) + m
        nic_called = sum(moved.values())
        nic = nic_own + nic_called
        called_top = sorted(moved.items(), key=lambda kv: -kv[1])[:30]
        return {
            "window": win["n"],
            "total_insns": total,
            "plugin_total_insns": win["total"],
            "boot_insns_at_start": win["boot_start"],
            "boot_insns_at_stop": win["boot_stop"],
            "kernel_insns": kern,
            "user_insns": user,
            "nic_insns": nic,
            # What the host CPU would run with a hardware RDMA NIC.
            "software_insns": total - nic,
            # nic (own): NIC code by symbol; nic (called helpers): shared
            # code NIC code called (raw format 2 only, else 0).
            "nic_own_insns": nic_own,
            "nic_called_insns": nic_called,
            "software_insns_symbol_only": total - nic_own,
            "caller_attribution": {
                "format": 2 if win.get("stats") is not None else 1,
                "plugin_stats": win.get("stats"),
                "called_raw_insns": sum(called.values()),
                "called_unplaced_insns": unplaced,
                "called_nic_by_symbol_insns": already,
                "moved_from": dict(sorted(moved_from.items(), key=lambda kv: -kv[1])),
                "top_helpers": [
                    {"function": fn, "space": space, "component": funcs[(space, fn)][1],
                     "insns": m, "of_function": funcs[(space, fn)][0]}
                    for (space, fn), m in called_top],
            },
            "components": dict(sorted(((c, n) for c, n in comps.items() if n),
                                      key=lambda kv: -kv[1])),
            "components_symbol_only": dict(sorted(own.items(), key=lambda kv: -kv[1])),
            "unattributed": dict(sorted(unattr.items())),
            "unattributed_insns": comps.get("unattributed", 0),
            "user_by_process": dict(sorted(procs.items(), key=lambda kv: -kv[1])),
            "top_functions": [
                {"function": fn, "space": space, "component": comp, "insns": n,
                 "share": round(n / total, 6) if total else 0.0}
                for (space, fn), (n, comp) in top],
            # work of no IO inside the window (UNCLEAN_FUNCTIONS)
            "unclean": {fn: n for (space, fn), (n, _) in sorted(funcs.items())
                        if space == "kernel" and fn.split(" ")[0] in UNCLEAN_FUNCTIONS},
        }


# Kernel functions that run in a measurement window only when something
# other than the measured IO happens in it: a process forks or execs
# (copy_page_range, dup_mmap, do_execveat_common), a path is looked up
# (link_path_walk: a file opened), userspace memory is registered for RDMA
# (rxe_mr_init_user, ib_umem_get). summarize.py takes a window with any of
# them as not clean.
UNCLEAN_FUNCTIONS = frozenset((
    "copy_page_range", "dup_mmap", "do_execveat_common", "link_path_walk",
    "rxe_mr_init_user", "ib_umem_get"))


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def summary(res):
    t = res["total_insns"] or 1
    comps = " ".join("%s=%.1f%%" % (c, 100.0 * n / t)
                     for c, n in list(res["components"].items())[:6])
    return "window %d (%s): %d insns, software %d (nic own %d, called %d), %s" % (
        res["window"], res.get("cell", "-"), res["total_insns"],
        res["software_insns"], res["nic_own_insns"], res["nic_called_insns"], comps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", required=True)
    ap.add_argument("--kallsyms", required=True)
    ap.add_argument("--rules", default=os.path.join(HERE, "components.conf"))
    ap.add_argument("--window", type=int)
    ap.add_argument("--maps")
    ap.add_argument("--maps-dir")
    ap.add_argument("--cell")
    ap.add_argument("--out")
    ap.add_argument("--batch")
    ap.add_argument("--out-dir")
    ap.add_argument("--top", type=int, default=40,
                    help="functions kept in top_functions (40)")
    a = ap.parse_args()

    jobs = []
    if a.batch:
        if not a.out_dir:
            ap.error("--batch needs --out-dir")
        base = os.path.dirname(os.path.abspath(a.batch))
        with open(a.batch) as f:
            for line in f:
                p = line.split()
                if not p or p[0].startswith("#"):
                    continue
                if len(p) != 3:
                    ap.error("%s: want '<window> <cell> <maps-file>': %r" % (a.batch, line))
                jobs.append((int(p[0]), p[1], os.path.join(base, p[2]),
                             os.path.join(a.out_dir, p[1] + ".profile.json")))
        os.makedirs(a.out_dir, exist_ok=True)
    else:
        if a.window is None or not a.out or not (a.maps or a.maps_dir):
            ap.error("need --window, --out and --maps or --maps-dir (or --batch)")
        maps = a.maps or os.path.join(a.maps_dir, "maps.%d" % a.window)
        jobs.append((a.window, a.cell or "window%d" % a.window, maps, a.out))

    try:
        wins = read_windows(a.raw)
        att = Attributor(a.kallsyms, a.rules, a.top)
        missing = 0
        for n, cell, maps, out in jobs:
            if n not in wins:
                print("attribute: no profile: window %d not in %s" % (n, a.raw),
                      file=sys.stderr)
                missing += 1
                continue
            res = att.window(wins[n], Mappings(read_maps(maps)))
            res["cell"] = cell
            res["maps"] = maps
            write_json(out, res)
            print(summary(res))
    except (OSError, InputError) as e:
        print("attribute: %s" % e, file=sys.stderr)
        return 1
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
