#!/bin/bash
# kcut-stress.sh - runs in the client guest of `run --two-hosts --paths 2`:
# the kernel client over both links, the server guest's NIC of link 1
# unplugged (QMP) during a verified job, KCUT_N times (default 10). Prints
# one line per round; on a failed round keeps both kernels' logs.
set -uo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
log=$TB_OUT/kcut
mkdir -p "$log"
kb=$TB_TOP/build/kmod
kport=12346
n=${KCUT_N:-10}
tb_srv "modprobe null_blk nr_devices=1 queue_mode=2 irqmode=0 gb=1 bs=512 memory_backed=1 &&
	modprobe rdma_cm && insmod build/kmod/ibtrs-server.ko port=$kport &&
	insmod build/kmod/ibnbd-server.ko dev_search_path=/dev" || { echo "FAIL: server modules"; exit 1; }
modprobe rdma_cm && insmod "$kb/ibtrs-client.ko" ctrl_loss_tmo_ms=120000 reconnect_max_ms=2000 &&
	insmod "$kb/ibnbd-client.ko" port=$kport || { echo "FAIL: client modules"; exit 1; }
fails=0
for ((r = 1; r <= n; r++)); do
	dmesg -C
	tb_srv "dmesg -C"
	echo "sessname=k$r path=10.99.1.2@10.99.1.1 path=10.99.2.2@10.99.2.1 device_path=nullb0 access_mode=rw" \
		>/sys/class/ibnbd-client/ctl/map_device || { echo "FAIL: map $r"; exit 1; }
	for ((t = 0; t < 50; t++)); do [ -b /dev/ibnbd0 ] && break; sleep 0.1; done
	timeout 120 fio --name=kcut --filename=/dev/ibnbd0 --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--size=16m --offset=$(((r % 8) * 64))m --rate=4m >"$log/fio-$r.log" 2>&1 &
	fpid=$!
	t0=$(date +%s)
	sleep 2
	tb_host link 1 down srv >/dev/null 2>&1 || { echo "FAIL: link down"; exit 1; }
	wait $fpid
	frc=$?
	el=$(($(date +%s) - t0))
	cat /sys/class/ibnbd-client/ctl/devices/ibnbd0/paths >"$log/paths-$r.txt"
	if [ $frc != 0 ]; then
		fails=$((fails + 1))
		dmesg >"$log/dmesg-clt-$r.log"
		tb_srv "dmesg" >"$log/dmesg-srv-$r.log" 2>&1
		echo "round $r: FAIL fio exit $frc after $el s"
	else
		echo "round $r: ok in $el s"
	fi
	tb_host link 1 up srv >/dev/null 2>&1
	tb_srv "experiments/testbed/paths.sh restore 1" >"$log/restore-$r.log" 2>&1 ||
		{ echo "round $r: restore failed: $(tail -2 "$log/restore-$r.log")"; break; }
	echo normal >/sys/class/ibnbd-client/ctl/devices/ibnbd0/unmap_device || { echo "FAIL: unmap $r"; exit 1; }
	sleep 1
done
echo "kcut-stress: $fails of $((r - 1)) rounds failed"
