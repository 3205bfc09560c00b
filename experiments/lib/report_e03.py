#!/usr/bin/python3
"""report_e03.py - one run of E03-paths (part 1: what an extra path costs per
IO) in tables (markdown): per system and policy, software and total
instructions per IO over 1, 2 and 4 paths, and 2 and 4 paths over 1 with
their range from the runs' extremes.

Usage: report_e03.py [RESULTS_DIR | RUN_DIR]   (default: results/, newest run)
Writes RUN_DIR/report.md and prints it. Every number is read from the run's
icount aggregate.csv (medians, min and max over its runs); systems.txt
gives each system's implementation, path count and policy.
"""
import csv, glob, os, sys

from report_e02 import f, ratio  # noqa: E402 (same folder)

IMPL_ORDER = ["ibnbd", "ibtrs-fio", "nvme-rdma", "rnbd"]


def load(run):
    desc = {}
    for line in open(os.path.join(run, "icount", "raw", "systems.txt")):
        w = line.split()
        if len(w) == 6 and w[2].isdigit():
            desc[w[0]] = (w[1], int(w[2]), w[3])
    rows = []
    with open(os.path.join(run, "icount", "aggregate.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            if r["system"] in desc:
                r["impl"], r["npaths"], r["policy"] = desc[r["system"]]
                rows.append(r)
    return rows


def table(rows, metric, title):
    out = ["## %s" % title, "",
           "| workload | system | policy | 1 path | 2 paths | 4 paths | 2 / 1 | 4 / 1 |",
           "|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["workload"], r["bs"], r["iodepth"], r["impl"], r["policy"]) for r in rows},
                  key=lambda k: (k[0], k[1], int(k[2]),
                                 IMPL_ORDER.index(k[3]) if k[3] in IMPL_ORDER else 9, k[4]))
    for wl, bs, qd, impl, pol in keys:
        by = {r["npaths"]: r for r in rows if (r["workload"], r["bs"], r["iodepth"],
                                              r["impl"], r["policy"]) == (wl, bs, qd, impl, pol)}
        cells = []
        for n in (1, 2, 4):
            r = by.get(n)
            m = f(r[metric + "_median"]) if r else None
            cells.append("%.0f (%.0f..%.0f)" % (m, f(r[metric + "_min"]), f(r[metric + "_max"]))
                         if m else "")
        for n in (2, 4):
            q = ratio(by[n], by[1], metric) if n in by and 1 in by else None
            cells.append("%.3f (%.3f..%.3f)" % q if q else "")
        out.append("| %s %s QD%s | %s | %s | %s |" % (wl, bs, qd, impl, pol, " | ".join(cells)))
    return out + [""]


def main():
    res = sys.argv[1] if len(sys.argv) > 1 else "results"
    if os.path.exists(os.path.join(res, "meta.json")):
        run = res
    else:
        runs = sorted(glob.glob(os.path.join(res, "E03-paths", "*", "icount", "aggregate.csv")))
        if not runs:
            sys.exit("report_e03: no E03-paths run under %s" % res)
        run = os.path.dirname(os.path.dirname(runs[-1]))
    rows = load(run)
    if not rows:
        sys.exit("report_e03: no E03 system rows in %s" % run)
    nruns = max(int(r["runs"]) for r in rows)
    out = ["# E03-paths (part 1): %s" % os.path.basename(os.path.normpath(run)), "",
           "One icount boot with 4 Soft-RoCE paths, %d runs per cell, cells by system "
           "(a system connects before its cells; only it is connected). Medians with the "
           "runs' min..max; a ratio's range is from the extremes of the two cells. "
           "Software instructions per IO = all guest instructions but the NIC set "
           "(`experiments/profiler/components.conf`)." % nruns, ""]
    out += table(rows, "sw_instr_per_io", "Software instructions per IO")
    out += table(rows, "instr_per_io", "Total instructions per IO (NIC included)")
    text = "\n".join(out)
    with open(os.path.join(run, "report.md"), "w") as fh:
        fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
