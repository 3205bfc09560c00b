#!/bin/bash
# two-hosts-selftest.sh - runs in the client guest of `run --two-hosts
# --paths 2` (tests/host/two-hosts.sh): the server guest serves null_blk
# with ibnbd-serverd, started through tb_srv (the same call the real-
# hardware mode makes over ssh); the fio engine in this guest writes and
# verifies over both links, the client side of link 1 goes down, and a
# second verified job must run over link 2 alone. Also measures QD1 4k read
# latency per link (a single-path job each). Then the same with the kernel
# modules (server modules there, client modules here), a link cut on the
# server's side by the host (QMP set_link), and a server crash (the host
# kills the server guest and boots it again). Prints PASS/FAIL lines.
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

# The kernel modules: the server modules in the server guest, the client
# modules here, /dev/ibnbd0 over both links; then the server guest's NIC of
# link 1 loses its carrier (QMP set_link from the host: the cable pulled on
# the far side) during a verified job: the client fails path 1 over to
# path 2 and the job verifies.
kb=$TB_TOP/build/kmod
kport=12346
[ -e "$kb/ibnbd-client.ko" ] && [ -e "$kb/ibnbd-server.ko" ] || fail "kernel modules not built (make -C kmod)"
# kfail MSG [FIO-JOB]: the FAIL line, then what explains it (indented
# lines the host test prints after the FAIL line): the job's fio output,
# the paths, both kernels' last messages.
kfail() {
	dmesg >"$log/dmesg-clt.log"
	tb_srv "dmesg" >"$log/dmesg-srv.log" 2>&1
	echo "FAIL: two-hosts: $1"
	{
		# fio's error lines first: the tail below is its summary
		[ -n "${2:-}" ] && echo "fio $2 errors:" &&
			grep -E 'err=|error|verify|fio:' "$log/fio-$2.log" | head -n 8
		echo "paths:"
		cat /sys/class/ibnbd-client/ctl/devices/ibnbd0/paths
		echo "client dmesg:"
		grep -E 'ibtrs|ibnbd|rxe|WARN|BUG' "$log/dmesg-clt.log" | tail -n 25
		echo "server dmesg:"
		grep -E 'ibtrs|ibnbd|rxe|WARN|BUG' "$log/dmesg-srv.log" | tail -n 25
		[ -n "${2:-}" ] && echo "fio $2:" && tail -n 15 "$log/fio-$2.log"
	} 2>&1 | sed 's/^/  | /'
	exit 1
}
tb_srv "modprobe rdma_cm && insmod build/kmod/ibtrs-server.ko port=$kport &&
	insmod build/kmod/ibnbd-server.ko dev_search_path=/dev" >"$log/kserver-load.log" 2>&1 ||
	kfail "server modules do not load in the server guest: $(cat "$log/kserver-load.log")"
# IO waits up to 120 s for a path (the server guest reboots below), and
# reconnect attempts come at most 2 s apart.
modprobe rdma_cm && insmod "$kb/ibtrs-client.ko" ctrl_loss_tmo_ms=120000 reconnect_max_ms=2000 &&
	insmod "$kb/ibnbd-client.ko" port=$kport ||
	kfail "client modules do not load"
echo "sessname=two-hosts path=10.99.1.2@10.99.1.1 path=10.99.2.2@10.99.2.1 device_path=nullb0 access_mode=rw" \
	>/sys/class/ibnbd-client/ctl/map_device || kfail "map_device failed: $(dmesg | tail -3)"
for ((t = 0; t < 50; t++)); do [ -b /dev/ibnbd0 ] && break; sleep 0.1; done
[ -b /dev/ibnbd0 ] || kfail "no /dev/ibnbd0"
kjob() {	# NAME FIO-ARGS...
	local name=$1
	shift
	timeout 120 fio --name="$name" --filename=/dev/ibnbd0 --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
		"$@" >"$log/fio-$name.log" 2>&1
}
pstat() {	# path I's line of the device's paths file
	grep "10.99.$1.1" /sys/class/ibnbd-client/ctl/devices/ibnbd0/paths
}
kjob kboth --size=16m --offset=64m || kfail "kernel client verify over 2 links" kboth
pstat 1 | grep -q "rsps=[1-9]" && pstat 2 | grep -q "rsps=[1-9]" ||
	kfail "both links did not carry the kernel client's IO: $(cat /sys/class/ibnbd-client/ctl/devices/ibnbd0/paths)"
echo "PASS: two-hosts: kernel client and kernel server in separate guests, verified over 2 links"

kjob kcut --size=32m --offset=96m --rate=4m &
fpid=$!
t0=$(date +%s)
sleep 2
tb_host link 1 down srv >"$log/host-link-down.log" 2>&1 ||
	kfail "host: set_link down: $(cat "$log/host-link-down.log")"
