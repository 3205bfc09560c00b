#!/usr/bin/python3
"""plot.py - draw the project's figures from results/ (never from typed numbers).

Usage: plot.py --results DIR --out DIR

Every figure is drawn from one run's aggregate.csv (median, min, max over
its repetitions) of one boot: the newest E01-baseline run holding that boot
(results/summary.csv names the runs). Bars are medians on linear axes from
zero, error bars span min..max over the runs, each system has one colour in
every figure, 4k and 128k workloads are separate panels, icount (guest
instructions, guest time) and MTTCG (wall clock) never share a panel, and
every title names its run and the number of runs.

Figures (PNG and PDF each):
  sw_instr_per_io   primary: software instructions per IO (all guest
                    instructions except the NIC set, see components.conf)
  instr_per_io      total guest instructions per IO, NIC included
  instr_breakdown   instructions per IO by component, one stacked bar per
                    system and 4k workload (medians)
  guest_time_per_io icount guest ns per IO (instructions + idle jumped over)
  iops_mttcg        IOPS in the MTTCG boot (wall clock, soft-RoCE bound)
  mttcg_paired      the same boot's per-run ratios to nvme-rdma (IOPS and
                    context switches per IO), each system's run r against
                    nvme-rdma's run r, which ran back to back with it
  perftest          raw verbs message rate and latency per message size
"""
import argparse, csv, glob, os, sys

import matplotlib
matplotlib.use("Agg")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "experiments", "lib"))
import report  # noqa: E402  (paired_ratios: the report's arithmetic)
import matplotlib.pyplot as plt  # noqa: E402

SYSTEM_ORDER = ["nullblk", "nvme-rdma", "rnbd", "rnbd 2p", "ibnbd", "ibnbd 2p",
                "ibtrs-fio", "ibtrs-fio 2p", "ibtrs-fio/kernel-srv", "fio-rdma"]
COLOURS = {"nullblk": "#7f7f7f", "nvme-rdma": "#1f77b4", "rnbd": "#ff7f0e",
           "rnbd 2p": "#ffbb78", "ibnbd": "#d62728", "ibnbd 2p": "#ff9896",
           "ibtrs-fio": "#2ca02c", "ibtrs-fio 2p": "#98df8a",
           "ibtrs-fio/kernel-srv": "#8c564b", "fio-rdma": "#9467bd"}
COMP_COLOURS = {"nic": "#d9d9d9", "backend": "#7f7f7f", "block": "#1f77b4",
                "transport-kernel": "#ff7f0e", "ibtrs-user": "#2ca02c",
                "verbs-user": "#98df8a", "fio": "#9467bd", "libc": "#c5b0d5",
                "syscalls+sched": "#8c564b", "irq+timer": "#e377c2",
                "kernel-lib": "#17becf", "kernel-mm": "#9edae5", "harness": "#bcbd22",
                "other": "#393b79", "unattributed": "#000000"}
WORKLOAD_ORDER = ["randread", "randwrite", "seqread", "seqwrite"]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def newest_run(results, boot):
    """(run_id, rows, names) of the newest E01-baseline run that has BOOT."""
    runs = sorted(glob.glob(os.path.join(results, "E01-baseline", "*", boot, "aggregate.csv")))
    if not runs:
        return None, [], {}
    p = runs[-1]
    with open(p, newline="") as f:
        rows = list(csv.DictReader(f))
    names = {}
    st = os.path.join(os.path.dirname(p), "raw", "systems.txt")
    if os.path.exists(st):
        for line in open(st):
            w = line.split()
            if len(w) >= 3:
                names[w[0]] = w[1] + ("" if w[2] in ("-", "1") else " %sp" % w[2])
    return os.path.basename(os.path.dirname(os.path.dirname(p))), rows, names


def label(r, names):
    return names.get(r["system"], r["system"].replace("_", "-"))


def sys_key(lbl):
    return (SYSTEM_ORDER.index(lbl) if lbl in SYSTEM_ORDER else 99, lbl)


def wl_name(r):
    return "%s QD%s" % (r["workload"], r["iodepth"])


def wl_key(name):
    w, qd = name.split()
    base = w.split("-")[0]	# randread-j2: numjobs 2, after randread
    return (w != base, WORKLOAD_ORDER.index(base) if base in WORKLOAD_ORDER else 99,
            int(qd[2:]), w)


def save(fig, out, name):
    for ext in ("png", "pdf"):
        fig.savefig(os.path.join(out, "%s.%s" % (name, ext)), bbox_inches="tight", dpi=120)
    plt.close(fig)
    print("plots: %s/%s.{png,pdf}" % (out, name))


