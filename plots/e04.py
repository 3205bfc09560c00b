#!/usr/bin/python3
"""e04.py - the figure of E04-failover, from the newest run's
mttcg/timeline.csv and cells.csv; never typed.

Usage: e04.py --results DIR --out DIR

  e04_failover   IOPS over time (100 ms bins) per system, one panel per
                 event kind (path 1's link cut, its rxe device deleted) and
                 run; the cut and the restore marked; the legend gives each
                 cell's longest stall and the restored path's recovery time
"""
import argparse, csv, glob, os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot import COLOURS, save  # noqa: E402


def newest(results):
    for tl in reversed(sorted(glob.glob(os.path.join(results, "E04-failover", "*",
                                                     "mttcg", "timeline.csv")))):
        rows = list(csv.DictReader(open(tl)))
        cells = list(csv.DictReader(open(os.path.join(os.path.dirname(tl), "cells.csv"))))
        if rows and cells:
            return os.path.basename(os.path.dirname(os.path.dirname(tl))), rows, cells
    return None, [], []


def fig(run, rows, cells, out):
    panels = sorted({(c["event"], c["run"]) for c in cells})
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 2.8 * len(panels)), squeeze=False)
    for ax, (event, r) in zip(axes[:, 0], panels):
        marks = None
        for c in (c for c in cells if (c["event"], c["run"]) == (event, r)):
            pts = [x for x in rows if x["cell"] == c["cell"]]
            if not pts:
                continue
            xs = [int(x["t_ms"]) / 1000.0 for x in pts]
            ys = [int(x["ios"]) * 10 / 1000.0 for x in pts]	# per 100 ms -> kIOPS
            ax.plot(xs, ys, color=COLOURS.get(c["system"], "#333333"), linewidth=0.8,
                    label="%s: stall %s ms, recovery %s ms, fio error %s" % (
                        c["system"], c["stall_ms"] or "?", c["recover_ms"] or "never",
                        c["fio_error"]))
            marks = pts[0]
        ax.set_ylim(bottom=0)
        if marks:
            top = ax.get_ylim()[1]
            for k, lab, h in (("cut_ms", "cut", 0.97), ("restore_ms", "restore", 0.85),
                              ("restore_done_ms", "restored", 0.73)):
                t = int(marks[k]) / 1000.0
                ax.axvline(t, color="#555555", linestyle=":", linewidth=0.8)
                ax.text(t, top * h, " " + lab, fontsize=6, va="top")
        ax.set_xlabel("seconds since the job started")
        ax.set_ylabel("kIOPS (100 ms bins)")
        ax.set_title("path 1: %s, run %s" % ({"link": "link cut", "rxe": "rxe device deleted"}
                                              .get(event, event), r), fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="lower right")
    fig.suptitle("E04: a verified job through a path failure and its restore\n"
                 "run %s, one MTTCG guest, wall clock within the boot" % run,
                 fontsize=9, y=1.01)
    fig.tight_layout()
    save(fig, out, "e04_failover")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    run, rows, cells = newest(a.results)
    if rows:
        fig(run, rows, cells, a.out)
    else:
        print("plots: no E04-failover run: its figure skipped")


if __name__ == "__main__":
    main()
