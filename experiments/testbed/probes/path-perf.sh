#!/bin/bash
# path-perf.sh - per-path latency and bandwidth, run inside the testbed
# (one guest, or the client guest of --two-hosts; the server side goes
# through tb_srv, so both modes and real hosts run the same code). For each
# path I: ib_send_lat 2 B and ib_write_bw 64 KiB on rxeI (rdma_cm,
# perftest), then the fio engine against ibnbd-serverd over that path
# alone: 4k random read at QD1 (latency) and 128k sequential read at QD8
# (bandwidth), 3 s each. PP_SHAPE shapes paths first (below). Writes "path metric value" lines to
# $TB_OUT/path-perf/results.txt (probes/path-perf-run.sh drives it).
set -uo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
out=$TB_OUT/path-perf
mkdir -p "$out"
res=$out/results.txt
: >"$res"
eng=$TB_TOP/fio-engine/build/ibtrs.so
port=12345
fail() { echo "path-perf: $*" >&2; exit 1; }
[ -e "$eng" ] || fail "fio engine not built"

addrs=""
for ((i = 1; i <= TB_PATHS; i++)); do addrs+=" --addr $(tb_nth $i "$TB_SRV_ADDRS")"; done
tb_srv "modprobe null_blk nr_devices=1 queue_mode=2 irqmode=0 gb=1 bs=512 memory_backed=1 || exit 1
	setsid server/build/ibnbd-serverd $addrs --port $port </dev/null >/tmp/srvd.log 2>&1 &" ||
	fail "cannot start the daemon"
for ((t = 0; t < 100; t++)); do
	tb_srv "grep -q 'listening on' /tmp/srvd.log" && break
	sleep 0.2
done

# PP_SHAPE="I:RATE ...": shape those paths on both sides first (paths.sh
# shape: a tbf qdisc on each side's NIC of path I).
for sh in ${PP_SHAPE:-}; do
	"$TB_TOP/experiments/testbed/paths.sh" shape "${sh%%:*}" "${sh#*:}" &&
		tb_srv "experiments/testbed/paths.sh shape ${sh%%:*} ${sh#*:}" ||
		fail "cannot shape path ${sh%%:*} to ${sh#*:}"
	echo "${sh%%:*} shaped_to_mbit ${sh#*:}" | sed 's/mbit$//' >>"$res"
done

perf() {	# TOOL PORT ARGS...: server side via tb_srv, client here
	local tool=$1 p=$2 srv=$3
	shift 3
	tb_srv "setsid timeout 60 $tool -R -d rxe$i -p $p $* </dev/null >/tmp/perf-srv.log 2>&1 &"
	sleep 1
	timeout 60 "$tool" -R -d "rxe$i" -p "$p" "$@" "$srv"
}
fio_job() {	# NAME ARGS...
	local name=$1
	shift
	timeout 60 fio --name="$name" --ioengine="external:$eng" --paths="$pth" --port=$port \
		--devpath=/dev/nullb0 --access_mode=ro --direct=1 --size=512m --time_based \
		--runtime=3 --output-format=json "$@" >"$out/fio-$name-$i.json" 2>"$out/fio-$name-$i.err"
}
for ((i = 1; i <= TB_PATHS; i++)); do
	srv=$(tb_nth $i "$TB_SRV_ADDRS")
	pth="$(tb_nth $i "$TB_CLT_ADDRS")@$srv"
	perf ib_send_lat $((18700 + i)) "$srv" -s 2 -n 2000 >"$out/send_lat-$i.txt" 2>&1 ||
		echo "path-perf: ib_send_lat over path $i failed" >&2
	awk -v p=$i '$1 == 2 && NF >= 9 { print p, "send_lat_tmin_us", $3; print p, "send_lat_typical_us", $5;
		print p, "send_lat_avg_us", $6; print p, "send_lat_p99_us", $8 }' "$out/send_lat-$i.txt" >>"$res"
	perf ib_write_bw $((18710 + i)) "$srv" -s 65536 -D 3 >"$out/write_bw-$i.txt" 2>&1 ||
		echo "path-perf: ib_write_bw over path $i failed" >&2
	awk -v p=$i '$1 == 65536 && NF >= 5 { print p, "write_bw_64k_MBps", $4 * 1.048576 }' \
		"$out/write_bw-$i.txt" >>"$res"
	fio_job qd1 --rw=randread --bs=4k --iodepth=1 || echo "path-perf: fio QD1 over path $i failed" >&2
	fio_job bw --rw=read --bs=128k --iodepth=8 || echo "path-perf: fio 128k over path $i failed" >&2
	python3 - "$out" "$i" >>"$res" <<'EOT'
import json, sys
d, p = sys.argv[1], sys.argv[2]
def job(n):
    t = open("%s/fio-%s-%s.json" % (d, n, p)).read()
    return json.loads(t[t.index("{"):])["jobs"][0]["read"]
try:
    r = job("qd1")
    print(p, "fio_4k_qd1_iops", "%.1f" % r["iops"])
    print(p, "fio_4k_qd1_clat_p50_us", "%.1f" % (r["clat_ns"]["percentile"]["50.000000"] / 1e3))
    print(p, "fio_4k_qd1_clat_mean_us", "%.1f" % (r["clat_ns"]["mean"] / 1e3))
    print(p, "fio_4k_qd1_clat_p99_us", "%.1f" % (r["clat_ns"]["percentile"]["99.000000"] / 1e3))
    r = job("bw")
    print(p, "fio_128k_qd8_MBps", "%.1f" % (r["bw_bytes"] / 1e6))
except (OSError, ValueError, KeyError) as e:
    print("path-perf: fio result of path %s: %s" % (p, e), file=sys.stderr)
EOT
done
tb_srv "pkill -TERM ibnbd-serverd; sleep 1; cat /tmp/srvd.log" >"$out/srvd.log" 2>&1
cat "$res"
[ "$(grep -vc shaped_to "$res")" = $((TB_PATHS * 10)) ] || fail "some measurements are missing (above)"
