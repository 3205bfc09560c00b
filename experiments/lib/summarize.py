#!/usr/bin/python3
"""summarize.py - turn one experiment run's raw cells into CSV rows.

Usage: summarize.py RUN_DIR EXPERIMENT PHASE [--append results/summary.csv]

Reads RUN_DIR/PHASE/raw/<system>__<workload>__<bs>__<qd>__r<run>.{json,snap}
(and __wr cells for work-request counts, perftest_*.txt), writes
RUN_DIR/PHASE/cells.csv (one row per run) and RUN_DIR/PHASE/aggregate.csv
(median, min, max over runs), and appends the medians to summary.csv.
"""
import csv, glob, json, os, re, statistics, sys

COLUMNS = ("experiment,system,workload,bs,iodepth,jobs,paths,policy,mr,inval,runs,"
           "iops,bw_MBps,lat_mean_us,lat_p50_us,lat_p99_us,cpu_us_per_io,wr_per_io,"
           "git,date").split(",")
USER_HZ = 100
RESULT_NAME = {"nvme_rdma": "nvme-rdma", "rnbd1": "rnbd", "rnbd2": "rnbd",
               "ibtrs1": "ibtrs-fio", "ibtrs2": "ibtrs-fio", "fio_rdma": "fio-rdma"}
PATHS = {"nullblk": "", "rnbd2": "2", "ibtrs2": "2"}
# Registration and invalidation of each system as run (defaults).
MR_INVAL = {"rnbd": ("frwr", "always"), "nvme-rdma": ("frwr", "remote"),
            "ibtrs-fio": ("mw", "remote")}


def read_snap(path):
    vals = {}
    with open(path) as f:
        for line in f:
            k, v = line.split()
            vals[k] = float(v)
    return vals


def fio_metrics(path):
    with open(path) as f:
        txt = f.read()
    # fio may print warnings before the JSON object.
    j = json.loads(txt[txt.index("{"):])
    job = j["jobs"][0]
    iops = bw = 0.0
    lat_n = 0
    lat_sum = 0.0
    p50 = p99 = None
    for d in ("read", "write", "trim"):
        s = job.get(d, {})
        if not s or not s.get("total_ios"):
            continue
        iops += s["iops"]
        bw += s["bw_bytes"] / 1e6
        n = s["total_ios"]
        lat_sum += s["lat_ns"]["mean"] * n
        lat_n += n
        pct = s.get("clat_ns", {}).get("percentile", {})
        if pct and p50 is None:
            p50 = pct.get("50.000000", 0) / 1e3
            p99 = pct.get("99.000000", 0) / 1e3
    return {"iops": iops, "bw_MBps": bw,
            "lat_mean_us": lat_sum / lat_n / 1e3 if lat_n else None,
            "lat_p50_us": p50, "lat_p99_us": p99}


def cell_row(raw, base):
    m = fio_metrics(os.path.join(raw, base + ".json"))
    s = read_snap(os.path.join(raw, base + ".snap"))
    # IOs in the window are fio's IOs: its rate (steady after the ramp) times
    # the window. null_blk's count differs where a stack splits an IO (rnbd:
    # 128k = 124k + 4k; null_blk's own 64k limit), so it is reported
    # separately as block requests per IO.
    dt = s["b_uptime"] - s["a_uptime"]
    ios = m["iops"] * dt
    if ios <= 0 or dt <= 0:
        raise ValueError("%s: no IO in the window" % base)
    busy = s["b_cpu_busy"] - s["a_cpu_busy"]
    idle = s["b_cpu_idle"] - s["a_cpu_idle"]
    # CPU time per IO = busy fraction x CPUs / IO rate. /proc/stat counts
    # 10 ms jiffies, so busy time alone is quantized to +-1 jiffy (2-3 % of a
    # 0.3-0.5 s window); the busy fraction is exact when the guest never
    # idles, as in the icount boot, where this becomes guest ns (=
    # instructions) per IO with fio's rate as the precise part.
    ncpu = max(1, round((busy + idle) / (dt * USER_HZ)))
    frac = busy / (busy + idle) if busy + idle else 0.0
    m["cpu_us_per_io"] = frac * ncpu * 1e6 / m["iops"]
    m["pkts_per_io"] = (s["b_pkts"] - s["a_pkts"]) / ios
    blk = s["b_ios"] - s["a_ios"]
    if not s.get("ios_from_fio"):
        if blk <= 0:
            raise ValueError("%s: the block device completed no IO in the window" % base)
        m["blk_reqs_per_io"] = blk / ios
    m["guest_busy_pct"] = 100.0 * frac if busy + idle else None
    m["ctxt_per_io"] = (s["b_ctxt"] - s["a_ctxt"]) / ios
    if "b_wr_send" in s:	# guest.sh makes __wr cells for kernel systems only
        m["wr_per_io"] = ((s["b_wr_send"] - s["a_wr_send"]) +
                          (s["b_wr_recv"] - s["a_wr_recv"])) / ios
    return m


