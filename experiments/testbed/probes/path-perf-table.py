#!/usr/bin/python3
"""path-perf-table.py DIR - the README of a path-perf-run.sh result: one
table, one row per metric and path, the single guest beside the two guests,
every number read from DIR/{one-guest,two-hosts}/results.txt."""
import os, sys

METRICS = [
    ("send_lat_tmin_us", "ib_send_lat 2 B t_min (µs)"),
    ("send_lat_typical_us", "ib_send_lat 2 B t_typical (µs)"),
    ("send_lat_avg_us", "ib_send_lat 2 B t_avg (µs)"),
    ("send_lat_p99_us", "ib_send_lat 2 B 99 % (µs)"),
    ("write_bw_64k_MBps", "ib_write_bw 64 KiB (MB/s)"),
    ("fio_4k_qd1_clat_p50_us", "fio engine 4k randread QD1 clat p50 (µs)"),
    ("fio_4k_qd1_clat_mean_us", "fio engine 4k randread QD1 clat mean (µs)"),
    ("fio_4k_qd1_clat_p99_us", "fio engine 4k randread QD1 clat p99 (µs)"),
    ("fio_4k_qd1_iops", "fio engine 4k randread QD1 (IOPS)"),
    ("fio_128k_qd8_MBps", "fio engine 128k read QD8 (MB/s)"),
]


def load(path):
    r = {}
    with open(path) as f:
        for line in f:
            p, k, v = line.split()
            r[(int(p), k)] = float(v)
    return r


def main():
    d = sys.argv[1]
    one = load(os.path.join(d, "one-guest", "results.txt"))
    two = load(os.path.join(d, "two-hosts", "results.txt"))
    shp_file = os.path.join(d, "two-hosts-shaped", "results.txt")
    shp = load(shp_file) if os.path.exists(shp_file) else None
    meta = open(os.path.join(d, "meta.txt")).read().strip().splitlines()
    paths = sorted({p for p, _ in one} | {p for p, _ in two})
    print("# Per-path latency and bandwidth: one guest vs two guests\n")
    print("Made by `experiments/testbed/probes/path-perf-run.sh` (table: `path-perf-table.py`).")
    print("Both modes: MTTCG (wall clock, no icount), 2 paths, MTU 1500, `-cpu qemu64`.")
    print("One guest: 2 vCPUs, client and server in one kernel, each path a dummy netdev.")
    print("Two guests: 1 vCPU each, each path a virtio-net link (QEMU dgram on 127.0.0.1).")
    print("One run each, so no spread is given; wall-clock figures under TCG vary by")
    print("±10-20 % between runs on this 2-core host. Each fio job ran 3 s over one path.\n")
    for line in meta:
        print("- " + line)
    print()
    shaped = {p: v for (p, k), v in (shp or {}).items() if k == "shaped_to_mbit"}
    extra = ""
    if shp:
        extra = " two guests, %s |" % ", ".join(
            "path %d shaped to %g Mbit/s both ways" % (p, v) for p, v in sorted(shaped.items()))
        print("The last column is a third run: two guests with `paths.sh shape` (a tbf qdisc "
              "on each side's NIC of the path).\n")
    print("| metric | path | one guest | two guests | two / one |" + extra)
    print("|---|---|---|---|---|" + ("---|" if shp else ""))
    f = lambda v: "%.1f" % v if v is not None else "-"
    for k, name in METRICS:
        for p in paths:
            a, b = one.get((p, k)), two.get((p, k))
            ratio = "%.2f" % (b / a) if a and b else "-"
            row = "| %s | %d | %s | %s | %s |" % (name, p, f(a), f(b), ratio)
            if shp:
                row += " %s |" % f(shp.get((p, k)))
            print(row)


if __name__ == "__main__":
    main()
