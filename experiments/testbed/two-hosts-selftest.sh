#!/bin/bash
# two-hosts-selftest.sh - runs in the client guest of `run --two-hosts
# --paths 2` (tests/host/two-hosts.sh): the server guest serves null_blk
# with ibnbd-serverd, started through tb_srv (the same call the real-
# hardware mode makes over ssh); the fio engine in this guest writes and
# verifies over both links, the client side of link 1 goes down, and a
# second verified job must run over link 2 alone. Also measures QD1 4k read
# latency per link (a single-path job each). Prints PASS/FAIL lines.
set -uo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
port=12345
log=$TB_OUT/selftest
mkdir -p "$log"
fail() { echo "FAIL: two-hosts: $*"; tb_srv "cat /tmp/srvd.log" >"$log/srvd.log" 2>&1; exit 1; }
eng=$TB_TOP/fio-engine/build/ibtrs.so
[ -e "$eng" ] || fail "fio engine not built"
[ "${TB_ROLE:-}" = clt ] || fail "not the client guest of --two-hosts"

out=$(tb_srv "ip -br addr show tb1; echo role=\$TB_ROLE") || fail "tb_srv failed: $out"
grep -q "10.99.1.1" <<<"$out" && grep -q "role=srv" <<<"$out" ||
	fail "the server guest does not look like one: $out"
ip -br addr show tb1 | grep -q 10.99.1.2 || fail "client side of link 1 not addressed"

tb_srv "modprobe null_blk nr_devices=1 queue_mode=2 irqmode=0 gb=1 bs=512 memory_backed=1 || exit 1
	setsid server/build/ibnbd-serverd --addr 10.99.1.1 --addr 10.99.2.1 --port $port \
	</dev/null >/tmp/srvd.log 2>&1 &" || fail "cannot start the daemon on the server guest"
for ((t = 0; t < 100; t++)); do
	tb_srv "grep -q 'listening on' /tmp/srvd.log" && break
	sleep 0.2
done
[ $t -lt 100 ] || fail "daemon did not listen"

paths2="10.99.1.2@10.99.1.1,10.99.2.2@10.99.2.1"
job() {	# NAME PATHS FIO-ARGS...
	local name=$1 p=$2
	shift 2
	timeout 120 fio --name="$name" --ioengine="external:$eng" --paths="$p" --port=$port \
		--devpath=/dev/nullb0 --access_mode=rw --direct=1 "$@" \
		>"$log/fio-$name.log" 2>&1
}
job both "$paths2" --rw=randwrite --bs=4k --iodepth=8 --size=16m --offset=0 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 || fail "verify over 2 links: $(tail -3 "$log/fio-both.log")"
grep -q "report: path 1 .* writes=[1-9]" "$log/fio-both.log" &&
	grep -q "report: path 2 .* writes=[1-9]" "$log/fio-both.log" ||
	fail "both links did not carry IO: $(grep report: "$log/fio-both.log")"
echo "PASS: two-hosts: verified IO across the guests over 2 links"

for i in 1 2; do
	job "lat$i" "$(tb_nth $i "$TB_CLT_ADDRS")@$(tb_nth $i "$TB_SRV_ADDRS")" --rw=randread --bs=4k \
		--iodepth=1 --size=16m --time_based --runtime=3 --output-format=json ||
		fail "QD1 read over link $i"
	python3 - "$log/fio-lat$i.log" "$i" <<'EOT'
import json, sys
t = open(sys.argv[1]).read()
r = json.loads(t[t.index("{"):])["jobs"][0]["read"]
print("two-hosts: link %s QD1 4k read: %.0f IOPS, clat p50 %.0f us, mean %.0f us"
      % (sys.argv[2], r["iops"], r["clat_ns"]["percentile"]["50.000000"] / 1e3, r["clat_ns"]["mean"] / 1e3))
EOT
done

tb_path_cut 1 || fail "cannot cut link 1"
job cut "$paths2" --rw=randwrite --bs=4k --iodepth=8 --size=16m --offset=32m \
	--verify=crc32c --do_verify=1 --verify_fatal=1 || fail "verify with link 1 down: $(tail -3 "$log/fio-cut.log")"
grep -q "report: path 2 .* writes=[1-9]" "$log/fio-cut.log" &&
	grep -q "report: path 1 .* writes=0 " "$log/fio-cut.log" ||
	fail "with link 1 down, IO did not go over link 2 alone: $(grep report: "$log/fio-cut.log")"
echo "PASS: two-hosts: verified IO with link 1 down (link 2 only)"
tb_path_restore 1 || fail "cannot restore link 1"
tb_srv "pkill -TERM ibnbd-serverd; sleep 1; cat /tmp/srvd.log" >"$log/srvd.log" 2>&1
exit 0
