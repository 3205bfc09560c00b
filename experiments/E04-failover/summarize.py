#!/usr/bin/python3
"""summarize.py - E04-failover's raw cells into cells.csv, timeline.csv and
report.md (run.sh calls it; rerun it on a run folder at will).

Usage: summarize.py RUN_DIR

Per cell (system, event, run), from RUN_DIR/mttcg/raw/:
  ios            IOs completed (fio's JSON, reads + writes)
  fio_error      fio's error code (0: no IO error, no verify mismatch;
                 verify_fatal=1 makes a mismatch an error)
  stall_ms       the longest time without a completion after the cut
                 (1 ms resolution: every IO's completion time is logged)
  stall_at_ms    when that stall started, after the cut
  recover_ms     from the end of the restore to the first 100 ms in which
                 path 1's rxe device sent >= 100 packets (IO again; its
                 heartbeats alone send a few); empty if it never did
  iops_before / iops_down / iops_after
                 mean IOPS over the phases (the second after the start and
                 the second after each event left out)
timeline.csv: IOs per 100 ms bin per cell, with the events' offsets.
"""
import bisect, csv, glob, gzip, json, os, sys

BIN_MS = 100
RECOVER_PKTS = 100


def events(path):
    ev = {}
    for line in open(path):
        w = line.split()
        if len(w) >= 2:
            ev[w[0]] = int(w[1])
            if w[0] in ("restore_done", "fio_end") and len(w) > 2:
                ev[w[0] + "_rc"] = int(w[2])
    return ev


def completions(raw, cell):
    ts = []
    for f in glob.glob(os.path.join(raw, cell + "_clat.*.log*")):
        op = gzip.open if f.endswith(".gz") else open
        with op(f, "rt") as fh:
            for line in fh:
                w = line.split(",")
                if w and w[0].strip().isdigit():
                    ts.append(int(w[0]))
    ts.sort()
    return ts


def fio_result(path):
    try:
        txt = open(path).read()
        j = json.loads(txt[txt.index("{"):])["jobs"][0]
        return j["error"], j["read"]["total_ios"] + j["write"]["total_ios"]
    except (OSError, ValueError, KeyError, IndexError):
        return None, None


def longest_gap(ts, lo, hi):
    """(gap, start) of the longest time in [lo, hi] without a completion."""
    best, at, prev = 0, None, lo
    for t in ts:
        if t < lo:
            continue
        if t > hi:
            break
        if t - prev > best:
            best, at = t - prev, prev
        prev = t
    if hi - prev > best:
        best, at = hi - prev, prev
    return best, at


def rate(ts, lo, hi):
    if hi <= lo:
        return None
    n = bisect.bisect_left(ts, hi) - bisect.bisect_left(ts, lo)
    return n * 1000.0 / (hi - lo)


def recovery(pkts_path, since):
    rows = []
    for line in open(pkts_path):
        w = line.split()
        if len(w) == 3 and all(x.lstrip("-").isdigit() for x in w):
            rows.append((int(w[0]), int(w[1])))
    for i, (t, p) in enumerate(rows):
        if t < since or p < 0:
            continue
        for t2, p2 in rows[i + 1:]:
            if p2 < 0 or t2 - t > BIN_MS:
                break
            if p2 - p >= RECOVER_PKTS:
                return t - since
    return None


def main():
    run = sys.argv[1]
    raw = os.path.join(run, "mttcg", "raw")
    desc = {}
    for line in open(os.path.join(raw, "systems.txt")):
        w = line.split()
        desc[w[0]] = w[1:]
    cells, tl = [], []
    for evf in sorted(glob.glob(os.path.join(raw, "*.events"))):
        cell = os.path.basename(evf)[:-len(".events")]
        system, event, r = cell.split("__")
        ev = events(evf)
        ts = completions(raw, cell)
        err, ios = fio_result(os.path.join(raw, cell + ".fio.json"))
        row = {"cell": cell, "system": desc.get(system, [system])[0], "paths": 2,
               "policy": desc.get(system, ["", "", ""])[2], "event": event,
               "run": r.lstrip("r"), "ios": ios, "fio_error": err}
        if "cut" in ev and ts:
            end = ev.get("fio_end", ts[-1])
            gap, at = longest_gap(ts, ev["cut"], min(end, ts[-1]))
            row["stall_ms"] = gap
            row["stall_at_ms"] = at - ev["cut"] if at is not None else None
            row["iops_before"] = rate(ts, ev["start"] + 1000, ev["cut"])
            row["iops_down"] = rate(ts, ev["cut"] + 1000, ev.get("restore", end))
            row["iops_after"] = rate(ts, ev.get("restore_done", end) + 1000, ts[-1])
            if "restore_done" in ev:
                row["recover_ms"] = recovery(os.path.join(raw, cell + ".pkts"),
                                             ev["restore_done"])
                row["restore_rc"] = ev.get("restore_done_rc")
            t0 = ev["start"]
            for b in range(0, (ts[-1] - t0) // BIN_MS + 1):
                lo = t0 + b * BIN_MS
                tl.append({"cell": cell, "t_ms": b * BIN_MS,
                           "ios": bisect.bisect_left(ts, lo + BIN_MS) - bisect.bisect_left(ts, lo),
                           "cut_ms": ev["cut"] - t0,
                           "restore_ms": ev.get("restore", t0) - t0,
                           "restore_done_ms": ev.get("restore_done", t0) - t0})
        cells.append(row)
    cols = ["cell", "system", "paths", "policy", "event", "run", "ios", "fio_error",
            "stall_ms", "stall_at_ms", "recover_ms", "restore_rc", "iops_before",
            "iops_down", "iops_after"]
    with open(os.path.join(run, "mttcg", "cells.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in cells:
            w.writerow({k: ("%.1f" % v if isinstance(v, float) else v) for k, v in r.items()})
    with open(os.path.join(run, "mttcg", "timeline.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["cell", "t_ms", "ios", "cut_ms", "restore_ms",
                                           "restore_done_ms"])
        w.writeheader()
        w.writerows(tl)
    with open(os.path.join(run, "report.md"), "w") as fh:
        fh.write("# E04-failover, run %s\n\n" % os.path.basename(run.rstrip("/")))
        fh.write("One MTTCG guest, 2 Soft-RoCE paths; wall-clock times within "
                 "this boot (not absolute claims). Stall: the longest time "
                 "without an IO completion after the cut (1 ms resolution). "
                 "Recovery: from the end of the restore to the first 100 ms "
                 "with >= %d packets sent on path 1.\n\n" % RECOVER_PKTS)
        fh.write("| system | policy | event | run | IOs | fio error | stall ms | "
                 "recover ms | IOPS before / down / after |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in cells:
            def f(k):
                v = r.get(k)
                return "" if v is None else ("%.0f" % v if isinstance(v, float) else str(v))
            fh.write("| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n" % (
                r["system"], r["policy"], r["event"], r["run"], f("ios"), f("fio_error"),
                f("stall_ms"), f("recover_ms"), f("iops_before"), f("iops_down"),
                f("iops_after")))
    print("E04: %d cells summarized into %s" % (len(cells), run))


if __name__ == "__main__":
    main()
