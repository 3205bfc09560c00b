#!/usr/bin/python3
"""two-hosts-cost.py OUT - the per-side cost table of a two-hosts-cost run.

OUT/clt and OUT/srv are the two guests' output folders of
`run --two-hosts --mode icount --profile` (each: profile.raw, raw/kallsyms.txt,
raw/<cell>.snap and raw/<cell>.maps; raw/cells.txt in clt lists the cells).
Each window is attributed (experiments/profiler/attribute.py, through
experiments/lib/profiles.py) and every figure is that guest's window's
Δcounter / ΔIOs, its IOs counted by its own IO source (client: the device
fio drives; server: null_blk). Prints a Markdown report (medians of the runs,
min-max in brackets) and writes OUT/cost.csv (one row per cell, side, run)."""
import csv, os, statistics, sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(TOP, "experiments", "lib"))
import profiles  # noqa: E402

SIDES = ("clt", "srv")
FIELDS = ["system", "cell", "run", "side", "ios", "instr_per_io", "sw_instr_per_io",
          "nic_instr_per_io", "ctxt_per_io", "intr_per_io", "pkts_per_io", "blk_reqs_per_io",
          "mod_msgs_per_io", "mod_reg_wrs_per_io", "mod_local_invs_per_io"]


def read_snap(path):
    with open(path) as f:
        return {k: float(v) for k, v in (line.split() for line in f)}


def side_row(raw, cell):
    s = read_snap(os.path.join(raw, cell + ".snap"))
    ios = s["b_ios"] - s["a_ios"]
    if ios < s.get("target_ios", 1) or ios <= 0:
        raise ValueError("%s/%s: window has %d of its %d IOs" % (raw, cell, ios, s.get("target_ios", 0)))
    p = profiles.load(os.path.join(raw, cell + ".profile.json"))
    if not p["total"]:
        raise ValueError("%s/%s: the profile's window holds no instruction" % (raw, cell))
    r = {"ios": int(ios), "instr_per_io": p["total"] / ios, "sw_instr_per_io": p["software"] / ios,
         "nic_instr_per_io": p["nic"] / ios}
    for k in ("ctxt", "intr", "pkts", "blk"):
        if "b_" + k in s:
            r[k + ("_reqs" if k == "blk" else "") + "_per_io"] = (s["b_" + k] - s["a_" + k]) / ios
    for k in ("msgs", "reg_wrs", "local_invs"):
        if "b_kv_" + k in s:
            r["mod_%s_per_io" % k] = (s["b_kv_" + k] - s["a_kv_" + k]) / ios
    r["components"] = {c: n / ios for c, n in p["components"].items()}
    return r


def main():
    out = sys.argv[1]
    for side in SIDES:
        profiles.attribute_run(os.path.join(out, side, "raw"))
    cells = []
    with open(os.path.join(out, "clt", "raw", "cells.txt")) as f:
        for line in f:
            cell, system, cname, run = line.split()[:4]
            cells.append((cell, system, cname, int(run)))
    rows, table = [], {}
    for cell, system, cname, run in cells:
        for side in SIDES:
            r = side_row(os.path.join(out, side, "raw"), cell)
            rows.append(dict(system=system, cell=cname, run=run, side=side,
                             **{k: v for k, v in r.items() if k != "components"}))
            table.setdefault((system, cname, side), []).append(r)
    with open(os.path.join(out, "cost.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("%.2f" % v if isinstance(v, float) else v) for k, v in r.items()})

    def cellfmt(vals, scale=1e3, unit="k", nd=1):
        m = statistics.median(vals)
        return "%.*f%s [%.*f-%.*f]" % (nd, m / scale, unit, nd, min(vals) / scale, nd, max(vals) / scale)

    systems = sorted({c[1] for c in cells}, key=lambda s: (s != "ibnbd", s))
    cnames = list(dict.fromkeys(c[2] for c in cells))
    nruns = max(c[3] for c in cells)
    print("## Instructions per IO, client guest vs server guest\n")
    print("Medians of %d runs, [min-max]. Software = total minus the NIC set "
          "(rxe, CRC, UDP/IP/netdev; experiments/profiler/components.conf). "
          "Each side's IOs are counted by its own IO source in its own window.\n" % nruns)
    print("| system | cell | client software | server software | client total | server total "
          "| server share of software |")
    print("|---|---|---|---|---|---|---|")
    for s in systems:
        for c in cnames:
            cl, sv = table.get((s, c, "clt")), table.get((s, c, "srv"))
            if not cl or not sv:
                continue
            csw = [r["sw_instr_per_io"] for r in cl]
            ssw = [r["sw_instr_per_io"] for r in sv]
            share = 100 * statistics.median(ssw) / (statistics.median(ssw) + statistics.median(csw))
            print("| %s | %s | %s | %s | %s | %s | %.0f %% |" % (
                s, c, cellfmt(csw), cellfmt(ssw), cellfmt([r["instr_per_io"] for r in cl]),
                cellfmt([r["instr_per_io"] for r in sv]), share))
    print("\n## Events per IO (medians)\n")
    print("Messages and registration WRs: our kernel client's own counters "
          "(ibnbd client side only).\n")
    print("| system | cell | side | context switches | interrupts | packets | null_blk requests "
          "| messages | registration WRs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in systems:
        for c in cnames:
            for side in SIDES:
                rs = table.get((s, c, side))
                if not rs:
                    continue
                med = lambda k: ("%.2f" % statistics.median([r[k] for r in rs])) if k in rs[0] else "-"
                print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    s, c, side, med("ctxt_per_io"), med("intr_per_io"), med("pkts_per_io"),
                    med("blk_reqs_per_io") if side == "srv" else "-",
                    med("mod_msgs_per_io"), med("mod_reg_wrs_per_io")))
    print("\n## Largest components per IO (medians, software and NIC)\n")
    for s in systems:
        for c in cnames[:1]:
            for side in SIDES:
                rs = table.get((s, c, side))
                if not rs:
                    continue
                comps = {}
                for r in rs:
                    for k, v in r["components"].items():
                        comps.setdefault(k, []).append(v)
                top = sorted(((statistics.median(v), k) for k, v in comps.items()), reverse=True)[:6]
                print("- %s %s %s: %s" % (s, c, side, ", ".join("%s %.1fk" % (k, v / 1e3) for v, k in top)))


if __name__ == "__main__":
    main()
