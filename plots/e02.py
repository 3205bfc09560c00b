#!/usr/bin/python3
"""e02.py - the figures of E02-mr-inval (the cost of memory registration and
invalidation), from the newest run's icount aggregate.csv; never typed.

Usage: e02.py --results DIR --out DIR

  e02_security_cost   software instructions per IO of every system in each
                      of its modes, one panel per workload; each system keeps
                      its colour (plot.py's), unsafe modes hatched; error bars
                      min..max over the runs; bars from zero
  e02_security_ratio  each system's most secure mode in the run (ours: chunk
                      mode rekey when run) over its own unsafe mode
                      (software instructions per IO), per workload; error
                      bars: the ratio's range from the two modes' min..max
"""
import argparse, glob, os, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot import COLOURS, num, save, wl_key, wl_name  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "experiments", "lib"))
from report_e02 import IMPL_ORDER, UNSAFE, load, reference  # noqa: E402

# The modes that end the server's access with the IO (the rest are hatched):
# for rnbd only always_invalidate=Y re-keys its server chunks too.
SAFE = {"nvme-rdma": {("frwr", "remote")}, "rnbd": {("frwr", "remote+rekey")},
        "ibnbd": {("frwr", "remote"), ("frwr", "local"), ("frwr", "remote+pull"),
                  ("bounce", "remote"), ("bounce", "local"),
                  ("frwr", "local+pull"), ("frwr", "remote+rekey")},
        "ibtrs-fio": {("mw", "remote"), ("mw", "local"), ("reg", "local"),
                      ("bounce", "remote"), ("bounce", "local"),
                      ("mw", "remote+rekey"), ("mw", "remote+pull")},
        "ibtrs-fio/kernel-srv": {("mw", "remote"), ("mw", "local"),
                                 ("mw", "remote+rekey")}}


def unsafe(r):
    return (r["mr"], r["inval"]) not in SAFE.get(r["impl"], set())


def newest(results, want=lambda rows: True):
    """(run id, rows) of the newest E02-mr-inval run with an icount boot
    whose rows satisfy @want; rows carry impl/mr/inval from its systems.txt
    (report_e02.load)."""
    runs = sorted(glob.glob(os.path.join(results, "E02-mr-inval", "*", "icount",
                                         "aggregate.csv")))
    for agg in reversed(runs):
        run = os.path.dirname(os.path.dirname(agg))
        rows = load(run)
        if rows and want(rows):
            return os.path.basename(run), rows
    return None, []


def full_study(rows):
    """Every implementation of IMPL_ORDER is in the run (not a run of a subset)."""
    return set(IMPL_ORDER) <= {r["impl"] for r in rows}


def has_pull(rows):
    return any(r["inval"].endswith("+pull") for r in rows)


def impl_order(impl):
    return IMPL_ORDER.index(impl) if impl in IMPL_ORDER else 99


def fig_cost(run, rows, out):
    wls = sorted({wl_name(r) + " " + r["bs"] for r in rows},
                 key=lambda w: (w.split()[2] != "4k", wl_key(" ".join(w.split()[:2]))))
    fig, axes = plt.subplots(1, len(wls), figsize=(3.3 * len(wls), 4.6), squeeze=False)
    for ax, w in zip(axes[0], wls):
        rs = [r for r in rows if wl_name(r) + " " + r["bs"] == w
              and num(r.get("sw_instr_per_io_median"))]
        rs.sort(key=lambda r: (impl_order(r["impl"]), unsafe(r), r["mr"], r["inval"]))
        x = list(range(len(rs)))
        med = [num(r["sw_instr_per_io_median"]) / 1e3 for r in rs]
        lo = [m - num(r["sw_instr_per_io_min"]) / 1e3 for m, r in zip(med, rs)]
        hi = [num(r["sw_instr_per_io_max"]) / 1e3 - m for m, r in zip(med, rs)]
        for i, r in enumerate(rs):
            ax.bar(i, med[i], 0.75, color=COLOURS.get(r["impl"], "#333333"),
                   hatch="//" if unsafe(r) else None,
                   edgecolor="white", yerr=[[lo[i]], [hi[i]]], capsize=2,
                   error_kw={"elinewidth": 0.8})
        ax.set_xticks(x)
        ax.set_xticklabels(["%s %s/%s" % (r["impl"], r["mr"], r["inval"]) for r in rs],
                           rotation=60, ha="right", fontsize=6)
        ax.set_title(w, fontsize=9)
        ax.set_ylim(bottom=0)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("thousand software instructions per IO")
    nruns = max(int(r["runs"]) for r in rows)
    fig.suptitle("E02: software instructions per IO per registration/invalidation mode "
                 "(hatched: unsafe modes)\nrun %s, icount boot, median of %d runs, "
                 "error bars min..max" % (run, nruns), fontsize=9, y=1.03)
    save(fig, out, "e02_security_cost")