def bars(ax, rows, names, metric, scale=1.0):
    """Grouped bars of METRIC's median with min..max error bars; False if
    nothing to draw."""
    rows = [r for r in rows if num(r.get(metric + "_median")) is not None]
    wls = sorted({wl_name(r) for r in rows}, key=wl_key)
    systems = sorted({label(r, names) for r in rows}, key=sys_key)
    if not wls:
        return False
    width = 0.8 / max(len(systems), 1)
    for i, s in enumerate(systems):
        xs, ys, lo, hi = [], [], [], []
        for j, w in enumerate(wls):
            v = [r for r in rows if label(r, names) == s and wl_name(r) == w]
            if not v:
                continue
            med = num(v[0][metric + "_median"]) / scale
            mn = num(v[0].get(metric + "_min"))
            mx = num(v[0].get(metric + "_max"))
            xs.append(j + (i - (len(systems) - 1) / 2) * width)
            ys.append(med)
            lo.append(med - (mn / scale if mn is not None else med))
            hi.append((mx / scale if mx is not None else med) - med)
        ax.bar(xs, ys, width, label=s, color=COLOURS.get(s),
               yerr=[lo, hi], capsize=2, error_kw={"elinewidth": 0.8})
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels(wls, fontsize=8)
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    return True


def by_bs(rows):
    out = {}
    for r in rows:
        out.setdefault(r["bs"], []).append(r)
    return sorted(out.items(), key=lambda kv: (kv[0] != "4k", kv[0]))


def fig_metric(results, out, boot, metric, scale, ylabel, title, name):
    run, rows, names = newest_run(results, boot)
    rows = [r for r in rows if num(r.get(metric + "_median"))]
    if not rows:
        return
    groups = by_bs(rows)
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4), squeeze=False)
    drawn = False
    for ax, (bs, rs) in zip(axes[0], groups):
        if bars(ax, rs, names, metric, scale):
            drawn = True
            ax.set_title("%s blocks" % bs, fontsize=9)
            ax.set_ylabel(ylabel)
    if not drawn:
        plt.close(fig)
        return
    fig.legend(*axes[0][0].get_legend_handles_labels(), fontsize=7,
               ncol=len(axes[0][0].get_legend_handles_labels()[1]),
               loc="lower center", bbox_to_anchor=(0.5, -0.06))
    nruns = max(int(r["runs"]) for r in rows)
    fig.suptitle("%s\nrun %s, %s boot, median of %d runs, error bars min..max"
                 % (title, run, boot, nruns), fontsize=9, y=1.04)
    save(fig, out, name)


