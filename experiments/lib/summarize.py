#!/usr/bin/python3
"""summarize.py - turn one experiment run's raw cells into CSV rows.

Usage: summarize.py RUN_DIR EXPERIMENT PHASE [--append results/summary.csv] [--compress]
       [--partial]

Reads RUN_DIR/PHASE/raw/<system>__<workload>__<bs>__<qd>__r<run>.{snap,json}
(and <cell>.profile.json where the boot was profiled, __wr cells of the
work-request pass, systems.txt, perftest_*.txt), writes RUN_DIR/PHASE/
cells.csv (one row per run), aggregate.csv (median, min, max over runs) and
boot.json (how the guest ran), records the boot in RUN_DIR/meta.json, and
puts the medians in summary.csv (the run's previous rows, if any, are
replaced: a cell appears once per run id).

Every per-IO figure is Δcounter / ΔIOs between the two instants tb-snap
sampled (experiments/lib/tb-snap.c): ΔIOs is the system's own exact IO count
(its block device, or the fio engine's ios_file), never a rate times a
clock. Only fio's rdma engine has no counter: its IOs are fio's rate times
the window (ios_exact = 0).

The IO is the user's (fio's) IO: a block device counts requests, and a
device that splits a 128 KiB IO in two counts two, so where the snapshot
has the device's sectors (tb-snap a_/b_sectors) the window's IOs are its
bytes / bs, and reqs_per_io (device requests per IO) is reported beside
(io_unit "user"). Runs from before that counted requests (io_unit
"request"): their 4k cells are the same (nothing splits 4 KiB), their 128k
cells are per request. The engine's ios_file counts fio's IOs.

Latency percentiles are fio's total latency (submission + completion,
lat_ns; lat_kind "total") where the JSON has them (fio ran with
--lat_percentiles=1), else completion latency (clat, lat_kind "clat": the
runs before).
"""
import csv, glob, json, os, re, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profiles  # noqa: E402

COLUMNS = ("run_id,experiment,system,workload,bs,iodepth,jobs,paths,policy,mr,inval,runs,"
           "window_ios,ios_exact,sw_instr_per_io,sw_instr_min,sw_instr_max,"
           "instr_per_io,instr_min,instr_max,guest_ns_per_io,busy_pct,"
           "iops,bw_MBps,lat_mean_us,lat_p50_us,lat_p99_us,cpu_us_per_io,"
           "wr_per_io,pkts_per_io,ctxt_per_io,intr_per_io,blk_reqs_per_io,"
           "reqs_per_io,io_unit,lat_kind,git,date").split(",")
USER_HZ = 100
# Measures per cell, in cells.csv/aggregate.csv order.
METRICS = ["ios", "window_ms", "iops", "bw_MBps", "guest_ns_per_io", "instr_per_io",
           "sw_instr_per_io", "nic_instr_per_io", "busy_pct", "procstat_busy_pct",
           "cpu_us_per_io",
           "lat_mean_us", "lat_p50_us", "lat_p99_us", "pkts_per_io", "blk_reqs_per_io",
           "reqs_per_io", "forks",
           "ctxt_per_io", "intr_per_io", "mod_msgs_per_io", "mod_reg_wrs_per_io",
           "mod_local_invs_per_io", "mod_reg_mrs_per_io", "mod_inv_rsps_per_io"]
# Counters of our kernel client (tb-snap kv: files, its paths file in sysfs):
# key there -> measure here.
MOD_COUNTERS = (("msgs", "mod_msgs_per_io"), ("reg_wrs", "mod_reg_wrs_per_io"),
                ("local_invs", "mod_local_invs_per_io"), ("reg_mrs", "mod_reg_mrs_per_io"),
                ("inv_rsps", "mod_inv_rsps_per_io"))


def read_snap(path):
    vals = {}
    with open(path) as f:
        for line in f:
            k, v = line.split()
            vals[k] = float(v)
    return vals


def fio_metrics(path):
    """Latencies from fio's JSON (fio ran before and after the window: its
    percentiles are over its whole post-ramp run); IOPS only for systems
    without an IO counter."""
    with open(path) as f:
        txt = f.read()
    # fio prints a line when it is stopped, and may print warnings, first.
    j = json.loads(txt[txt.index("{"):])
    job = j["jobs"][0]
    iops = 0.0
    lat_n = 0
    lat_sum = 0.0
    p50 = p99 = None
    kind = None
    for d in ("read", "write", "trim"):
        s = job.get(d, {})
        if not s or not s.get("total_ios"):
            continue
        iops += s["iops"]
        n = s["total_ios"]
        lat_sum += s["lat_ns"]["mean"] * n
        lat_n += n
        for key, k in (("lat_ns", "total"), ("clat_ns", "clat")):
            pct = s.get(key, {}).get("percentile", {})
            if pct and p50 is None:
                p50 = pct.get("50.000000", 0) / 1e3
                p99 = pct.get("99.000000", 0) / 1e3
                kind = k
    return {"fio_iops": iops, "lat_kind": kind,
            "lat_mean_us": lat_sum / lat_n / 1e3 if lat_n else None,
            "lat_p50_us": p50, "lat_p99_us": p99}


