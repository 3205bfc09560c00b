#!/bin/bash
# 024-kclient-device-removal: the kernel client over 2 paths to the kernel
# server (same guest); during a verified fio write job on /dev/ibnbdN
# (writes held 300 ms by dm-delay, so every path has IO in flight), path 1's
# rxe device is deleted (`rdma link delete`, an RDMA device removal). The
# client's ib_client remove callback must fail path 1, re-post its
# unanswered IO on path 2 (failovers >= 1) and release everything it holds
# on the device, so the delete returns within 10 s; fio ends without error
# and verifies. The device is re-added: path 1 reconnects (reconnects >= 1)
# and then holds on it exactly what path 2 holds on its device (rdma res:
# no leak, client and server together); unmap, rmmod, clean kernel log.
# TIMEOUT=180
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
[ "${TB_MODE:-}" != real ] || skip "deletes rxe devices (VM only)"
command -v rdma >/dev/null || skip "no rdma tool"
LIMIT_MS=10000
_ms() { date +%s%3N; }

# _same_res: path 1's device holds what path 2's holds (pd, cq, qp, cm_id, mr).
_same_res() {
	local d1 d2 r1 r2
	d1=$(tb_nth 1 "$TB_RXE_DEVS") d2=$(tb_nth 2 "$TB_RXE_DEVS")
	r1=$(rdma res show | sed -n "s/^[0-9]*: $d1: //p")
	r2=$(rdma res show | sed -n "s/^[0-9]*: $d2: //p")
	log "resources: $d1: $r1 / $d2: $r2"
	[ "$r1" = "$r2" ]
}

setup_nullb
dm_delay kdrm /dev/nullb0 0 300
kmod_load
kclt_load reconnect_min_ms=500 reconnect_max_ms=2000
kclt_map "sessname=kdrm$(kclt_paths 2) device_path=mapper/kdrm"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
rxe1=$(tb_nth 1 "$TB_RXE_DEVS")
FIO_TIMEOUT=120
# 2 MiB of 4k writes at <= 16 per 300 ms: ~10 s, then the verify reads
timeout -k 10 "$FIO_TIMEOUT" fio --name=drm --filename="/dev/$KCLT_DEV" \
	--ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=16 \
	--size=2m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	>"$LOGDIR/fio-drm.log" 2>&1 &
FIO=$!
sleep 1.5
cat "$P"
[ "$(grep -c 'state=connected reqs=[1-9]' "$P")" = 2 ] ||
	die "not both paths carrying IO before the removal"
# Delete only while path 1 has IO in flight (a slow fio start under load
# left it none once: nothing to fail over, nothing tested). 10 s x TS: on
# the debug kernel fio had not started its IO after 11.5 s once.
for i in $(seq 1 $((100 * TS))); do
	sed -n 1p "$P" | grep -q 'inflight=[1-9]' && break
	sleep 0.1
done
sed -n 1p "$P" | grep -q 'inflight=[1-9]' || die "path 1 never had IO in flight"

log "deleting $rxe1 (path 1's device) under IO"
t0=$(_ms)
rdma link delete "$rxe1" &
DPID=$!
while kill -0 $DPID 2>/dev/null; do
	if (($(_ms) - t0 >= LIMIT_MS)); then
		rdma res show
		kmsgs | tail -30
		# a blocked delete cannot be killed: fail now, the guest goes
		die "rdma link delete $rxe1 still blocked after $LIMIT_MS ms"
	fi
	sleep 0.05
done
wait $DPID || die "rdma link delete $rxe1 failed"
del_ms=$(($(_ms) - t0))
log "rdma link delete took $del_ms ms"
[ ! -e "/sys/class/infiniband/$rxe1" ] || die "$rxe1 still there after the delete"
kmsgs | grep -q "device $rxe1 removed" || die "the client's ib_client did not see the removal"
kmsgs | grep -q "released device $rxe1" || die "the client did not release $rxe1"
cat "$P" | tee "$LOGDIR/paths-removed.txt"
p1=$(sed -n 1p "$LOGDIR/paths-removed.txt")
echo "$p1" | grep -q 'state=connected' && die "path 1 connected without a device"
# Path 1's unanswered IO must have failed over: its writes are held 300 ms
# at the server, so it always has some when its device goes.
echo "$p1" | grep -q 'failovers=[1-9]' || die "no IO failed over from path 1"
echo "$p1" | grep -q 'inflight=0' || die "path 1 still has IO in flight"
kill -0 $FIO 2>/dev/null || log "note: fio ended before the removal was checked"
wait $FIO
rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the device removal: $(tail -5 "$LOGDIR/fio-drm.log")"
grep -q 'err= 0' "$LOGDIR/fio-drm.log" || die "fio reported errors"

log "re-adding $rxe1"
t0=$(_ms)
tb_path_restore 1 || die "cannot re-add $rxe1"
for i in $(seq 1 100); do
	[ "$(grep -c 'state=connected' "$P")" = 2 ] && break
	sleep 0.1
done
log "path 1 back $(($(_ms) - t0)) ms after the re-add started"
cat "$P" | tee "$LOGDIR/paths-after.txt"
p1=$(sed -n 1p "$LOGDIR/paths-after.txt")
echo "$p1" | grep -q 'state=connected' || die "path 1 did not reconnect on the new device"
echo "$p1" | grep -q 'reconnects=[1-9]' || die "path 1 counted no reconnect"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
ok=0
for i in $(seq 1 20); do	# the server may still be closing the old path
	_same_res && { ok=1; break; }
	sleep 0.25
done
[ $ok = 1 ] || { rdma res show; die "resources on $rxe1 differ from path 2's device"; }
# the new path carries verified IO
timeout -k 5 60 fio --name=after --filename="/dev/$KCLT_DEV" --ioengine=libaio \
	--direct=1 --rw=randwrite --bs=4k --iodepth=16 --size=2m \
	--verify=crc32c --do_verify=1 --verify_fatal=1 >"$LOGDIR/fio-after.log" 2>&1 ||
	die "fio after the re-add failed: $(tail -5 "$LOGDIR/fio-after.log")"
cat "$P" | tee "$LOGDIR/paths-end.txt"
r1a=$(sed -n 's/.*reqs=\([0-9]*\).*/\1/p' "$LOGDIR/paths-after.txt" | head -1)
r1b=$(sed -n 's/.*reqs=\([0-9]*\).*/\1/p' "$LOGDIR/paths-end.txt" | head -1)
[ "$r1b" -gt "$r1a" ] || die "path 1 carried no IO after the reconnect"
kmsgs | grep 'ibtrs_client' | grep -E 'removed|released|failed|closed|connected' | head -12
kclt_unmap "$KCLT_DEV"
kclt_unload
kmod_unload
kmod_log_check 10
log "PASS (delete ${del_ms} ms)"
