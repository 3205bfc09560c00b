#!/usr/bin/python3
"""report_e02.py - one run of E02-mr-inval in words and tables (markdown):
what each system's secure mode costs against its own unsafe modes, in
software and total instructions per IO, with the run-to-run spread, and the
work requests and module counters per IO that explain it.

Usage: report_e02.py [RESULTS_DIR | RUN_DIR]   (default: results/, newest run)
Writes RUN_DIR/report.md and prints it. Every number is read from the run's
icount aggregate.csv (medians, min and max over its runs).
"""
import csv, glob, os, sys

# Per implementation (systems.txt's result name): its secure default (what a
# user gets without asking), its fully secure mode (every key, the client's
# and the server's, ends with its IO: chunk_mode rekey for ours) and its
# unsafe mode (no key ever ends).
DEFAULT = {"nvme-rdma": ("frwr", "remote"), "rnbd": ("frwr", "remote+rekey"),
           "ibnbd": ("frwr", "remote"), "ibtrs-fio": ("mw", "remote"),
           "ibtrs-fio/kernel-srv": ("mw", "remote")}
FULLY = {"nvme-rdma": ("frwr", "remote"), "rnbd": ("frwr", "remote+rekey"),
         "ibnbd": ("frwr", "remote+rekey"), "ibtrs-fio": ("mw", "remote+rekey"),
         "ibtrs-fio/kernel-srv": ("mw", "remote+rekey")}
UNSAFE = {"nvme-rdma": ("global", "none"), "rnbd": ("frwr", "remote"),
          "ibnbd": ("global", "none"), "ibtrs-fio": ("global", "none"),
          "ibtrs-fio/kernel-srv": ("global", "none")}
IMPL_ORDER = ["nvme-rdma", "rnbd", "ibnbd", "ibtrs-fio", "ibtrs-fio/kernel-srv"]
WL_ORDER = ["randread", "randwrite", "seqread", "seqwrite"]


def f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def load(run):
    p = os.path.join(run, "icount", "aggregate.csv")
    modes = {}
    for line in open(os.path.join(run, "icount", "raw", "systems.txt")):
        w = line.split()
        if len(w) == 6:
            modes[w[0]] = (w[1], w[4], w[5])
    rows = []
    with open(p, newline="") as fh:
        for r in csv.DictReader(fh):
            if r["system"] in modes:
                r["impl"], r["mr"], r["inval"] = modes[r["system"]]
                rows.append(r)
    return rows


def wl(r):
    return "%s %s QD%s" % (r["workload"], r["bs"], r["iodepth"])


def wl_key(r):
    w = r["workload"]
    return (WL_ORDER.index(w) if w in WL_ORDER else 9, r["bs"] != "4k", int(r["iodepth"]))


def reference(rows, impl):
    """The mode every other mode of @impl is compared with: its fully
    secure one when the run has it, else its secure default."""
    have = {(r["mr"], r["inval"]) for r in rows if r["impl"] == impl}
    return FULLY[impl] if FULLY[impl] in have else DEFAULT[impl]


def ratio(a, b, metric):
    """a over b (medians) and its range from the extremes of the two."""
    am, al, ah = (f(a[metric + "_" + k]) for k in ("median", "min", "max"))
    bm, bl, bh = (f(b[metric + "_" + k]) for k in ("median", "min", "max"))
    if None in (am, al, ah, bm, bl, bh) or 0 in (bm, bl, bh):
        return None
    return am / bm, al / bh, ah / bl


def fmt_ratio(t):
    return "%.3f (%.3f..%.3f)" % t if t else ""


def side_by_side(rows, metric):
    """Per workload and implementation: the secure default and the fully
    secure mode over the unsafe one."""
    out = ["## The cost of security, side by side", "",
           "Software instructions per IO of each system's secure default and of its fully "
           "secure mode (every key ends with its IO, the server's too: rnbd's "
           "always_invalidate=Y, our chunk_mode rekey; nvme-rdma's target exposes no "
           "memory) over its own unsafe mode (no key ever ends). Medians; the range pairs "
           "the extremes of the runs.", "",
           "| workload | system | default | fully secure | unsafe | default / unsafe "
           "| fully secure / unsafe |", "|---|---|---|---|---|---|---|"]
    for w in sorted({wl(r): r for r in rows}.values(), key=wl_key):
        for impl in [i for i in IMPL_ORDER if any(r["impl"] == i for r in rows)]:
            get = {(r["mr"], r["inval"]): r for r in rows
                   if r["impl"] == impl and wl(r) == wl(w)}
            d, fu, u = (get.get(m[impl]) for m in (DEFAULT, FULLY, UNSAFE))
            if not u or not (d or fu):
                continue
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                wl(w), impl, "/".join(DEFAULT[impl]) if d else "",
                "/".join(FULLY[impl]) if fu else "", "/".join(UNSAFE[impl]),
                fmt_ratio(ratio(d, u, metric)) if d else "",
                fmt_ratio(ratio(fu, u, metric)) if fu else ""))
    out.append("")
    return out


