#!/usr/bin/python3
"""report.py - one run of E01 in words and tables (markdown), for closing
notes and the paper: generated from the run's aggregate.csv, never typed.

Usage: report.py [RESULTS_DIR | RUN_DIR]   (default results/: its newest run)
Writes <run>/report.md and prints it.

Per boot: the primary figure, software instructions per IO (all guest
instructions minus the NIC set of experiments/profiler/components.conf:
what a real RDMA NIC does in hardware), beside total instructions, guest
time, busy fraction, IOPS and the exact per-IO counters; the components of
each cell; the precision of the run (window quantization, the in-flight
bound at the window's edges, the run-to-run spread); and pairwise verdicts
between systems, "separated" only when the ranges over the runs do not
overlap AND the difference exceeds the larger run-to-run spread; in a
wall-clock boot also per-run ratios of systems that ran back to back
(paired), separated only when all of them lie on one side of 1.
"""
import csv, glob, os, sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
COMPONENTS_CONF = os.path.join(TOP, "experiments", "profiler", "components.conf")
PAIRS = (("nvme_rdma", "rnbd1"), ("nvme_rdma", "ibnbd1"), ("rnbd1", "ibnbd1"),
         ("nvme_rdma", "ibtrs1"), ("rnbd1", "ibtrs1"), ("ibtrs1", "ibtrsk1"),
         ("rnbd2", "ibtrs2"))


def load(path):
    with open(path, newline="") as f:
        return {(r["system"], r["workload"], r["bs"], r["iodepth"]): r for r in csv.DictReader(f)}


def f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def spread(r, m):
    """Run-to-run spread (max - min) / median, %."""
    med, lo, hi = f(r.get(m + "_median")), f(r.get(m + "_min")), f(r.get(m + "_max"))
    if not med or lo is None or hi is None:
        return None
    return 100.0 * (hi - lo) / med


def k_(v, nd=1):
    """Instructions as thousands."""
    return "" if v is None else "%.*fk" % (nd, v / 1e3)


def n_(v, nd=2):
    return "" if v is None else "%.*f" % (nd, v)


def verdict(a, b, m):
    """a, b: aggregate rows; m: measure. Separated iff the [min, max] ranges
    over the runs do not overlap and |difference of medians| exceeds the
    larger of the two run-to-run spreads."""
    am, bm = f(a.get(m + "_median")), f(b.get(m + "_median"))
    if not am or not bm:
        return None
    diff = 100.0 * (bm - am) / am
    sa, sb = spread(a, m) or 0.0, spread(b, m) or 0.0
    runs = min(int(a["runs"]), int(b["runs"]))
    apart = f(a[m + "_max"]) < f(b[m + "_min"]) or f(b[m + "_max"]) < f(a[m + "_min"])
    sep = runs > 1 and apart and abs(diff) > max(sa, sb)
    return diff, sa, sb, sep, runs


def nic_set():
    """The NIC rules, shown in the report (defined once, in components.conf)."""
    rules = []
    if os.path.exists(COMPONENTS_CONF):
        for line in open(COMPONENTS_CONF):
            w = line.split("#", 1)[0].split()
            if len(w) >= 3 and w[-1] == "nic":
                rules.append("%s %s" % (w[0], w[1]))
    return rules


def names(run, boot):
    p = os.path.join(run, boot, "raw", "systems.txt")
    out = {}
    if os.path.exists(p):
        for line in open(p):
            w = line.split()
            if len(w) >= 3:
                out[w[0]] = w[1] + ("" if w[2] in ("-", "1") else " %sp" % w[2])
    return out