def bs_bytes(bs):
    m = re.match(r"(\d+)([kKmM]?)$", bs)
    return int(m.group(1)) * {"": 1, "k": 1024, "K": 1024, "m": 1 << 20, "M": 1 << 20}[m.group(2)]


def cell_row(raw, base, bs, mode):
    m = fio_metrics(os.path.join(raw, base + ".json"))
    s = read_snap(os.path.join(raw, base + ".snap"))
    dt_ns = s["b_mono_ns"] - s["a_mono_ns"]
    if dt_ns <= 0:
        raise ValueError("%s: empty window" % base)
    if s.get("ios_from_fio"):
        ios = m["fio_iops"] * dt_ns / 1e9
        m["ios_exact"] = 0
    else:
        ios = s["b_ios"] - s["a_ios"]
        m["ios_exact"] = 1
        if ios < s.get("target_ios", 0):
            raise ValueError("%s: window has %d of its %d IOs" % (base, ios, s["target_ios"]))
        sectors = s.get("b_sectors", 0) - s.get("a_sectors", 0)
        if "b_sectors" not in s:
            m["io_unit"] = "request"
        elif sectors > 0:
            # a block device: its requests -> the user's IOs of bs bytes
            reqs = ios
            ios = sectors * 512.0 / bs_bytes(bs)
            m["reqs_per_io"] = reqs / ios if ios else None
            m["io_unit"] = "user"
        else:
            m["io_unit"] = "user"	# the engine's ios_file: fio's IOs
    m["jobs"] = int(s.get("jobs", 1))
    if "b_forks" in s:
        m["forks"] = s["b_forks"] - s["a_forks"]
    if ios <= 0:
        raise ValueError("%s: no IO in the window" % base)
    m["ios"] = ios
    m["window_ms"] = dt_ns / 1e6
    m["iops"] = ios * 1e9 / dt_ns
    m["bw_MBps"] = m["iops"] * bs_bytes(bs) / 1e6
    m["guest_ns_per_io"] = dt_ns / ios
    busy = s["b_cpu_busy"] - s["a_cpu_busy"]
    idle = s["b_cpu_idle"] - s["a_cpu_idle"]
    # /proc/stat's busy fraction (10 ms jiffies: coarse); the profile's
    # instruction count replaces it where the boot was profiled.
    ncpu = max(1, round((busy + idle) / (dt_ns / 1e9 * USER_HZ)))
    frac = busy / (busy + idle) if busy + idle else None
    if frac is not None:
        m["busy_pct"] = m["procstat_busy_pct"] = 100.0 * frac
        m["cpu_us_per_io"] = frac * ncpu * dt_ns / 1e3 / ios
    for k, name in (("pkts", "pkts_per_io"), ("ctxt", "ctxt_per_io"), ("intr", "intr_per_io")):
        m[name] = (s["b_" + k] - s["a_" + k]) / ios
    blk = s["b_blk"] - s["a_blk"]
    if blk > 0:
        m["blk_reqs_per_io"] = blk / ios
    for key, name in MOD_COUNTERS:
        if "b_kv_" + key in s:
            m[name] = (s["b_kv_" + key] - s["a_kv_" + key]) / ios
    if "b_wr_send" in s:
        m["wr_per_io"] = ((s["b_wr_send"] - s["a_wr_send"]) +
                          (s["b_wr_recv"] - s["a_wr_recv"])) / ios
    prof = os.path.join(raw, base + ".profile.json")
    if os.path.exists(prof):
        p = profiles.load(prof)
        m["instr_per_io"] = p["total"] / ios
        m["sw_instr_per_io"] = p["software"] / ios
        m["nic_instr_per_io"] = p["nic"] / ios
        # icount shift=0: one instruction is one ns of guest time, so the
        # instructions executed over the window's guest time are the busy
        # fraction (the rest is idle time the clock jumped over).
        if mode == "icount":
            m["busy_pct"] = 100.0 * p["total"] / dt_ns
            m["cpu_us_per_io"] = p["total"] / 1e3 / ios
        for comp, n in p["components"].items():
            m["comp_%s_per_io" % comp] = n / ios
        if not p["total"]:
            raise ValueError("%s: the profile's window holds no instruction" % base)
        if p["unclean"]:
            m["unclean"] = ", ".join("%s %d" % kv for kv in sorted(p["unclean"].items()))
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