def cost_table(rows, metric, title):
    out = ["## %s" % title, "",
           "Each system's modes against its most secure mode in the run (first line of each "
           "group): medians, `min..max` over the runs; the ratio is that mode over the row's "
           "and its range pairs the extremes of the two (a ratio whose range crosses 1.000 "
           "is not separated).", ""]
    for impl in [i for i in IMPL_ORDER if any(r["impl"] == i for r in rows)]:
        sec = reference(rows, impl)
        rs = [r for r in rows if r["impl"] == impl]
        out += ["### %s (reference: %s/%s; secure default %s/%s)"
                % (impl, sec[0], sec[1], DEFAULT[impl][0], DEFAULT[impl][1]), "",
                "| workload | mode | %s per IO | secure / mode |" % metric, "|---|---|---|---|"]
        for w in sorted({wl(r): r for r in rs}.values(), key=wl_key):
            group = [r for r in rs if wl(r) == wl(w)]
            base = [r for r in group if (r["mr"], r["inval"]) == sec]
            for r in sorted(group, key=lambda r: ((r["mr"], r["inval"]) != sec,
                                                  r["mr"], r["inval"])):
                med, lo, hi = (f(r[metric + "_" + k]) for k in ("median", "min", "max"))
                if med is None:
                    continue
                rt = ""
                if base and (r["mr"], r["inval"]) != sec:
                    rt = fmt_ratio(ratio(base[0], r, metric))
                out.append("| %s | %s/%s | %.0f (%.0f..%.0f) | %s |"
                           % (wl(r), r["mr"], r["inval"], med, lo, hi, rt))
        out.append("")
    return out


def counters_table(rows):
    cols = [("wr_per_io", "WRs (kprobe pass)"), ("pkts_per_io_median", "packets"),
            ("mod_reg_mrs_per_io_median", "REG_MR"),
            ("mod_local_invs_per_io_median", "LOCAL_INV"),
            ("mod_inv_rsps_per_io_median", "answers with inval")]
    out = ["## Work requests, packets and the kernel client's counters per IO", "",
           "WRs from the kprobe pass (rxe's completions of send and receive WRs, kernel "
           "QPs only: empty for the fio engine); REG_MR, LOCAL_INV and invalidating answers "
           "from the kernel client's per-path counters sampled with the IOs.", "",
           "| system | mode | workload | " + " | ".join(c[1] for c in cols) + " |",
           "|---|---|---|" + "---|" * len(cols)]
    for r in sorted(rows, key=lambda r: (IMPL_ORDER.index(r["impl"]) if r["impl"] in IMPL_ORDER
                                         else 9, r["mr"], r["inval"], wl_key(r))):
        vals = []
        for c, _ in cols:
            v = f(r.get(c))
            vals.append("%.2f" % v if v is not None else "")
        out.append("| %s | %s/%s | %s | %s |" % (r["impl"], r["mr"], r["inval"], wl(r),
                                                 " | ".join(vals)))
    out.append("")
    return out


def main():
    res = sys.argv[1] if len(sys.argv) > 1 else "results"
    if os.path.exists(os.path.join(res, "meta.json")):
        run = res
    else:
        runs = sorted(glob.glob(os.path.join(res, "E02-mr-inval", "*", "icount", "aggregate.csv")))
        if not runs:
            sys.exit("report_e02: no E02-mr-inval run under %s" % res)
        run = os.path.dirname(os.path.dirname(runs[-1]))
    rows = load(run)
    nruns = max(int(r["runs"]) for r in rows)
    out = ["# E02-mr-inval: %s" % os.path.basename(os.path.normpath(run)), "",
           "One icount boot, %d runs per cell, cells by system (a mode that is a module "
           "parameter reloads once per system and run). Software instructions per IO = all "
           "guest instructions but the NIC set (`experiments/profiler/components.conf`)."
           % nruns, ""]
    out += side_by_side(rows, "sw_instr_per_io")
    out += cost_table(rows, "sw_instr_per_io", "Software instructions per IO")
    out += cost_table(rows, "instr_per_io", "Total instructions per IO (NIC included)")
    out += counters_table(rows)
    text = "\n".join(out)
    with open(os.path.join(run, "report.md"), "w") as fh:
        fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