def boot_section(run, boot):
    agg = load(os.path.join(run, boot, "aggregate.csv"))
    nm = names(run, boot)
    keys = sorted(agg, key=lambda k: (k[2] != "4k", k[1], int(k[3]), k[0]))
    profiled = any(f(agg[k].get("sw_instr_per_io_median")) for k in keys)
    out = ["## %s boot" % boot, ""]
    if boot == "icount" and not profiled:
        out += ["No instruction profile in this boot (plugin not built or E01_PROFILE=0): "
                "guest time per IO is the only per-IO cost figure.", ""]
    out += ["| system | workload | bs | QD | runs | IOs/window | software instr/IO [min-max] | "
            "spread % | total instr/IO | NIC instr/IO | busy % | guest ns/IO | IOPS | "
            "p50 us | WR/IO | pkts/IO | ctxt/IO | intr/IO | blk req/IO | dev req/IO |",
            "|" + "---|" * 20]
    worst = {"spread": 0.0, "edge": 0.0, "quant": 0.0}
    for k in keys:
        r = agg[k]
        sw = f(r.get("sw_instr_per_io_median"))
        s_sw = spread(r, "sw_instr_per_io") if sw else spread(r, "guest_ns_per_io")
        ios = f(r.get("ios_min"))
        exact = f(r.get("ios_exact_min")) == 1
        if ios and exact:
            worst["quant"] = max(worst["quant"], 100.0 / ios)
            worst["edge"] = max(worst["edge"], 100.0 * int(k[3]) / ios)
        if s_sw is not None:
            worst["spread"] = max(worst["spread"], s_sw)
        out.append("| %s | %s | %s | %s | %s | %s%s | %s [%s-%s] | %s | %s | %s | %s | %s | "
                   "%s | %s | %s | %s | %s | %s | %s | %s |" % (
                       nm.get(k[0], k[0]), k[1], k[2], k[3], r["runs"],
                       n_(ios, 0), "" if exact else " (fio rate)",
                       k_(sw), k_(f(r.get("sw_instr_per_io_min"))),
                       k_(f(r.get("sw_instr_per_io_max"))), n_(s_sw),
                       k_(f(r.get("instr_per_io_median"))),
                       k_(f(r.get("nic_instr_per_io_median"))),
                       n_(f(r.get("busy_pct_median")), 1),
                       n_(f(r.get("guest_ns_per_io_median")), 0),
                       n_(f(r.get("iops_median")), 0), n_(f(r.get("lat_p50_us_median")), 1),
                       n_(f(r.get("wr_per_io"))), n_(f(r.get("pkts_per_io_median"))),
                       n_(f(r.get("ctxt_per_io_median"))), n_(f(r.get("intr_per_io_median"))),
                       n_(f(r.get("blk_reqs_per_io_median"))),
                       n_(f(r.get("reqs_per_io_median")))))
    units = {agg[k].get("io_unit") or "request" for k in keys}
    lats = {agg[k].get("lat_kind") or "clat" for k in keys}
    out += ["", "IOs are %s; latency percentiles (p50) are %s." % (
        "the user's (fio's) IOs; `dev req/IO` is the device's requests per IO" if units == {"user"}
        else "device requests where `io_unit` is `request` (a run from before the user-IO "
        "count: a device that splits an IO counts each part)",
        "total latency (submission + completion)" if lats == {"total"}
        else "fio's completion latency (clat) where `lat_kind` is `clat`")]
    out += ["", "Precision of this boot: one IO of quantization is at most %.3f %% of a "
            "window; the IOs in flight at a window's two edges can move at most %.2f %% of "
            "its work (QD / IOs; the expected shift is zero in steady state); the largest "
            "run-to-run spread of the %s is %.2f %%. Differences below the spread are "
            "not claimed." % (worst["quant"], worst["edge"],
                              "software instructions per IO" if profiled else "guest time per IO",
                              worst["spread"]), ""]
    if profiled and boot == "icount":
        # Busy fraction: profiled instructions / guest ns (1 per ns while
        # executing) beside /proc/stat's (10 ms ticks).
        chk = [(f(agg[k].get("busy_pct_median")), f(agg[k].get("procstat_busy_pct_median")))
               for k in keys if f(agg[k].get("busy_pct_median")) is not None and
               f(agg[k].get("procstat_busy_pct_median")) is not None]
        if chk:
            out += ["Busy fraction (profiled instructions / guest ns, one instruction per ns "
                    "while executing): %.1f..%.1f %% over the cells; /proc/stat's busy "
                    "fraction of the same windows: %.1f..%.1f %%. (The profiler matches the "
                    "icount clock to 1 %% in fully busy windows: `tests/host/profiler-vm.sh`.)" % (
                        min(c[0] for c in chk), max(c[0] for c in chk),
                        min(c[1] for c in chk), max(c[1] for c in chk)), ""]
    if profiled:
        comps = sorted({c[5:-len("_per_io_median")] for r in agg.values() for c in r
                        if c.startswith("comp_") and c.endswith("_per_io_median")})
        out += ["Instructions per IO by component (medians; `nic` is excluded from the "
                "software figure):", "",
                "| system | workload | bs | QD | " + " | ".join(comps) + " |",
                "|" + "---|" * (4 + len(comps))]
        for k in keys:
            r = agg[k]
            if not f(r.get("instr_per_io_median")):
                continue
            out.append("| %s | %s | %s | %s | %s |" % (
                nm.get(k[0], k[0]), k[1], k[2], k[3],
                " | ".join(k_(f(r.get("comp_%s_per_io_median" % c))) for c in comps)))
        out.append("")
    modk = [k for k in keys if f(agg[k].get("mod_msgs_per_io_median")) is not None]
    if modk:
        out += ["Our kernel client's own counters per IO (its paths file in sysfs, sampled "
                "by tb-snap at the window's edges; medians [min-max]):", "",
                "| system | workload | bs | QD | messages/IO | registration WRs/IO | "
                "LOCAL_INV/IO |", "|" + "---|" * 7]
        for k in modk:
            r = agg[k]
            out.append("| %s | %s | %s | %s | %s |" % (nm.get(k[0], k[0]), k[1], k[2], k[3], " | ".join(
                "%s [%s-%s]" % (n_(f(r.get(m + "_median")), 3), n_(f(r.get(m + "_min")), 3),
                                n_(f(r.get(m + "_max")), 3))
                for m in ("mod_msgs_per_io", "mod_reg_wrs_per_io", "mod_local_invs_per_io"))))
        out.append("")
    measures = (("sw_instr_per_io", "software instr/IO"), ("instr_per_io", "total instr/IO"),
                ("iops", "IOPS")) if profiled else (("guest_ns_per_io", "guest ns/IO"),
                                                    ("iops", "IOPS"))
    out += ["Pairwise (B vs A: difference of medians; separated = ranges over the runs "
            "apart and the difference larger than both run-to-run spreads):", ""]
    for a_sys, b_sys in PAIRS:
        for k in keys:
            if k[0] != a_sys:
                continue
            b = agg.get((b_sys,) + k[1:])
            if not b:
                continue
            for m, name in measures:
                v = verdict(agg[k], b, m)
                if not v:
                    continue
                diff, sa, sb, sep, runs = v
                out.append("- %s %s QD%s %s: %s %s, %s %s: %+.1f %% (spreads %.2f %%, %.2f %%; "
                           "%d runs) -> %s" % (
                               k[1], k[2], k[3], name, nm.get(a_sys, a_sys),
                               n_(f(agg[k][m + "_median"]), 0), nm.get(b_sys, b_sys),
                               n_(f(b[m + "_median"]), 0), diff, sa, sb, runs,
                               "separated" if sep else "NOT separated"))
    out.append("")
    if not profiled:
        out += paired_section(run, boot, nm)
    return out