def read_systems(raw):
    """systems.txt: "<system> <result-name> <paths> <policy> <mr> <inval>"
    as the run set them ('-': does not apply)."""
    out = {}
    p = os.path.join(raw, "systems.txt")
    if os.path.exists(p):
        with open(p) as f:
            for line in f:
                w = line.split()
                if len(w) == 6:
                    out[w[0]] = dict(zip(("system", "paths", "policy", "mr", "inval"),
                                         [x if x != "-" else "" for x in w[1:]]))
    return out


def boot_info(run_dir, phase):
    """How the guest ran, from the runner's files: QEMU's command line (mode,
    icount settings, CPU model and flags), the env it gave the guest (rxe
    MTU, PCLMUL) and what the guest saw (guest-info.txt)."""
    d = os.path.join(run_dir, phase)
    b = {"phase": phase}
    try:
        cmd = open(os.path.join(d, "qemu-cmdline")).read().split()
    except OSError:
        cmd = []
    for i, w in enumerate(cmd[:-1]):
        if w == "-icount":
            b["icount"] = cmd[i + 1]
        elif w == "-accel":
            b["accel"] = cmd[i + 1]
        elif w == "-cpu":
            b["qemu_cpu"] = cmd[i + 1]
        elif w == "-smp":
            b["vcpus"] = cmd[i + 1]
        elif w == "-m":
            b["mem_mb"] = cmd[i + 1]
        elif w == "-plugin":
            b["plugin"] = cmd[i + 1].split(",")[0]
    b.setdefault("icount", "off")
    try:
        for line in open(os.path.join(d, "env")):
            k, _, v = line.strip().partition("=")
            if k in ("TB_MODE", "TB_PATHS", "TB_MTU", "TB_PCLMUL", "TB_KVER", "TB_PROFILE"):
                b[k[3:].lower()] = v
    except OSError:
        pass
    gi = os.path.join(d, "raw", "guest-info.txt")
    if os.path.exists(gi):
        for line in open(gi):
            w = line.split()
            if line.startswith("model name"):
                b["guest_cpu_model"] = line.split(":", 1)[1].strip()
            elif len(w) == 3 and w[1] == "mtu":
                b.setdefault("rxe_active_mtu", {})[w[0]] = w[2]
            elif len(w) == 3 and w[1] == "netdev_mtu":
                b.setdefault("netdev_mtu", {})[w[0]] = w[2]
            elif line.strip() in ("pclmulqdq", "no pclmulqdq"):
                b["guest_pclmulqdq"] = line.strip() == "pclmulqdq"
            elif w and w[0] == "cpus":
                b["guest_cpus"] = w[1]
    return b


def write_summary(path, rows, run_id, experiment):
    """Rows of (run_id, experiment) replace that run's earlier rows; older
    files without run ids keep their rows (run_id = date-git)."""
    old = []
    if os.path.exists(path) and os.path.getsize(path):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if not r.get("run_id"):
                    r["run_id"] = "%s-%s" % (r.get("date", ""), r.get("git", ""))
                if (r["run_id"], r["experiment"]) == (run_id, experiment):
                    continue
                old.append(r)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in old:
            w.writerow({k: r.get(k, "") for k in COLUMNS})
        for r in rows:
            w.writerow({k: fmt(r.get(k)) for k in COLUMNS})


