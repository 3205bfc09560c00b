#!/usr/bin/python3
"""e03.py - the figure of E03-paths part 1 (what an extra path costs per
IO), from the newest run's icount aggregate.csv; never typed.

Usage: e03.py --results DIR --out DIR

  e03_path_cost   software instructions per IO against the number of paths
                  (1, 2, 4), one panel per workload, one line per system and
                  policy (each system keeps plot.py's colour, its policies
                  their own marker and line style); error bars min..max over
                  the runs; y from zero
"""
import argparse, glob, os, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot import COLOURS, num, save, wl_key, wl_name  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "experiments", "lib"))
from report_e03 import IMPL_ORDER, load  # noqa: E402
STYLES = {"round-robin": ("o", "-"), "min-inflight": ("s", "--"),
          "min-latency": ("^", ":"), "numa": ("D", "-.")}


def newest(results):
    runs = sorted(glob.glob(os.path.join(results, "E03-paths", "*", "icount",
                                         "aggregate.csv")))
    for agg in reversed(runs):
        run = os.path.dirname(os.path.dirname(agg))
        rows = load(run)
        if rows:
            return os.path.basename(run), rows
    return None, []


def fig_cost(run, rows, out):
    wls = sorted({wl_name(r) for r in rows}, key=wl_key)
    nruns = max(int(r["runs"]) for r in rows)
    fig, axes = plt.subplots(1, len(wls), figsize=(4.2 * len(wls), 4.2), squeeze=False)
    for ax, w in zip(axes[0], wls):
        rs = [r for r in rows if wl_name(r) == w and num(r.get("sw_instr_per_io_median"))]
        lines = sorted({(r["impl"], r["policy"]) for r in rs},
                       key=lambda k: (IMPL_ORDER.index(k[0]) if k[0] in IMPL_ORDER else 9, k[1]))
        for impl, pol in lines:
            pts = sorted((r for r in rs if (r["impl"], r["policy"]) == (impl, pol)),
                         key=lambda r: r["npaths"])
            xs = [r["npaths"] for r in pts]
            ys = [num(r["sw_instr_per_io_median"]) / 1e3 for r in pts]
            lo = [y - num(r["sw_instr_per_io_min"]) / 1e3 for y, r in zip(ys, pts)]
            hi = [num(r["sw_instr_per_io_max"]) / 1e3 - y for y, r in zip(ys, pts)]
            marker, ls = STYLES.get(pol, ("x", "-"))
            ax.errorbar(xs, ys, yerr=[lo, hi], color=COLOURS.get(impl, "#333333"),
                        marker=marker, linestyle=ls, capsize=2, markersize=4,
                        linewidth=1, label="%s %s" % (impl, pol))
        ax.set_xticks([1, 2, 4])
        ax.set_xlabel("paths")
        ax.set_ylim(bottom=0)
        ax.set_title(w, fontsize=9)
        ax.set_ylabel("thousand software instructions per IO")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="lower right")
    fig.suptitle("E03: what an extra path costs per IO\n"
                 "run %s, icount boot, medians of %d runs, error bars min..max"
                 % (run, nruns), fontsize=9, y=1.03)
    save(fig, out, "e03_path_cost")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    run, rows = newest(a.results)
    if rows:
        fig_cost(run, rows, a.out)
    else:
        print("plots: no E03-paths run: its figure skipped")


if __name__ == "__main__":
    main()
