#!/usr/bin/python3
"""plot.py - draw the project's figures from results/ (never from typed numbers).

Usage: plot.py --results DIR --out DIR

Figures (PNG and PDF each):
  icount_us_per_io  primary figure: guest time per IO in the icount boot
                    (1e6 / guest-time IOPS: instructions, 1 ns each, plus timer
                    waits; run-to-run noise <= 1.5 % at 4k), per workload and system
  cpu_per_io        guest CPU time per IO (busy fraction / IO rate), icount
  iops              IOPS per workload and system, icount and MTTCG boots
  noise             run-to-run spread (max-min)/median of each measure over the
                    repeated runs (aggregate.csv of the newest run per boot):
                    which measure can rank protocols
  perftest          raw verbs message rate and latency per message size
"""
import argparse, csv, glob, os, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SYSTEM_ORDER = ["nullblk", "nvme-rdma", "rnbd", "ibtrs-fio", "fio-rdma"]
WORKLOAD_ORDER = ["randread", "randwrite", "seqread", "seqwrite"]


def load_summary(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def newest(rows, experiment):
    """For one experiment/boot, the newest row (by date) of every cell
    (system, workload, bs, QD, paths, policy, MR, invalidation): a later run
    of a subset (e.g. one more system) joins the last full run."""
    best = {}
    for r in rows:
        if r["experiment"] != experiment:
            continue
        k = tuple(r[c] for c in ("system", "workload", "bs", "iodepth", "paths",
                                 "policy", "mr", "inval"))
        if k not in best or r["date"] > best[k]["date"]:
            best[k] = r
    return list(best.values())


def label(r):
    s = r["system"]
    if s in ("rnbd", "ibtrs-fio") and r.get("paths"):
        s += " %sp" % r["paths"]
    extra = [r[k] for k in ("mr", "inval") if r.get(k) and r["system"] == "ibtrs-fio"
             and r[k] not in ("mw", "remote")]
    return s + ("" if not extra else " " + "/".join(extra))


def sys_key(lbl):
    base = lbl.split()[0]
    return (SYSTEM_ORDER.index(base) if base in SYSTEM_ORDER else 99, lbl)


def wl_name(r):
    return "%s %s QD%s" % (r["workload"], r["bs"], r["iodepth"])


def wl_key(name):
    w, bs, qd = name.split()
    return (WORKLOAD_ORDER.index(w) if w in WORKLOAD_ORDER else 99, bs, int(qd[2:]))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def save(fig, out, name):
    for ext in ("png", "pdf"):
        fig.savefig(os.path.join(out, "%s.%s" % (name, ext)), bbox_inches="tight", dpi=120)
    plt.close(fig)
    print("plots: %s/%s.{png,pdf}" % (out, name))


def grouped_bars(ax, rows, metric, ylabel):
    rows = [r for r in rows if r["system"] != "perftest" and num(r[metric]) is not None]
    wls = sorted({wl_name(r) for r in rows}, key=wl_key)
    systems = sorted({label(r) for r in rows}, key=sys_key)
    if not wls:
        return False
    width = 0.8 / max(len(systems), 1)
    for i, s in enumerate(systems):
        xs, ys = [], []
        for j, w in enumerate(wls):
            v = [num(r[metric]) for r in rows if label(r) == s and wl_name(r) == w]
            if v:
                xs.append(j + (i - (len(systems) - 1) / 2) * width)
                ys.append(v[0])
        ax.bar(xs, ys, width, label=s)
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels(wls, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return True


def fig_primary(rows, out):
    """Guest time per IO in the icount boot: 1e6 / guest-time IOPS. Guest time
    advances 1 ns per executed instruction and jumps over idle periods to the
    next timer, so this is thousands of instructions per IO plus any timer
    waits (the kernel systems idle <= 14 % of 4k windows, see guest_busy_pct
    in cells.csv); deterministic: run-to-run noise <= 1.5 % at 4k."""
    r = [dict(x) for x in newest(rows, "E01-baseline/icount") if num(x["iops"])]
    if not r:
        return
    for x in r:
        x["us_per_io"] = "%.3f" % (1e6 / num(x["iops"]))
    fig, ax = plt.subplots(figsize=(8, 4))
    if grouped_bars(ax, r, "us_per_io", "guest time per IO, us (1 us = 1000 instructions)"):
        ax.set_title("Guest time per IO, icount boot (median of %s runs, %s)"
                     % (r[0]["runs"], max(x["date"] for x in r)[:10]), fontsize=9)
        save(fig, out, "icount_us_per_io")
    else:
        plt.close(fig)


def fig_cpu(rows, out):
    r = newest(rows, "E01-baseline/icount")
    if not r:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    if grouped_bars(ax, r, "cpu_us_per_io",
                    "guest CPU time per IO (us, icount: instructions)"):
        ax.set_title("Guest CPU per IO, icount boot (median of %s runs; %s)"
                     % (r[0]["runs"], r[0]["date"][:10]), fontsize=9)
        save(fig, out, "cpu_per_io")
    else:
        plt.close(fig)


def fig_iops(rows, out):
    phases = [p for p in ("icount", "mttcg") if newest(rows, "E01-baseline/" + p)]
    if not phases:
        return
    fig, axes = plt.subplots(1, len(phases), figsize=(8 * len(phases), 4), squeeze=False)
    for ax, p in zip(axes[0], phases):
        grouped_bars(ax, newest(rows, "E01-baseline/" + p), "iops", "IOPS")
        ax.set_yscale("log")
        ax.set_title("IOPS, %s boot%s" % (p, " (guest time)" if p == "icount" else
                                            " (wall time, soft-RoCE bound)"), fontsize=9)
    save(fig, out, "iops")


def newest_aggregate(results, phase):
    """The newest full run's cells: most cells first, then newest."""
    best = None
    for p in sorted(glob.glob(os.path.join(results, "E01-baseline", "*", phase, "aggregate.csv"))):
        with open(p, newline="") as f:
            rows = list(csv.DictReader(f))
        if best is None or len(rows) >= len(best):
            best = rows
    return best or []


def fig_noise(results, out):
    series = []
    for phase, metric in (("icount", "cpu_us_per_io"), ("icount", "iops"),
                          ("mttcg", "cpu_us_per_io"), ("mttcg", "iops")):
        rows = newest_aggregate(results, phase)
        pts = []
        for r in rows:
            med, lo, hi = (num(r.get("%s_%s" % (metric, s))) for s in ("median", "min", "max"))
            if med and lo is not None and hi is not None and int(r["runs"]) > 1:
                pts.append(100.0 * (hi - lo) / med)
        if pts:
            series.append(("%s\n%s" % (metric, phase), pts))
    if not series:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.boxplot([p for _, p in series], labels=[n for n, _ in series], whis=(0, 100))
    for i, (_, p) in enumerate(series):
        ax.scatter([i + 1] * len(p), p, s=8, alpha=0.6)
    ax.set_ylabel("run-to-run spread (max-min)/median, %")
    ax.set_title("Noise of each measure over repeated runs (all cells of the newest E01 run)",
                 fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    save(fig, out, "noise")


def fig_perftest(rows, out):
    r = [x for x in newest(rows, "E01-baseline/mttcg") if x["system"] == "perftest"]
    if not r:
        return
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for test in sorted({x["workload"] for x in r}):
        pts = sorted((int(x["bs"]), x) for x in r if x["workload"] == test)
        xs = [p[0] for p in pts]
        if test.endswith("_bw"):
            a1.plot(xs, [num(p[1]["iops"]) / 1e3 for p in pts], "o-", label=test)
        else:
            a2.plot(xs, [num(p[1]["lat_mean_us"]) for p in pts], "o-", label=test)
    for a, yl in ((a1, "message rate (k msgs/s)"), (a2, "mean latency (us)")):
        a.set_xscale("log", base=2)
        a.set_xlabel("message size (bytes)")
        a.set_ylabel(yl)
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle("Raw verbs limits on soft-RoCE (perftest, MTTCG boot)", fontsize=9)
    save(fig, out, "perftest")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    summary = os.path.join(a.results, "summary.csv")
    if not os.path.exists(summary):
        sys.exit("plots: %s does not exist; run `make experiments` first" % summary)
    os.makedirs(a.out, exist_ok=True)
    rows = load_summary(summary)
    fig_primary(rows, a.out)
    fig_cpu(rows, a.out)
    fig_iops(rows, a.out)
    fig_noise(a.results, a.out)
    fig_perftest(rows, a.out)


if __name__ == "__main__":
    main()