def fig_breakdown(results, out):
    run, rows, names = newest_run(results, "icount")
    rows = [r for r in rows if r["bs"] == "4k" and num(r.get("instr_per_io_median"))]
    if not rows:
        return
    comps = sorted({c[5:-len("_per_io_median")] for r in rows for c in r
                    if c.startswith("comp_") and c.endswith("_per_io_median")},
                   key=lambda c: (c != "nic", c))
    wls = sorted({wl_name(r) for r in rows}, key=wl_key)
    fig, axes = plt.subplots(1, len(wls), figsize=(3.6 * len(wls), 4.2), squeeze=False,
                             sharey=True)
    for ax, w in zip(axes[0], wls):
        rs = sorted([r for r in rows if wl_name(r) == w], key=lambda r: sys_key(label(r, names)))
        x = list(range(len(rs)))
        bottom = [0.0] * len(rs)
        for c in comps:
            v = [(num(r.get("comp_%s_per_io_median" % c)) or 0.0) / 1e3 for r in rs]
            ax.bar(x, v, 0.7, bottom=bottom, color=COMP_COLOURS.get(c), label=c,
                   hatch="//" if c == "nic" else None, edgecolor="white", linewidth=0.3)
            bottom = [b + y for b, y in zip(bottom, v)]
        ax.set_xticks(x)
        ax.set_xticklabels([label(r, names) for r in rs], rotation=30, ha="right", fontsize=7)
        ax.set_title("4k " + w, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("thousand instructions per IO")
    axes[0][-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    nruns = max(int(r["runs"]) for r in rows)
    fig.suptitle("Instructions per IO by component (hatched: the NIC set, excluded from "
                 "software instructions)\nrun %s, icount boot, medians of %d runs"
                 % (run, nruns), fontsize=9, y=1.04)
    save(fig, out, "instr_breakdown")


def fig_perftest(results, out):
    path = os.path.join(results, "summary.csv")
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["experiment"] == "E01-baseline/mttcg"
                and r["system"] == "perftest"]
    if not rows:
        return
    run = max(r.get("run_id") or r["date"] for r in rows)
    rows = [r for r in rows if (r.get("run_id") or r["date"]) == run]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for test in sorted({x["workload"] for x in rows}):
        pts = sorted((int(x["bs"]), x) for x in rows if x["workload"] == test)
        xs = [p[0] for p in pts]
        if test.endswith("_bw"):
            a1.plot(xs, [num(p[1]["iops"]) / 1e3 for p in pts], "o-", label=test)
        else:
            a2.plot(xs, [num(p[1]["lat_mean_us"]) for p in pts], "o-", label=test)
    for a, yl in ((a1, "message rate (k msgs/s)"), (a2, "mean latency (us)")):
        a.set_xscale("log", base=2)
        a.set_xlabel("message size (bytes)")
        a.set_ylabel(yl)
        a.set_ylim(bottom=0)
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    fig.suptitle("Raw verbs limits on soft-RoCE (perftest, one run each, no repetitions: "
                 "no error bars)\nrun %s, MTTCG boot (wall clock)" % run, fontsize=9, y=1.04)
    save(fig, out, "perftest")


def fig_paired(results, out):
    """Per-run ratios B/nvme-rdma in the newest MTTCG boot: the median
    ratio over the runs as a bar, min..max as its error bar, 1 marked."""
    runs = sorted(glob.glob(os.path.join(results, "E01-baseline", "*", "mttcg", "cells.csv")))
    if not runs:
        return
    p = runs[-1]
    run = os.path.basename(os.path.dirname(os.path.dirname(p)))
    _, _, names = newest_run(results, "mttcg")
    cells = {}
    with open(p, newline="") as f:
        for r in csv.DictReader(f):
            cells.setdefault((r["system"], wl_name(r)), {})[r["run"]] = r
    others = sorted({s for s, _ in cells if s != "nvme_rdma"},
                    key=lambda s: sys_key(names.get(s, s)))
    wls = sorted({w for s, w in cells if s == "nvme_rdma"}, key=wl_key)
    if not others or not wls:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
    npairs = 0
    for ax, (metric, title) in zip(axes, (("iops", "IOPS"), ("ctxt_per_io",
                                                             "context switches per IO"))):
        width = 0.8 / len(others)
        for i, s in enumerate(others):
            xs, ys, lo, hi = [], [], [], []
            for j, w in enumerate(wls):
                a, b = cells.get(("nvme_rdma", w), {}), cells.get((s, w), {})
                rs, med = report.paired_ratios(a, b, metric)
                if not rs:
                    continue
                npairs = max(npairs, len(rs))
                xs.append(j + (i - (len(others) - 1) / 2) * width)
                ys.append(med)
                lo.append(med - rs[0])
                hi.append(rs[-1] - med)
            lbl = names.get(s, s)
            ax.bar(xs, ys, width, label=lbl, color=COLOURS.get(lbl),
                   yerr=[lo, hi], capsize=2, error_kw={"elinewidth": 0.8})
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(wls)))
        ax.set_xticklabels(wls, fontsize=7, rotation=20)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("%s / nvme-rdma's, same run" % title)
        ax.grid(axis="y", alpha=0.3)
    axes[-1].legend(fontsize=7)
    fig.suptitle("Paired ratios to nvme-rdma in the MTTCG boot (wall clock): bars the median "
                 "over %d runs, error bars min..max;\n"
                 "each run of a system ran back to back "
                 "with nvme-rdma's (run %s)" % (npairs, run), fontsize=9, y=1.05)
    save(fig, out, "mttcg_paired")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if not glob.glob(os.path.join(a.results, "E01-baseline", "*", "*", "aggregate.csv")):
        sys.exit("plots: no run under %s; run `make experiments` first" % a.results)
    os.makedirs(a.out, exist_ok=True)
    fig_metric(a.results, a.out, "icount", "sw_instr_per_io", 1e3,
               "thousand instructions per IO",
               "Software instructions per IO (guest instructions minus the NIC set)",
               "sw_instr_per_io")
    fig_metric(a.results, a.out, "icount", "instr_per_io", 1e3,
               "thousand instructions per IO",
               "Total guest instructions per IO (soft-RoCE NIC work included)",
               "instr_per_io")
    fig_breakdown(a.results, a.out)
    fig_metric(a.results, a.out, "icount", "guest_ns_per_io", 1e3, "guest us per IO",
               "Guest time per IO, icount (1 ns per instruction + idle time jumped over)",
               "guest_time_per_io")
    fig_metric(a.results, a.out, "mttcg", "iops", 1e3, "thousand IOPS (wall clock)",
               "IOPS in the MTTCG boot (wall clock; soft-RoCE bound, cannot rank protocols)",
               "iops_mttcg")
    fig_paired(a.results, a.out)
    if os.path.exists(os.path.join(a.results, "summary.csv")):
        fig_perftest(a.results, a.out)


if __name__ == "__main__":
    main()