# Pairs needed before a paired verdict: all N ratios on one side of 1 has
# probability 2^(1-N) without a difference (two-sided sign test); N = 6
# gives 0.031.
PAIRED_MIN = 6


def paired_ratios(a, b, m):
    """a, b: {run: cells.csv row} of two systems in one cell. (the sorted
    ratios B/A of measure M over the runs both have, their median); ([],
    None) when no run has both."""
    rs = sorted(f(b[k].get(m)) / f(a[k].get(m)) for k in set(a) & set(b)
                if f(a[k].get(m)) and f(b[k].get(m)) is not None)
    if not rs:
        return rs, None
    n = len(rs)
    return rs, rs[n // 2] if n % 2 else (rs[n // 2 - 1] + rs[n // 2]) / 2


def paired_section(run, boot, nm):
    """Wall-clock boots: run r of system A and run r of system B ran back to
    back (guest-cells.sh interleaves the systems per workload and reverses
    their order every run), so a slow drift of the host moves both; their
    ratio B/A per run cancels it where the spread of either alone does not.
    Separated only when every pair's ratio lies on the same side of 1 and
    there are at least PAIRED_MIN pairs (sign test)."""
    p = os.path.join(run, boot, "cells.csv")
    if not os.path.exists(p):
        return []
    cells = {}
    with open(p, newline="") as fh:
        for r in csv.DictReader(fh):
            cells.setdefault((r["system"], r["workload"], r["bs"], r["iodepth"]), {})[r["run"]] = r
    out = ["Paired runs (B / A per run: the two ran back to back in this boot; median "
           "[min-max] of the ratios; separated = every ratio on one side of 1 over at "
           "least %d pairs, a two-sided sign test at p <= %.3f):" % (
               PAIRED_MIN, 2.0 ** (1 - PAIRED_MIN)), ""]
    n_out = len(out)
    keys = sorted(cells, key=lambda k: (k[2] != "4k", k[1], int(k[3]), k[0]))
    for a_sys, b_sys in PAIRS:
        for k in keys:
            if k[0] != a_sys or (b_sys,) + k[1:] not in cells:
                continue
            a, b = cells[k], cells[(b_sys,) + k[1:]]
            for m, name in (("iops", "IOPS"), ("ctxt_per_io", "ctxt/IO")):
                rs, med = paired_ratios(a, b, m)
                if not rs:
                    continue
                n = len(rs)
                side = rs[0] > 1 or rs[-1] < 1
                if side and n >= PAIRED_MIN:
                    v = "separated (%s in all %d pairs)" % ("higher" if rs[0] > 1 else "lower", n)
                elif side:
                    v = "NOT separated (%s in all %d pairs, too few: p = %.2f)" % (
                        "higher" if rs[0] > 1 else "lower", n, 2.0 ** (1 - n))
                else:
                    v = "NOT separated"
                out.append("- %s %s QD%s %s: %s / %s = %.3f [%.3f-%.3f] (%d pairs) -> %s" % (
                    k[1], k[2], k[3], name, nm.get(b_sys, b_sys), nm.get(a_sys, a_sys),
                    med, rs[0], rs[-1], n, v))
    if len(out) == n_out:
        return []
    return out + [""]


def icount_boots(run):
    """The icount boots of a run in order: icount, icount2, ..."""
    b = [d for d in os.listdir(run) if d.startswith("icount") and
         os.path.exists(os.path.join(run, d, "aggregate.csv"))]
    return sorted(b, key=lambda d: int(d[6:] or 1))


def cross_boot_section(run, boots):
    """Verdicts across boots: a cell's per-boot medians; the across-boot
    spread (max - min of those medians over their mean); "separated" only
    when every run of one system lies apart from every run of the other,
    over all boots, and the difference of the medians of the boot medians
    exceeds the larger within-boot and across-boot spreads of both."""
    aggs = [load(os.path.join(run, b, "aggregate.csv")) for b in boots]
    nm = names(run, boots[0])
    m = "sw_instr_per_io"
    out = ["## Across the %d icount boots (%s)" % (len(boots), ", ".join(boots)), "",
           "Software instructions per IO: per-boot medians, their across-boot spread, "
           "and the largest within-boot run-to-run spread.", "",
           "| system | workload | bs | QD | " + " | ".join(boots) + " | across-boot % | "
           "within-boot % |", "|" + "---|" * (6 + len(boots))]

    def cell(key):
        rs = [a.get(key) for a in aggs]
        if any(r is None or f(r.get(m + "_median")) is None for r in rs):
            return None
        meds = [f(r[m + "_median"]) for r in rs]
        mean = sum(meds) / len(meds)
        return {"meds": meds, "med": sorted(meds)[len(meds) // 2] if len(meds) % 2 else mean,
                "across": 100.0 * (max(meds) - min(meds)) / mean,
                "within": max(spread(r, m) or 0.0 for r in rs),
                "lo": min(f(r[m + "_min"]) for r in rs), "hi": max(f(r[m + "_max"]) for r in rs),
                "runs": sum(int(r["runs"]) for r in rs)}
    keys = sorted({k for a in aggs for k in a}, key=lambda k: (k[2] != "4k", k[1], int(k[3]), k[0]))
    cells = {}
    for k in keys:
        c = cell(k)
        if not c:
            continue
        cells[k] = c
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            nm.get(k[0], k[0]), k[1], k[2], k[3], " | ".join(k_(v) for v in c["meds"]),
            n_(c["across"]), n_(c["within"])))
    out += ["", "Pairwise across boots (B vs A):", ""]
    for a_sys, b_sys in PAIRS:
        for k, a in cells.items():
            if k[0] != a_sys or (b_sys,) + k[1:] not in cells:
                continue
            b = cells[(b_sys,) + k[1:]]
            diff = 100.0 * (b["med"] - a["med"]) / a["med"]
            bound = max(a["across"], a["within"], b["across"], b["within"])
            apart = a["hi"] < b["lo"] or b["hi"] < a["lo"]
            out.append("- %s %s QD%s software instr/IO: %s %s, %s %s: %+.1f %% (largest spread "
                       "%.2f %%; %d and %d runs over %d boots) -> %s" % (
                           k[1], k[2], k[3], nm.get(a_sys, a_sys), n_(a["med"], 0),
                           nm.get(b_sys, b_sys), n_(b["med"], 0), diff, bound, a["runs"],
                           b["runs"], len(boots),
                           "separated" if apart and abs(diff) > bound else "NOT separated"))
    out.append("")
    return out


def main():
    res = sys.argv[1] if len(sys.argv) > 1 else "results"
    if os.path.exists(os.path.join(res, "meta.json")):
        run = os.path.join(res, "")		# one run's folder
    else:
        runs = sorted(glob.glob(os.path.join(res, "E01-baseline", "*", "")))
        if not runs:
            sys.exit("report: no E01-baseline run under %s" % res)
        run = runs[-1]
    out = ["# E01-baseline: %s" % os.path.basename(os.path.dirname(run)), ""]
    rules = nic_set()
    if rules:
        out += ["The NIC set (what a real RDMA NIC does in hardware; excluded from software "
                "instructions), from `experiments/profiler/components.conf`: " +
                ", ".join("`%s`" % r for r in rules) + ".", ""]
    boots = icount_boots(run)
    if len(boots) > 1:
        out += cross_boot_section(run, boots)
    for boot in boots + ["mttcg"]:
        if os.path.exists(os.path.join(run, boot, "aggregate.csv")):
            out += boot_section(run, boot)
    text = "\n".join(out)
    with open(os.path.join(run, "report.md"), "w") as fh:
        fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