def main():
    run_dir, experiment, phase = sys.argv[1:4]
    append = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--append" else None
    compress = "--compress" in sys.argv[4:]
    # --partial: the boot failed; a cell it left unfinished is listed in
    # PHASE/incomplete-cells.txt and left out instead of failing the summary
    partial = "--partial" in sys.argv[4:]
    raw = os.path.join(run_dir, phase, "raw")
    meta_path = os.path.join(run_dir, "meta.json")
    meta = json.load(open(meta_path))
    run_id = os.path.basename(os.path.normpath(run_dir))
    boot = boot_info(run_dir, phase)
    if partial:
        boot["failed"] = True	# the boot did not end by itself: see its console.log
    with open(os.path.join(run_dir, phase, "boot.json"), "w") as f:
        json.dump(boot, f, indent=2)
    meta.setdefault("boots", {})[phase] = boot
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
    systems = read_systems(raw)
    profiles.attribute_run(raw)
    cells, wr = {}, {}
    comps = set()
    unclean = []
    incomplete = []
    for js in sorted(glob.glob(os.path.join(raw, "*__*.json"))):
        base = os.path.basename(js)[:-5]
        if base.endswith(".profile"):
            continue
        system, workload, bs, qd, run = base.split("__")
        key = (system, workload, bs, qd)
        try:
            m = cell_row(raw, base, bs, re.sub(r"\d+$", "", phase))
        except (OSError, ValueError, KeyError) as e:
            if not partial:
                raise
            # the boot stopped inside this cell (crash, hang, timeout)
            incomplete.append("%s: %s" % (base, e))
            continue
        comps.update(k for k in m if k.startswith("comp_"))
        if m.get("unclean"):
            # work of no IO in the window (attribute.py UNCLEAN_FUNCTIONS):
            # left out of every aggregate, listed
            unclean.append("%s: %s" % (base, m["unclean"]))
            continue
        if run.startswith("wr"):	# "wr" (one pass, older runs) or wr1, wr2, ...
            if m.get("wr_per_io") is not None:
                wr.setdefault(key, []).append(m["wr_per_io"])
        else:
            cells.setdefault(key, []).append((run, m))
    metrics = METRICS + ["ios_exact"] + sorted(comps)
    out = os.path.join(run_dir, phase)
    with open(os.path.join(out, "unclean-cells.txt"), "w") as f:
        for line in unclean:
            f.write(line + "\n")
    for line in unclean:
        print("%s/%s: window not clean, left out: %s" % (experiment, phase, line),
              file=sys.stderr)
    if partial:
        with open(os.path.join(out, "incomplete-cells.txt"), "w") as f:
            for line in incomplete:
                f.write(line + "\n")
        for line in incomplete:
            print("%s/%s: the boot stopped in this cell, left out: %s"
                  % (experiment, phase, line), file=sys.stderr)
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
                   ["wr_per_io", "wr_per_io_min", "wr_per_io_max", "wr_runs", "io_unit",
                    "lat_kind"])
        for key, runs in sorted(cells.items()):
            agg = {}
            row = list(key) + [len(runs)]
            for k in metrics:
                vals = [m[k] for _, m in runs if m.get(k) is not None]
                med = statistics.median(vals) if vals else None
                agg[k] = (med, min(vals) if vals else None, max(vals) if vals else None)
                row += [fmt(x) for x in agg[k]]
            wrs = wr.get(key, [])
            wr_med = statistics.median(wrs) if wrs else None
            units = {k: ",".join(sorted({m[k] for _, m in runs if m.get(k)}))
                     for k in ("io_unit", "lat_kind")}
            row += [fmt(wr_med), fmt(min(wrs) if wrs else None),
                    fmt(max(wrs) if wrs else None), len(wrs), units["io_unit"],
                    units["lat_kind"]]
            w.writerow(row)
            system, workload, bs, qd = key
            desc = systems.get(system, {"system": system, "paths": "1"})
            r = {"workload": workload, "bs": bs, "iodepth": qd,
                 "jobs": int(statistics.median(m.get("jobs", 1) for _, m in runs)),
                 "runs": len(runs), "wr_per_io": wr_med,
                 "window_ios": agg["ios"][0], "ios_exact": agg["ios_exact"][1]}
            r.update(desc)
            for k in ("iops", "bw_MBps", "lat_mean_us", "lat_p50_us", "lat_p99_us",
                      "cpu_us_per_io", "guest_ns_per_io", "busy_pct", "pkts_per_io",
                      "ctxt_per_io", "intr_per_io", "blk_reqs_per_io", "reqs_per_io"):
                r[k] = agg[k][0]
            r.update(units)
            r["sw_instr_per_io"], r["sw_instr_min"], r["sw_instr_max"] = agg["sw_instr_per_io"]
            r["instr_per_io"], r["instr_min"], r["instr_max"] = agg["instr_per_io"]
            summary.append(r)
    for r in perftest_rows(raw):
        r.update({"jobs": 1, "runs": 1})
        summary.append(r)
    for r in summary:
        r.update({"experiment": "%s/%s" % (experiment, phase), "git": meta["git"],
                  "date": meta["date"], "run_id": run_id})
    if append:
        write_summary(append, summary, run_id, "%s/%s" % (experiment, phase))
    if compress:
        profiles.compress_run(raw)
    print("%s/%s: %d cells, %d summary rows" % (experiment, phase,
          sum(len(v) for v in cells.values()), len(summary)))


if __name__ == "__main__":
    main()