echo "two-hosts: server's link 1 down $(($(date +%s) - t0)) s into the job"
wait $fpid
frc=$?
[ $frc = 0 ] || kfail "kernel client verify with the server's link 1 unplugged: fio exit $frc after $(($(date +%s) - t0)) s" kcut
cat /sys/class/ibnbd-client/ctl/devices/ibnbd0/paths >"$log/paths-after-cut.txt"
pstat 1 | grep -q "failovers=[1-9]" && ! pstat 1 | grep -q "state=connected" ||
	kfail "path 1 did not fail over when the server's NIC lost carrier: $(cat "$log/paths-after-cut.txt")"
echo "PASS: two-hosts: the server guest's NIC of link 1 unplugged (QMP): failover to link 2, verified"
# Cable back in; the server's side of path 1 gets a fresh rxe device (as
# paths.sh restore does after any cut: Debian 6.1's rxe does not receive
# again on a device whose netdev lost its carrier under load).
tb_host link 1 up srv >/dev/null 2>&1
tb_srv "experiments/testbed/paths.sh restore 1" >"$log/srv-restore-1.log" 2>&1 ||
	kfail "server: paths.sh restore 1: $(cat "$log/srv-restore-1.log")"
echo normal >/sys/class/ibnbd-client/ctl/devices/ibnbd0/unmap_device || kfail "unmap failed"
tb_srv "dmesg" >"$log/dmesg-srv.log" 2>&1

# A server crash: the host kills the server guest's QEMU during a verified
# job and boots it again; the server side comes back (modules, the same
# disk: /dev/vda, a virtio disk backed by a file on the host, which survives
# the crash); the client reconnects with backoff,
# reopens the device on the new session (-ESTALE) and the job verifies.
srv_up() {
	tb_srv "modprobe rdma_cm && modprobe virtio_blk && insmod build/kmod/ibtrs-server.ko port=$kport &&
		insmod build/kmod/ibnbd-server.ko dev_search_path=/dev &&
		for t in \$(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done && [ -b /dev/vda ]"
}
tb_srv "rmmod ibnbd_server ibtrs_server" >/dev/null 2>&1 || kfail "rmmod of the server modules failed"
srv_up >"$log/crash-srv-up1.log" 2>&1 || kfail "server set-up for the crash: $(cat "$log/crash-srv-up1.log")"
echo "sessname=crash path=10.99.1.2@10.99.1.1 path=10.99.2.2@10.99.2.1 device_path=vda access_mode=rw" \
	>/sys/class/ibnbd-client/ctl/map_device || kfail "map of vda failed: $(dmesg | tail -3)"
for ((t = 0; t < 50; t++)); do [ -b /dev/ibnbd0 ] && break; sleep 0.1; done
[ -b /dev/ibnbd0 ] || kfail "no /dev/ibnbd0 for vda"
kjob kcrash --rw=write --bs=64k --size=64m --rate=4m &
fpid=$!
sleep 3
tb_host kill srv >"$log/host-kill.log" 2>&1 || kfail "host: kill srv: $(cat "$log/host-kill.log")"
t0=$(date +%s)
tb_host start srv >"$log/host-start.log" 2>&1 || kfail "host: start srv: $(cat "$log/host-start.log")"
for ((t = 0; t < 240; t++)); do
	timeout 5 bash -c "tb_srv true" >/dev/null 2>&1 && break
	sleep 0.5
done
srv_up >"$log/crash-srv-up2.log" 2>&1 || kfail "server set-up after the crash: $(cat "$log/crash-srv-up2.log")"
echo "two-hosts: server guest killed, booted and serving again after $(($(date +%s) - t0)) s"
wait $fpid || kfail "verified job across the server crash" kcrash
cat /sys/class/ibnbd-client/ctl/devices/ibnbd0/paths >"$log/paths-after-crash.txt"
grep -q "reconnects=[1-9]" "$log/paths-after-crash.txt" && dmesg | grep "reopened vda" >/dev/null ||
	kfail "no reconnect and reopen after the crash: $(cat "$log/paths-after-crash.txt"; dmesg | grep -i reopen | tail -2)"
echo "PASS: two-hosts: server guest killed and rebooted during a verified job: reconnect, reopen, verified"
echo normal >/sys/class/ibnbd-client/ctl/devices/ibnbd0/unmap_device || kfail "unmap failed"
rmmod ibnbd_client ibtrs_client || kfail "rmmod of the client modules failed"
tb_srv "rmmod ibnbd_server ibtrs_server" >/dev/null 2>&1 || kfail "rmmod of the server modules failed"
dmesg >"$log/dmesg-clt.log"
tb_srv "dmesg" >"$log/dmesg-srv2.log" 2>&1
if grep -nE 'WARNING:|\bBUG\b|Oops|hung task|KASAN|UBSAN|general protection|refcount_t:' \
	"$log/dmesg-clt.log" "$log/dmesg-srv.log" "$log/dmesg-srv2.log"; then
	fail "kernel log reports an error (above)"
fi
exit 0
