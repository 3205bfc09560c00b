#!/usr/bin/python3
"""report.py - the newest run of E01 in words and tables (markdown), for
closing notes and the paper: generated from aggregate.csv, never typed.

Usage: report.py [RESULTS_DIR | RUN_DIR]   (default results/: its newest run)
Writes <run>/report.md and prints it.

For each boot (icount, mttcg) and each measure (CPU time per IO, IOPS) it
gives the median per system and workload, the run-to-run spread
(max-min)/median, and whether nvme-rdma and rnbd (1 path) are separated
beyond noise: their [min, max] ranges over the runs do not overlap.
"""
import csv, glob, os, sys


def load(path):
    with open(path, newline="") as f:
        return {(r["system"], r["workload"], r["bs"], r["iodepth"]): r for r in csv.DictReader(f)}


def f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def spread(r, m):
    med, lo, hi = f(r.get(m + "_median")), f(r.get(m + "_min")), f(r.get(m + "_max"))
    if not med or lo is None or hi is None:
        return None
    return 100.0 * (hi - lo) / med


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
    for boot in ("icount", "mttcg"):
        p = os.path.join(run, boot, "aggregate.csv")
        if not os.path.exists(p):
            continue
        agg = load(p)
        out += ["## %s boot" % boot, "",
                "| system | workload | bs | QD | runs | IOPS (median) | spread % | CPU us/IO (median) | spread % | p50 lat us | WR/IO | blk req/IO |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for k in sorted(agg, key=lambda k: (k[1], k[2], int(k[3]), k[0])):
            r = agg[k]
            s_i, s_c = spread(r, "iops"), spread(r, "cpu_us_per_io")
            out.append("| %s | %s | %s | %s | %s | %.0f | %s | %.1f | %s | %s | %s | %s |" % (
                k[0], k[1], k[2], k[3], r["runs"], f(r["iops_median"]) or 0,
                "%.2f" % s_i if s_i is not None else "", f(r["cpu_us_per_io_median"]) or 0,
                "%.2f" % s_c if s_c is not None else "", r.get("lat_p50_us_median", ""),
                r.get("wr_per_io", ""), r.get("blk_reqs_per_io_median", "")))
        out += ["", "nvme-rdma vs rnbd (1 path), %s boot:" % boot, ""]
        for k in sorted(agg):
            if k[0] != "nvme_rdma":
                continue
            o = agg.get(("rnbd1",) + k[1:])
            if not o:
                continue
            for m, name in (("cpu_us_per_io", "CPU us/IO"), ("iops", "IOPS")):
                a, b = f(agg[k][m + "_median"]), f(o[m + "_median"])
                if not a or not b:
                    continue
                sep = f(agg[k][m + "_max"]) < f(o[m + "_min"]) or f(o[m + "_max"]) < f(agg[k][m + "_min"])
                out.append("- %s %s QD%s %s: nvme-rdma %.1f, rnbd %.1f, difference %+.1f %% "
                           "(noise: nvme %.2f %%, rnbd %.2f %%) -> %s" % (
                               k[1], k[2], k[3], name, a, b, 100.0 * (b - a) / a,
                               spread(agg[k], m) or 0, spread(o, m) or 0,
                               "separated" if sep else "NOT separated (ranges overlap)"))
        out.append("")
    text = "\n".join(out)
    with open(os.path.join(run, "report.md"), "w") as fh:
        fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
