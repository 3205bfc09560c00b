#!/usr/bin/env bash
# experiments-pipeline - the results pipeline on a synthetic run: summarize.py
# turns raw fio JSON + counter snapshots into cells/aggregate/summary rows
# with the right per-IO arithmetic, and plot.py draws from the summary.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=$tmp/E99/run1
raw=$run/icount/raw
mkdir -p "$raw"
echo '{"git": "abc1234", "date": "2026-11-29T00:00:00Z"}' >"$run/meta.json"
fio_json() {	# IOPS LAT_NS
	printf 'fio: a warning line\n{"jobs": [{"read": {"total_ios": 1000, "iops": %s, "bw_bytes": 4096000, "lat_ns": {"mean": %s}, "clat_ns": {"percentile": {"50.000000": 20000, "99.000000": 90000}}}, "write": {"total_ios": 0}}]}\n' "$1" "$2"
}
snap() {	# IOS BUSY_JIFFIES
	printf 'a_uptime 10.0\na_cpu_busy 100\na_cpu_idle 50\na_ctxt 0\na_ios 0\na_pkts 0\n'
	printf 'b_uptime 11.0\nb_cpu_busy %s\nb_cpu_idle %s\nb_ctxt 2000\nb_ios %s\nb_pkts %s\n' "$((100 + $2))" "$((50 + 100 - $2))" "$1" "$((4 * $1))"
}
# nvme-rdma, 3 runs at 9000, 10000, 11000 IOPS over a 1 s window with 45, 60,
# 77 jiffies busy -> 50, 60, 70 us/IO; null_blk saw 2 requests per IO.
for r in 1 2 3; do
	fio_json $((8000 + 1000 * r)) 30000 >"$raw/nvme_rdma__randread__4k__32__r$r.json"
	snap $((2 * (8000 + 1000 * r))) $(((8000 + 1000 * r) * (40 + 10 * r) / 10000)) \
		>"$raw/nvme_rdma__randread__4k__32__r$r.snap"
done
fio_json 500 30000 >"$raw/rnbd2__randread__4k__32__r1.json"
snap 5000 40 >"$raw/rnbd2__randread__4k__32__r1.snap"
out=$(/usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E99 icount --append "$tmp/summary.csv" 2>&1)
rc=$?
ok=1
if [ $rc = 0 ]; then
	row=$(grep '^E99/icount,nvme-rdma,randread' "$tmp/summary.csv")
	# iops median 10000, runs 3, cpu_us_per_io median 60, p50 20 us
	IFS=, read -r e s w bs qd jobs paths pol mr inval runs iops bw lm p50 p99 cpu wr git date <<<"$row"
	[ "$runs" = 3 ] && [ "$iops" = 10000.00 ] && [ "$cpu" = 60.00 ] && [ "$p50" = 20.00 ] &&
		[ "$paths" = 1 ] && [ "$git" = abc1234 ] && ok=0
	grep -q '^E99/icount,rnbd,randread,4k,32,1,2,' "$tmp/summary.csv" || ok=1
	grep -q '^nvme_rdma,randread,4k,32,3,10000.00,9000.00,11000.00' "$run/icount/aggregate.csv" || ok=1
	# cpu_us_per_io min 50, max 70; blk_reqs_per_io 2
	grep '^nvme_rdma,' "$run/icount/cells.csv" | cut -d, -f11 | sort | tr '\n' ' ' | grep -q '^50.00 60.00 70.00 $' || ok=1
	grep '^nvme_rdma,' "$run/icount/cells.csv" | cut -d, -f13 | sort -u | grep -qx '2.00' || ok=1
fi
if [ $ok = 0 ]; then echo "PASS: experiments-pipeline: summarize"; else
	echo "FAIL: experiments-pipeline: summarize: rc=$rc $out"; cat "$tmp/summary.csv" "$run/icount/aggregate.csv" 2>/dev/null; fi

# A cell without IO in its window is an error, not a zero.
fio_json 0 0 >"$raw/rnbd2__randread__4k__32__r1.json"
if /usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E99 icount >/dev/null 2>&1; then
	echo "FAIL: experiments-pipeline: a window without IO was accepted"
else echo "PASS: experiments-pipeline: a window without IO is an error"; fi

# report.py: medians, spreads and the nvme-rdma vs rnbd verdict.
mkdir -p "$tmp/rep/E01-baseline/run1"
cp -r "$run/icount" "$tmp/rep/E01-baseline/run1/"
sed -i 's/^rnbd2,/rnbd1,/' "$tmp/rep/E01-baseline/run1/icount/aggregate.csv"
rep=$(/usr/bin/python3 "$top/experiments/lib/report.py" "$tmp/rep" 2>&1)
if grep -q 'randread 4k QD32 CPU us/IO: nvme-rdma 60.0' <<<"$rep" && [ -s "$tmp/rep/E01-baseline/run1/report.md" ]; then
	echo "PASS: experiments-pipeline: report"
else echo "FAIL: experiments-pipeline: report: $rep"; fi

# plot.py draws from a summary with E01 rows.
sed 's#^E99/icount#E01-baseline/icount#' "$tmp/summary.csv" >"$tmp/res-summary.csv"
mkdir -p "$tmp/res" && mv "$tmp/res-summary.csv" "$tmp/res/summary.csv"
if /usr/bin/python3 "$top/plots/plot.py" --results "$tmp/res" --out "$tmp/out" >/dev/null 2>&1 &&
	[ -s "$tmp/out/cpu_per_io.png" ] && [ -s "$tmp/out/cpu_per_io.pdf" ]; then
	echo "PASS: experiments-pipeline: plot"
else echo "FAIL: experiments-pipeline: plot.py drew no cpu_per_io figure"; fi
