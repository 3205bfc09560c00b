#!/bin/bash
# 042-kclient-poll: poll queues of the kernel client (issue 17 section 2).
# ibnbd-client with poll_queues=1: the device has one hardware queue per
# CPU plus one polled queue (queue/io_poll 1), each path one more
# connection (cons = CPUs + 1 in the client's and the server's files), its
# CQ reaped only by blk-mq's .poll. fio with polled IO (io_uring --hipri:
# IOPOLL; Linux 6.1 polls no synchronous IO) at iodepth 1 and 16, each
# verified: the IOs go on the polled connection (its con_reqs >= the IOs;
# the interrupt-driven ones carry only the control messages) and the
# completions come from polling (poll_cqes >= the IOs). Then path 1 is cut
# during a polled verified write job and restored: its IO fails over to
# the polled connection of path 2 (failovers >= 1), fio ends without an
# error and verifies. Unmap, rmmod, clean log.
# TIMEOUT=300
. "$TB_TOP/kmod/tests/vm/klib.sh"
KCLT_NBD_ARGS="poll_queues=1"
kclt_cut_setup kpoll
S=/sys/kernel/ibtrs-client/kpoll
N=$(nproc)

hwq=$(ls -d /sys/block/$KCLT_DEV/mq/*/ | wc -l)
[ "$hwq" = $((N + 1)) ] || die "$hwq hardware queues, want $N + 1 polled"
[ "$(cat /sys/block/$KCLT_DEV/queue/io_poll)" = 1 ] || die "queue/io_poll is not 1"
n=$(grep -c "cons=$((N + 1))\$" "$P")
[ "$n" = 2 ] || die "client paths without cons=$((N + 1)): $(cat "$P")"
n=$(grep -c "cons=$((N + 1)) " /sys/kernel/ibtrs-server/sessions)
[ "$n" = 2 ] || die "server paths without cons=$((N + 1)): $(cat /sys/kernel/ibtrs-server/sessions)"
log "$KCLT_DEV: $N + 1 hardware queues, io_poll=1, cons=$((N + 1)) per path"

# the polled connection's requests and the completions reaped by polling
poll_reqs() {
	local p t=0
	for p in "$S"/paths/*/; do
		t=$((t + $(sed -n "s/^$N //p" "$p/con_reqs")))
	done
	echo $t
}
sum_paths() {	# FILE: its sum over the paths
	local p t=0
	for p in "$S"/paths/*/; do t=$((t + $(cat "$p/$1"))); done
	echo $t
}

r0=$(poll_reqs) c0=$(sum_paths poll_cqes) i0=$(cat $S/ios)
kfio uring1 --ioengine=io_uring --hipri=1 --iodepth=1 --rw=randrw --bs=4k \
	--size=4m --verify=crc32c --verify_fatal=1
kfio uring --ioengine=io_uring --hipri=1 --iodepth=16 --rw=randrw \
	--bsrange=4k-64k --size=8m --verify=crc32c --verify_fatal=1
r1=$(poll_reqs) c1=$(sum_paths poll_cqes) i1=$(cat $S/ios)
ios=$((i1 - i0)) preqs=$((r1 - r0)) cqes=$((c1 - c0))
log "polled jobs: $ios IOs, $preqs requests on the polled connections, $cqes completions reaped by polling"
krxe_counters
for p in "$S"/paths/*/; do
	log "$(basename "$p") con_reqs: $(tr '\n' ' ' <"$p/con_reqs")"
done
# (the debug kernel's fio, debug-bin/fio, cuts both jobs to 2 MiB: ~930)
min_ios=1000
[ "${TB_KERNEL:-}" = debug ] && min_ios=500
[ "$ios" -gt "$min_ios" ] || die "only $ios IOs"
[ "$preqs" -ge "$ios" ] || die "$preqs requests on the polled connections for $ios IOs"
[ "$cqes" -ge "$ios" ] || die "$cqes completions reaped by polling for $ios IOs"
grep -q 'proto_errors=[1-9]' "$P" && die "protocol errors counted"

# a path cut under polled IO: failover to path 2's polled connection
timeout -k 10 "$FIO_TIMEOUT" fio --name=cut --filename="/dev/$KCLT_DEV" \
	--ioengine=io_uring --hipri=1 --direct=1 --rw=randwrite --bs=4k \
	--iodepth=16 --size=48m --rate=6m --verify=crc32c --do_verify=1 \
	--verify_fatal=1 >"$LOGDIR/fio-cut.log" 2>&1 &
KFIO_PID=$!
sleep 2
cat "$P"
log "cutting path 1"
tb_path_cut 1
sleep 6
kill -0 $KFIO_PID 2>/dev/null || die "fio ended while path 1 was cut"
log "restoring path 1"
tb_path_restore 1
kfio_wait cut "across the path cut"
kclt_wait_connected "$P" 2 || die "path 1 did not come back"
cat "$P" | tee "$LOGDIR/paths-after.txt"
sed -n 1p "$LOGDIR/paths-after.txt" | grep -q 'failovers=[1-9]' ||
	die "no IO failed over from path 1"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
krxe_counters
kclt_finish 10
log "PASS"