def fig_ratio(run, rows, out):
    def get(impl, mode, w):
        for r in rows:
            if (r["impl"], (r["mr"], r["inval"])) == (impl, mode) and \
                    wl_name(r) + " " + r["bs"] == w and num(r.get("sw_instr_per_io_median")):
                return r
        return None
    wls = sorted({wl_name(r) + " " + r["bs"] for r in rows},
                 key=lambda w: (w.split()[2] != "4k", wl_key(" ".join(w.split()[:2]))))
    # each system's reference (report_e02's: its fully secure mode when the
    # run has it, else its secure default) over its unsafe mode
    impls = []
    for impl in IMPL_ORDER:
        have = {(r["mr"], r["inval"]) for r in rows if r["impl"] == impl}
        sec = reference(rows, impl)
        if sec in have and UNSAFE[impl] in have:
            impls.append((impl, sec, UNSAFE[impl]))
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(wls) * len(impls) / 2), 4))
    width = 0.8 / max(len(impls), 1)
    drawn = False
    for i, (impl, sec, uns) in enumerate(impls):
        xs, ys, lo, hi = [], [], [], []
        for j, w in enumerate(wls):
            a, b = get(impl, sec, w), get(impl, uns, w)
            if not a or not b:
                continue
            k = "sw_instr_per_io_"
            y = num(a[k + "median"]) / num(b[k + "median"])
            xs.append(j + (i - (len(impls) - 1) / 2) * width)
            ys.append(y)
            lo.append(y - num(a[k + "min"]) / num(b[k + "max"]))
            hi.append(num(a[k + "max"]) / num(b[k + "min"]) - y)
        if xs:
            drawn = True
            ax.bar(xs, ys, width, color=COLOURS.get(impl, "#333333"),
                   label="%s: %s/%s over %s/%s" % (impl, sec[0], sec[1], uns[0], uns[1]),
                   yerr=[lo, hi], capsize=2, error_kw={"elinewidth": 0.8})
    if not drawn:
        plt.close(fig)
        return
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.axhline(1.05, color="grey", linewidth=0.6, linestyle="--")
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels(wls, fontsize=7)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("secure / unsafe, software instructions per IO")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=6, loc="lower center", bbox_to_anchor=(0.5, -0.45), ncol=2)
    nruns = max(int(r["runs"]) for r in rows)
    fig.suptitle("E02: what each system's secure mode costs over its own unsafe mode "
                 "(dashed: +5 %%)\nrun %s, icount boot, medians of %d runs, error bars "
                 "from the runs' min..max" % (run, nruns), fontsize=9, y=1.02)
    save(fig, out, "e02_security_ratio")


# write_mode: push (IBTRS) and pull (the server RDMA-READs the data, as
# nvme-rdma does), each implementation in its secure and its unsafe mode: the
# fio engine against the daemon, the kernel client against the kernel server
WRITE_IMPLS = [("ibtrs-fio", "mw", "fio engine against the daemon"),
               ("ibnbd", "frwr", "kernel client against the kernel server")]


def write_modes(secure_mr):
    return [((secure_mr, "remote"), "push, %s/remote" % secure_mr),
            ((secure_mr, "remote+pull"), "pull, %s/remote" % secure_mr),
            (("global", "none"), "push, global/none (unsafe)"),
            (("global", "none+pull"), "pull, global/none (unsafe)")]


def fig_write_mode(run, rows, out):
    impls = [i for i in WRITE_IMPLS
             if any(r["impl"] == i[0] and r["inval"].endswith("+pull") for r in rows)]
    fig, axes = plt.subplots(1, len(impls), figsize=(6.5 * len(impls), 4), squeeze=False)
    colours = ["#1f77b4", "#d62728", "#1f77b4", "#d62728"]
    nruns = 0
    for ax, (impl, secure_mr, what) in zip(axes[0], impls):
        rs = [r for r in rows if r["impl"] == impl and num(r.get("sw_instr_per_io_median"))]
        nruns = max([nruns] + [int(r["runs"]) for r in rs])
        wls = sorted({wl_name(r) + " " + r["bs"] for r in rs},
                     key=lambda w: (w.split()[2] != "4k", wl_key(" ".join(w.split()[:2]))))
        modes = write_modes(secure_mr)
        width = 0.8 / len(modes)
        for i, (mode, label) in enumerate(modes):
            xs, ys, lo, hi = [], [], [], []
            for j, w in enumerate(wls):
                r = next((r for r in rs if (r["mr"], r["inval"]) == mode
                          and wl_name(r) + " " + r["bs"] == w), None)
                if not r:
                    continue
                m = num(r["sw_instr_per_io_median"]) / 1e3
                xs.append(j + (i - (len(modes) - 1) / 2) * width)
                ys.append(m)
                lo.append(m - num(r["sw_instr_per_io_min"]) / 1e3)
                hi.append(num(r["sw_instr_per_io_max"]) / 1e3 - m)
            if xs:
                ax.bar(xs, ys, width, color=colours[i], hatch="//" if i >= 2 else None,
                       edgecolor="white", label=label, yerr=[lo, hi], capsize=2,
                       error_kw={"elinewidth": 0.8})
        ax.set_xticks(range(len(wls)))
        ax.set_xticklabels(wls, fontsize=7)
        ax.set_ylim(bottom=0)
        ax.set_title("%s (%s)" % (impl, what), fontsize=8)
        ax.set_ylabel("thousand software instructions per IO")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=6, loc="upper left")
    fig.suptitle("E02: write data pushed by the client or pulled by the server\n"
                 "run %s, icount boot, medians of %d runs, error bars min..max"
                 % (run, nruns), fontsize=9, y=1.02)
    save(fig, out, "e02_write_mode")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    run, rows = newest(a.results, full_study)
    if rows:
        fig_cost(run, rows, a.out)
        fig_ratio(run, rows, a.out)
    else:
        print("plots: no E02-mr-inval run of every system: its figures skipped")
    run, rows = newest(a.results, has_pull)
    if rows:
        fig_write_mode(run, rows, a.out)
    else:
        print("plots: no E02-mr-inval run with write_mode pull: its figure skipped")


if __name__ == "__main__":
    main()