def fmt(v, nd=2):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return ("%." + str(nd) + "f") % v
    return str(v)


def perftest_rows(raw):
    rows = []
    for p in sorted(glob.glob(os.path.join(raw, "perftest_*.txt"))):
        mt = re.match(r"perftest_(\w+)_s(\d+)\.txt", os.path.basename(p))
        test, size = mt.group(1), int(mt.group(2))
        nums = None
        with open(p) as f:
            for line in f:
                parts = line.split()
                if parts and parts[0] == str(size) and len(parts) >= 4:
                    nums = parts
        if not nums:
            continue
        r = {"system": "perftest", "workload": test, "bs": size, "iodepth": "",
             "paths": "1"}
        if test.endswith("_bw"):
            # #bytes #iterations BW-peak BW-average MsgRate[Mpps]
            r["bw_MBps"] = float(nums[3]) * 1.048576
            r["iops"] = float(nums[4]) * 1e6
        elif len(nums) == 4:
            # duration mode (-D): #bytes #iterations t_avg[usec] tps
            r["lat_mean_us"] = float(nums[2])
            r["iops"] = float(nums[3])
        else:
            # #bytes #iter t_min t_max t_typical t_avg t_stdev 99% 99.9%
            r["lat_mean_us"] = float(nums[5])
            r["lat_p50_us"] = float(nums[4])
            r["lat_p99_us"] = float(nums[7])
            r["iops"] = 1e6 / float(nums[5]) if float(nums[5]) else None
        rows.append(r)
    return rows


def main():
    run_dir, experiment, phase = sys.argv[1:4]
    append = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--append" else None
    raw = os.path.join(run_dir, phase, "raw")
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    cells, wr = {}, {}
    for js in sorted(glob.glob(os.path.join(raw, "*__*.json"))):
        base = os.path.basename(js)[:-5]
        system, workload, bs, qd, run = base.split("__")
        key = (system, workload, bs, qd)
        m = cell_row(raw, base)
        if run == "wr":
            wr[key] = m.get("wr_per_io")
        else:
            cells.setdefault(key, []).append((run, m))
    metrics = ["iops", "bw_MBps", "lat_mean_us", "lat_p50_us", "lat_p99_us",
               "cpu_us_per_io", "pkts_per_io", "blk_reqs_per_io", "guest_busy_pct",
               "ctxt_per_io"]
    out = os.path.join(run_dir, phase)
    with open(os.path.join(out, "cells.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "workload", "bs", "iodepth", "run"] + metrics)
        for key, runs in sorted(cells.items()):
            for run, m in runs:
                w.writerow(list(key) + [run] + [fmt(m.get(k)) for k in metrics])
    summary = []
    with open(os.path.join(out, "aggregate.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "workload", "bs", "iodepth", "runs"] +
                   ["%s_%s" % (k, s) for k in metrics for s in ("median", "min", "max")] +
                   ["wr_per_io"])
        for key, runs in sorted(cells.items()):
            agg = {}
            row = list(key) + [len(runs)]
            for k in metrics:
                vals = [m[k] for _, m in runs if m.get(k) is not None]
                med = statistics.median(vals) if vals else None
                agg[k] = med
                row += [fmt(med), fmt(min(vals) if vals else None),
                        fmt(max(vals) if vals else None)]
            row.append(fmt(wr.get(key)))
            w.writerow(row)
            system, workload, bs, qd = key
            summary.append({
                "system": RESULT_NAME.get(system, system), "workload": workload,
                "bs": bs, "iodepth": qd, "jobs": 1, "paths": PATHS.get(system, "1"),
                "runs": len(runs), "iops": agg["iops"], "bw_MBps": agg["bw_MBps"],
                "lat_mean_us": agg["lat_mean_us"], "lat_p50_us": agg["lat_p50_us"],
                "lat_p99_us": agg["lat_p99_us"], "cpu_us_per_io": agg["cpu_us_per_io"],
                "wr_per_io": wr.get(key)})
    for r in perftest_rows(raw):
        r.update({"jobs": 1, "runs": 1})
        summary.append(r)
    for r in summary:
        r.update({"experiment": "%s/%s" % (experiment, phase), "git": meta["git"],
                  "date": meta["date"]})
        if r["system"] in MR_INVAL:
            r["mr"], r["inval"] = MR_INVAL[r["system"]]
        if r["system"] == "rnbd":
            r["policy"] = "min-inflight"	# rtrs-client's default
        elif r["system"] == "ibtrs-fio":
            r["policy"] = "round-robin"	# libibtrs's default (E01 sets none)
    if append:
        new = not os.path.exists(append) or os.path.getsize(append) == 0
        with open(append, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            if new:
                w.writeheader()
            for r in summary:
                w.writerow({k: fmt(r.get(k)) for k in COLUMNS})
    print("%s/%s: %d cells, %d summary rows" % (experiment, phase,
          sum(len(v) for v in cells.values()), len(summary)))


if __name__ == "__main__":
    main()
