#!/usr/bin/env bash
# experiments-pipeline - the results pipeline on a synthetic run: summarize.py
# turns counter snapshots (tb-snap's format), fio JSON and window profiles
# into cells/aggregate/summary rows with exact per-IO arithmetic (Δcounter /
# ΔIOs of the same instants), report.py gives honest verdicts, and plot.py
# draws from the run. Also checks tb-snap's window on a live counter file.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=$tmp/E01-baseline/run1
raw=$run/icount/raw
mkdir -p "$raw"
echo '{"git": "abc1234", "date": "2026-11-29T00:00:00Z"}' >"$run/meta.json"
printf 'tb-snap-test\n' >/dev/null
cat >"$raw/systems.txt" <<'EOT'
nvme_rdma nvme-rdma 1 - frwr remote
rnbd1 rnbd 1 min-inflight frwr always
ibtrs2 ibtrs-fio 2 round-robin mw remote
EOT
fio_json() {	# P50_NS
	printf '\nfio: terminating on signal 15\n{"jobs": [{"error": 0, "read": {"total_ios": 1000, "iops": 1234.5, "bw_bytes": 1, "lat_ns": {"mean": 30000}, "clat_ns": {"percentile": {"50.000000": %s, "99.000000": 90000}}}, "write": {"total_ios": 0}}]}\n' "$1"
}
snap() {	# IOS NS TARGET [WR_SEND WR_RECV]
	printf 'window 0\ntarget_ios %s\n' "$3"
	printf 'a_mono_ns 1000\na_cpu_busy 100\na_cpu_idle 50\na_ctxt 10\na_intr 0\na_ios 500\na_blk 7\na_pkts 0\na_pkts_rcvd 0\n'
	printf 'b_mono_ns %s\nb_cpu_busy 200\nb_cpu_idle 50\nb_ctxt %s\nb_intr %s\nb_ios %s\nb_blk %s\nb_pkts %s\nb_pkts_rcvd 0\n' \
		"$((1000 + $2))" "$((10 + 3 * $1))" "$((2 * $1))" "$((500 + $1))" "$((7 + $1))" "$((6 * $1))"
	if [ $# -ge 5 ]; then
		printf 'a_wr_send 100\na_wr_recv 100\nb_wr_send %s\nb_wr_recv %s\n' "$((100 + $4))" "$((100 + $5))"
	fi
}
profile() {	# TOTAL NIC
	printf '{"total_insns": %s, "nic_insns": %s, "software_insns": %s, "components": {"nic": %s, "block": %s}, "top_functions": []}\n' \
		"$1" "$2" "$(($1 - $2))" "$2" "$(($1 - $2))"
}
# nvme-rdma: 3 runs of 2000 IOs with 106, 110, 110.2 M instructions, 40 M
# of them NIC -> software 33, 35, 35.1 k per IO (spread 6 %); guest time
# 2 ms per window.
nv_total=(0 106000000 110000000 110200000)
for r in 1 2 3; do
	c=$raw/nvme_rdma__randread__4k__32__r$r
	fio_json 20000 >"$c.json"
	snap 2000 2000000 2000 >"$c.snap"
	profile "${nv_total[r]}" 40000000 >"$c.profile.json"
done
# The work-request pass: 10 WRs per read (6 send + 4 receive) exactly.
fio_json 20000 >"$raw/nvme_rdma__randread__4k__32__wr.json"
snap 1000 1000000 1000 6000 4000 >"$raw/nvme_rdma__randread__4k__32__wr.snap"
# rnbd: +1.8 % from nvme-rdma, its range (35.63 k) apart from nvme's
# (33-35.1 k) but the difference is inside nvme's 6 % spread: not separated.
# ibtrs2: clearly apart.
for r in 1 2 3; do
	c=$raw/rnbd1__randread__4k__32__r$r
	fio_json 20000 >"$c.json"
	snap 2000 2000000 2000 >"$c.snap"
	profile $((40000000 + 71260000 + 2000 * r)) 40000000 >"$c.profile.json"
	c=$raw/ibtrs2__randread__4k__32__r$r
	fio_json 20000 >"$c.json"
	snap 2000 2000000 2000 >"$c.snap"
	profile $((40000000 + 200000000 + 200000 * r)) 40000000 >"$c.profile.json"
done
sum() { /usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E01-baseline icount --append "$tmp/summary.csv" 2>&1; }
out=$(sum)
rc=$?
ok=1
if [ $rc = 0 ]; then
	row=$(grep ',E01-baseline/icount,nvme-rdma,randread' "$tmp/summary.csv")
	col() { head -1 "$tmp/summary.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
	get() { cut -d, -f"$(col "$1")" <<<"$row"; }
	[ "$(get runs)" = 3 ] && [ "$(get sw_instr_per_io)" = 35000.00 ] &&
		[ "$(get sw_instr_min)" = 33000.00 ] && [ "$(get sw_instr_max)" = 35100.00 ] &&
		[ "$(get instr_per_io)" = 55000.00 ] && [ "$(get wr_per_io)" = 10.00 ] &&
		[ "$(get pkts_per_io)" = 6.00 ] && [ "$(get ctxt_per_io)" = 3.00 ] &&
		[ "$(get intr_per_io)" = 2.00 ] && [ "$(get blk_reqs_per_io)" = 1.00 ] &&
		[ "$(get guest_ns_per_io)" = 1000.00 ] && [ "$(get iops)" = 1000000.00 ] &&
		[ "$(get busy_pct)" = 5500.00 ] && [ "$(get run_id)" = run1 ] &&
		[ "$(get mr)" = frwr ] && [ "$(get inval)" = remote ] && [ "$(get lat_p50_us)" = 20.00 ] && ok=0
	row=$(grep ',E01-baseline/icount,ibtrs-fio,randread' "$tmp/summary.csv")
	[ "$(get paths)" = 2 ] && [ "$(get policy)" = round-robin ] || ok=1
	grep -q '^nvme_rdma,randread,4k,32,r1,2000.00,' "$run/icount/cells.csv" || ok=1
fi
if [ $ok = 0 ]; then echo "PASS: experiments-pipeline: summarize (exact per-IO counters, software instructions)"; else
	echo "FAIL: experiments-pipeline: summarize: rc=$rc $out"; cat "$tmp/summary.csv"; fi

# The IO is fio's: a device that splits every 128 KiB IO in two counts
# 4000 requests for 2000 IOs; its sectors (2000 x 256) give the IOs, the
# requests per IO are reported beside (2.00), and per-IO figures divide by
# 2000 (220 M instructions: 110 k per IO, not 55 k). Total latency
# (lat_ns percentiles, fio --lat_percentiles=1) is preferred to clat.
# The work-request pass in 3 runs (wr1..wr3: 18, 20, 24 WRs per user IO:
# 9, 10, 12 k WRs over 500 IOs of sectors): median 20.
mkdir -p "$tmp/u/icount/raw"
cp "$run/meta.json" "$tmp/u/"
ur=$tmp/u/icount/raw
printf 'rnbd1 rnbd 1 min-inflight frwr always\n' >"$ur/systems.txt"
for r in 1 2 3; do
	c=$ur/rnbd1__seqread__128k__8__r$r
	printf '{"jobs": [{"error": 0, "read": {"total_ios": 9, "iops": 1.0, "lat_ns": {"mean": 70000, "percentile": {"50.000000": 65000, "99.000000": 99000}}, "clat_ns": {"percentile": {"50.000000": 7000, "99.000000": 9000}}}}]}\n' >"$c.json"
	{ snap 4000 2000000 4000; printf 'a_sectors 1000\nb_sectors %s\na_forks 5\nb_forks 5\n' $((1000 + 2000 * 256)); } >"$c.snap"
	profile 220000000 20000000 >"$c.profile.json"
done
# Run 3's window is not clean (a fork ran in it: copy_page_range in the
# profile): left out (2 runs), listed in unclean-cells.txt.
printf '{"total_insns": 330000000, "nic_insns": 20000000, "software_insns": 310000000, "components": {"nic": 20000000, "block": 310000000}, "top_functions": [], "unclean": {"copy_page_range": 5000}}\n' \
	>"$ur/rnbd1__seqread__128k__8__r3.profile.json"
for r in 1 2 3; do
	c=$ur/rnbd1__seqread__128k__8__wr$r
	cp "$ur/rnbd1__seqread__128k__8__r1.json" "$c.json"
	w=(0 9 10 12)
	{ snap 1000 1000000 1000 $((600 * w[r] / 10 * 10)) $((400 * w[r] / 10 * 10)); printf 'a_sectors 0\nb_sectors %s\n' $((500 * 256)); } >"$c.snap"
done
if /usr/bin/python3 "$top/experiments/lib/summarize.py" "$tmp/u" E01-baseline icount --append "$tmp/u.csv" >/dev/null 2>&1; then
	row=$(grep ',rnbd,seqread' "$tmp/u.csv")
	colu() { head -1 "$tmp/u.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
	getu() { cut -d, -f"$(colu "$1")" <<<"$row"; }
	if [ "$(getu window_ios)" = 2000.00 ] && [ "$(getu reqs_per_io)" = 2.00 ] &&
	   [ "$(getu sw_instr_per_io)" = 100000.00 ] && [ "$(getu io_unit)" = user ] &&
	   [ "$(getu lat_kind)" = total ] && [ "$(getu lat_p50_us)" = 65.00 ] &&
	   [ "$(getu wr_per_io)" = 20.00 ] && [ "$(getu runs)" = 2 ] &&
	   grep -q '^rnbd1__seqread__128k__8__r3: copy_page_range 5000$' "$tmp/u/icount/unclean-cells.txt" && tr -d '\r' <"$tmp/u/icount/aggregate.csv" | grep -q ',3,user,total$'; then
		echo "PASS: experiments-pipeline: per user IO (sectors / bs), requests per IO beside, total latency, WR pass over runs, an unclean window left out"
	else echo "FAIL: experiments-pipeline: per user IO: $(head -1 "$tmp/u.csv") / $row"; fi
else echo "FAIL: experiments-pipeline: summarize of the 128k split run failed"; fi

# A boot that stopped inside a cell (fio's JSON cut short, no snapshot):
# without --partial the summary fails; with it the cell is listed in
# incomplete-cells.txt, the finished cells are summarized and boot.json
# says the boot failed.
mkdir -p "$tmp/p/icount"
cp "$run/meta.json" "$tmp/p/" && cp -r "$run/icount/raw" "$tmp/p/icount/"
printf 'fio: terminating on signal 2\n' >"$tmp/p/icount/raw/nvme_rdma__randread__4k__32__wr9.json"
if /usr/bin/python3 "$top/experiments/lib/summarize.py" "$tmp/p" E01-baseline icount >/dev/null 2>&1; then
	echo "FAIL: experiments-pipeline: an unfinished cell was summarized without --partial"
elif /usr/bin/python3 "$top/experiments/lib/summarize.py" "$tmp/p" E01-baseline icount --partial >/dev/null 2>&1 &&
	grep -q '^nvme_rdma__randread__4k__32__wr9: ' "$tmp/p/icount/incomplete-cells.txt" &&
	grep -q '^nvme_rdma,randread,4k,32,r1,' "$tmp/p/icount/cells.csv" &&
	grep -q '"failed": true' "$tmp/p/icount/boot.json"; then
	echo "PASS: experiments-pipeline: a failed boot's unfinished cell is listed, its finished cells summarized (--partial)"
else echo "FAIL: experiments-pipeline: --partial: $(cat "$tmp/p/icount/incomplete-cells.txt" 2>&1)"; fi

# Summarizing the same run again replaces its rows: no duplicate cell.
sum >/dev/null
n=$(grep -c ',E01-baseline/icount,nvme-rdma,randread,4k,32,' "$tmp/summary.csv")
if [ "$n" = 1 ]; then echo "PASS: experiments-pipeline: a run's rows appear once per run id"
else echo "FAIL: experiments-pipeline: $n rows for one cell after summarizing twice"; fi
grep -q '"icount": "off"\|"phase": "icount"' "$run/meta.json" &&
	echo "PASS: experiments-pipeline: meta.json records the boot" ||
	echo "FAIL: experiments-pipeline: meta.json has no boot record"

# report.py: rnbd vs nvme-rdma within the spread is NOT separated; ibtrs2
# vs rnbd1 are different systems here but ibtrs2 vs nvme is not a pair; the
# pair rnbd2/ibtrs2 is absent. Check the verdict logic on nvme vs rnbd and
# on a clearly apart pair (rename ibtrs2 -> ibtrs1).
rep=$(/usr/bin/python3 "$top/experiments/lib/report.py" "$run/" 2>&1)
if grep -q 'randread 4k QD32 software instr/IO: nvme-rdma 35000, rnbd 35[0-9]*: +[0-9.]* % .* -> NOT separated' <<<"$rep"; then
	echo "PASS: experiments-pipeline: report: a difference inside the spread is not separated"
else echo "FAIL: experiments-pipeline: report (inside spread): $rep"; fi
for f in "$raw"/ibtrs2__*; do mv "$f" "${f/ibtrs2__/ibtrs1__}"; done
sed -i 's/^ibtrs2 /ibtrs1 /' "$raw/systems.txt"
/usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E01-baseline icount >/dev/null 2>&1
rep=$(/usr/bin/python3 "$top/experiments/lib/report.py" "$run/" 2>&1)
if grep -q 'randread 4k QD32 software instr/IO: rnbd [0-9]*, ibtrs-fio 2p 10[0-9]*: +[0-9.]* % .* -> separated' <<<"$rep" &&
   grep -q 'Precision of this boot' <<<"$rep"; then
	echo "PASS: experiments-pipeline: report: apart ranges beyond the spread are separated"
else echo "FAIL: experiments-pipeline: report (apart): $rep"; fi

# A second icount boot: the report adds verdicts across boots. In boot 2
# ibtrs-fio runs 5 % higher (an across-boot spread of ~5 %) and stays
# apart from rnbd (+180 %); rnbd drifts +3 % away from nvme-rdma (its
# boot-2 range apart from nvme's), a difference inside the across-boot
# spread: NOT separated.
cp -r "$run/icount" "$run/icount2"
for r in 1 2 3; do
	profile $(( (40000000 + 200000000 + 200000 * r) * 105 / 100 )) 40000000 >"$run/icount2/raw/ibtrs1__randread__4k__32__r$r.profile.json"
	profile $(( (71260000 + 2000 * r) * 103 / 100 + 40000000 )) 40000000 >"$run/icount2/raw/rnbd1__randread__4k__32__r$r.profile.json"
done
# rnbd2 vs ibtrs2 (QD1): within each boot a 1.5 % and a 0.4 % gap with
# spreads of 0.01 %, every run apart; but rnbd2 moved 1.2 % between the
# boots, more than the 0.9 % gap of the boot medians: NOT separated.
printf 'rnbd2 rnbd 2 min-inflight frwr always\nibtrs2 ibtrs-fio 2 round-robin mw remote\n' |
	tee -a "$raw/systems.txt" >>"$run/icount2/raw/systems.txt"
for r in 1 2 3; do
	for b in "icount 100000 101500" "icount2 101200 101600"; do
		set -- $b
		for sv in "rnbd2 $2" "ibtrs2 $3"; do
			set -- $1 $sv
			c=$run/$1/raw/$2__randread__4k__1__r$r
			fio_json 20000 >"$c.json"
			snap 2000 2000000 2000 >"$c.snap"
			profile $(( 2000 * ($3 + r) + 40000000 )) 40000000 >"$c.profile.json"
		done
	done
done
rm -f "$run/icount/aggregate.csv" "$run/icount2/aggregate.csv"
/usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E01-baseline icount >/dev/null 2>&1
/usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E01-baseline icount2 >/dev/null 2>&1
rep=$(/usr/bin/python3 "$top/experiments/lib/report.py" "$run/" 2>&1)
if grep -q '^## Across the 2 icount boots (icount, icount2)' <<<"$rep" &&
   grep -q 'randread 4k QD32 software instr/IO: rnbd [0-9]*, ibtrs-fio 2p [0-9]*: +[0-9.]* % (largest spread [0-9.]* %; 6 and 6 runs over 2 boots) -> separated' <<<"$rep" &&
   grep -q 'randread 4k QD32 software instr/IO: nvme-rdma 35000, rnbd [0-9]*: +[0-9.]* % .*over 2 boots) -> NOT separated' <<<"$rep" &&
   grep -q 'randread 4k QD1 software instr/IO: rnbd 2p 1006[0-9]*, ibtrs-fio 2p 1015[0-9]*: +0.9 % (largest spread 1.19 %; 6 and 6 runs over 2 boots) -> NOT separated' <<<"$rep" &&
   sed -n '/^## icount boot/,/^## icount2 boot/p' <<<"$rep" | grep -q 'randread 4k QD1 software instr/IO: rnbd 2p [0-9]*, ibtrs-fio 2p [0-9]*: +1.5 % .* -> separated' &&
   grep -q '^## icount2 boot' <<<"$rep"; then
	echo "PASS: experiments-pipeline: report: verdicts across boots"
else echo "FAIL: experiments-pipeline: report across boots: $(grep -A30 'Across' <<<"$rep")"; fi

# A wall-clock (mttcg) boot: the host drifts by up to +-30 % from run to
# run, and in every run ibnbd's window takes 0.95x nvme-rdma's time (5.3 %
# more IOPS): each system's range covers the other's (NOT separated by
# spread), but the per-run ratios all lie above 1: separated over 6 pairs,
# "too few" over 3, NOT separated when one pair is turned around.
paired() {	# RUNS [FLIP_RUN]: the report's ibnbd/nvme-rdma IOPS line
	local m=$tmp/m/mttcg/raw r ns
	rm -rf "$tmp/m"; mkdir -p "$m"
	cp "$run/meta.json" "$tmp/m/"
	printf 'nvme_rdma nvme-rdma 1 - frwr remote
ibnbd1 ibnbd 1 round-robin frwr remote
' >"$m/systems.txt"
	local drift=(0 100 130 70 115 85 100)
	for ((r = 1; r <= $1; r++)); do
		ns=$((20000 * drift[r]))
		fio_json 20000 >"$m/nvme_rdma__randread__4k__1__r$r.json"
		fio_json 20000 >"$m/ibnbd1__randread__4k__1__r$r.json"
		if [ "$r" = "${2:-0}" ]; then
			snap 2000 $((ns * 100 / 95)) 2000 >"$m/ibnbd1__randread__4k__1__r$r.snap"
		else
			snap 2000 $((ns * 95 / 100)) 2000 >"$m/ibnbd1__randread__4k__1__r$r.snap"
		fi
		snap 2000 "$ns" 2000 >"$m/nvme_rdma__randread__4k__1__r$r.snap"
	done
	/usr/bin/python3 "$top/experiments/lib/summarize.py" "$tmp/m" E01-baseline mttcg >/dev/null 2>&1 ||
		echo "summarize failed"
	/usr/bin/python3 "$top/experiments/lib/report.py" "$tmp/m/" 2>&1 |
		grep -e 'randread 4k QD1 IOPS: ibnbd / nvme-rdma' -e 'randread 4k QD1 IOPS: nvme-rdma [0-9]*, ibnbd'
}
p6=$(paired 6) p3=$(paired 3) p6f=$(paired 6 4)
if grep -q 'IOPS: nvme-rdma [0-9]*, ibnbd [0-9]*: +[0-9.]* % .* -> NOT separated' <<<"$p6" &&
   grep -q 'ibnbd / nvme-rdma = 1.053 \[1.053-1.053\] (6 pairs) -> separated (higher in all 6 pairs)' <<<"$p6" &&
   grep -q '(3 pairs) -> NOT separated (higher in all 3 pairs, too few: p = 0.25)' <<<"$p3" &&
   grep -q 'ibnbd / nvme-rdma = 1.053 \[0.950-1.053\] (6 pairs) -> NOT separated$' <<<"$p6f"; then
	echo "PASS: experiments-pipeline: report: paired runs of a wall-clock boot (6 pairs on one side separated, 3 too few, one turned around not)"
else echo "FAIL: experiments-pipeline: report paired: [$p6] [$p3] [$p6f]"; fi

# plot.py draws the primary figure from the run.
if /usr/bin/python3 "$top/plots/plot.py" --results "$tmp" --out "$tmp/out" >/dev/null 2>&1 &&
	[ -s "$tmp/out/sw_instr_per_io.png" ] && [ -s "$tmp/out/instr_breakdown.pdf" ]; then
	echo "PASS: experiments-pipeline: plot"
else echo "FAIL: experiments-pipeline: plot.py drew no sw_instr_per_io/instr_breakdown figure"; fi

# A window short of its target IOs, or without IO, is an error, not a number.
snap 1500 2000000 2000 >"$raw/rnbd1__randread__4k__32__r1.snap"
if /usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E01-baseline icount >/dev/null 2>&1; then
	echo "FAIL: experiments-pipeline: a window short of its IOs was accepted"
else echo "PASS: experiments-pipeline: a window short of its IOs is an error"; fi
snap 0 2000000 0 >"$raw/rnbd1__randread__4k__32__r1.snap"
if /usr/bin/python3 "$top/experiments/lib/summarize.py" "$run" E01-baseline icount >/dev/null 2>&1; then
	echo "FAIL: experiments-pipeline: a window without IO was accepted"
else echo "PASS: experiments-pipeline: a window without IO is an error"; fi

# tb-snap on the host: a window over a live u64 counter file closes after
# its target and records the counts at its two instants.
make -s -C "$top/experiments/lib" >/dev/null 2>&1 || echo "FAIL: experiments-pipeline: tb-snap does not build"
cnt=$tmp/ios
/usr/bin/python3 - "$cnt" <<'EOT' &
import struct, sys, time
with open(sys.argv[1], "wb") as f:
    for i in range(4000):
        f.seek(0); f.write(struct.pack("<Q", i)); f.flush(); time.sleep(0.0005)
EOT
wpid=$!
sleep 0.2
reply=$(printf 'window %s 300 5000 u64:%s\nquit\n' "$tmp/w.snap" "$cnt" | "$top/build/experiments/tb-snap")
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
a=$(awk '$1=="a_ios"{print $2}' "$tmp/w.snap" 2>/dev/null)
b=$(awk '$1=="b_ios"{print $2}' "$tmp/w.snap" 2>/dev/null)
if [[ $reply == ok* ]] && [ -n "$a" ] && [ $((b - a)) -ge 300 ] && [ "${reply#ok }" != "${reply}" ] &&
   [ "$(cut -d' ' -f2 <<<"$reply")" = $((b - a)) ]; then
	echo "PASS: experiments-pipeline: tb-snap window on a live counter ($((b - a)) IOs)"
else echo "FAIL: experiments-pipeline: tb-snap: reply '$reply', a=$a b=$b"; fi
# kv: counter files (our kernel client's per-path counters) are sampled
# at the same two instants: a writer keeps msgs = 2 * IOs split over two
# "path" lines, so the window's Δmsgs / ΔIOs must be exactly 2.
kv=$tmp/paths
/usr/bin/python3 - "$cnt" "$kv" <<'EOT' &
import os, struct, sys, time
# rewritten in place, same length (tb-snap keeps its file open, as sysfs)
open(sys.argv[2], "w").close()
for i in range(4000):
    with open(sys.argv[2], "r+") as k:
        k.write("path 10.0.0.1:1 state=connected reqs=%08d msgs=%08d hb_rtt_us=7\n"
                "path 10.0.0.2:1 state=connected reqs=%08d msgs=%08d\n" % (i, i, i, i))
    with open(sys.argv[1], "r+b") as f:
        f.write(struct.pack("<Q", i))
    time.sleep(0.0005)
EOT
wpid=$!
sleep 0.3
reply=$(printf 'window %s 200 5000 u64:%s kv:%s\nquit\n' "$tmp/kv.snap" "$cnt" "$kv" | "$top/build/experiments/tb-snap")
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
d_ios=$(awk '$1=="a_ios"{a=$2} $1=="b_ios"{b=$2} END{print b-a}' "$tmp/kv.snap" 2>/dev/null)
d_msgs=$(awk '$1=="a_kv_msgs"{a=$2} $1=="b_kv_msgs"{b=$2} END{print b-a}' "$tmp/kv.snap" 2>/dev/null)
# (the writer updates the two files one after the other: a sample can fall
# between them, so one IO either way at each edge is allowed)
dd=$(( ${d_msgs:-0} - 2 * ${d_ios:-0} ))
if [[ $reply == ok* ]] && [ "${d_ios:-0}" -ge 200 ] && [ "${dd#-}" -le 4 ] &&
   ! grep -q "kv_state" "$tmp/kv.snap"; then
	echo "PASS: experiments-pipeline: tb-snap kv: counters at the window's instants ($d_msgs msgs / $d_ios IOs)"
else echo "FAIL: experiments-pipeline: tb-snap kv: reply '$reply', Δios $d_ios, Δmsgs $d_msgs: $(grep kv "$tmp/kv.snap" | tr '\n' ' ')"; fi
reply=$(printf 'window %s 100000 300 u64:%s\nquit\n' "$tmp/w2.snap" "$cnt" | "$top/build/experiments/tb-snap")
if [[ $reply == err* ]]; then echo "PASS: experiments-pipeline: tb-snap fails a window short of its IOs"
else echo "FAIL: experiments-pipeline: tb-snap accepted a short window: $reply"; fi
