#!/bin/bash
# 041-kclient-fastpath: the kernel client's fast path (issue 17 section 2).
# The kernel server with queue_depth=32 serves nullb0 and a configfs
# null_blk kfp1; both are
# mapped over 2 paths in ONE session, so they share its tag set: every
# hardware queue of both devices has 30 tags (32 chunks less the 2 of the
# control messages), the tags being the chunk ids. Two verified fio jobs
# (2 processes x iodepth 64 on each device: 256 requests wanted against 30
# chunks) run together: they must end without error, no request may be
# refused with BLK_STS_RESOURCE (the device's busy counter stays 0; the
# old per-device tag sets with a shared permit pool refused them), and
# no id may be used twice (a shared id is a WARN in the transport, which
# the log check catches). Requests and answers are posted unsignaled but
# one in 16 per connection: the client's sig_reqs and the server's
# sig_rsps must be exactly the floor of each connection's count / 16
# (16 * sig <= count <= 16 * sig + 15 * connections), and not 0. Every
# CPU is in exactly one hardware queue's cpu_list. Unmap, rmmod, clean log.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
setup_nullb
nullb_cfs kfp1 memory_backed=1 size=256
kmod_load queue_depth=32
kclt_load
FIO_TIMEOUT=150
S=/sys/kernel/ibtrs-client/kfp

kclt_map "sessname=kfp$(kclt_paths 2) device_path=nullb0"
DEV0=$KCLT_DEV
kclt_map "sessname=kfp$(kclt_paths 2) device_path=kfp1"
DEV1=$KCLT_DEV
ncons=$(ls -d /sys/block/$DEV0/mq/*/ | wc -l)

# one tag set: 30 tags in every hardware queue of both devices
for d in $DEV0 $DEV1; do
	for q in /sys/block/$d/mq/*/; do
		t=$(cat "$q/nr_tags")
		[ "$t" = 30 ] || die "$q: $t tags, want 30 (queue depth 32 - 2 control ids)"
	done
	grep -q '\[none\]' /sys/block/$d/queue/scheduler ||
		die "$d: scheduler $(cat /sys/block/$d/queue/scheduler), want none"
done
log "$DEV0, $DEV1: $ncons hardware queues each, 30 tags in every one"

# every CPU in exactly one hardware queue (.map_queues)
cpus=$(cat /sys/block/$DEV0/mq/*/cpu_list | tr ', ' '\n\n' | grep -c .)
uniq=$(cat /sys/block/$DEV0/mq/*/cpu_list | tr ', ' '\n\n' | grep . | sort -u | wc -l)
[ "$cpus" = "$(nproc)" ] && [ "$uniq" = "$(nproc)" ] ||
	die "cpu_lists cover $uniq CPUs ($cpus entries), want each of $(nproc) once"

fio_dev() {	# NAME DEV: oversubscribed verified randrw in the background
	timeout -k 10 "$FIO_TIMEOUT" fio --name="$1" --filename="/dev/$2" \
		--ioengine=libaio --direct=1 --rw=randrw --bs=4k \
		--iodepth=64 --numjobs=2 --size=4m --offset_increment=4m \
		--verify=crc32c --verify_fatal=1 --group_reporting \
		>"$LOGDIR/fio-$1.log" 2>&1
}
fio_dev fp0 "$DEV0" &
p0=$!
fio_dev fp1 "$DEV1" &
p1=$!
wait $p0 || die "fio on $DEV0 failed: $(tail -5 "$LOGDIR/fio-fp0.log")"
wait $p1 || die "fio on $DEV1 failed: $(tail -5 "$LOGDIR/fio-fp1.log")"
for f in fp0 fp1; do
	grep -q 'err= 0' "$LOGDIR/fio-$f.log" || die "fio $f reported errors"
	log "fio $f: OK ($(grep -o 'IOPS=[^,]*' "$LOGDIR/fio-$f.log" | tr '\n' ' '))"
done
for d in $DEV0 $DEV1; do
	b=$(cat "$KCLT_CTL/devices/$d/busy")
	[ "$b" = 0 ] || die "$d: $b requests refused with BLK_STS_RESOURCE"
done
log "no request refused (busy=0 on both devices)"

# unsignaled requests, one in 16 per connection signaled
for p in "$S"/paths/*/; do
	reqs=$(cat "$p/reqs") sig=$(cat "$p/sig_reqs")
	log "$(basename "$p"): reqs=$reqs sig_reqs=$sig con_reqs: $(tr '\n' ' ' <"$p/con_reqs")"
	[ "$sig" -gt 0 ] || die "$(basename "$p"): no signaled request"
	[ $((16 * sig)) -le "$reqs" ] &&
		[ "$reqs" -le $((16 * sig + 15 * ncons)) ] ||
		die "$(basename "$p"): sig_reqs=$sig for reqs=$reqs, want one in 16 per connection"
done
# the server's answers likewise
cat /sys/kernel/ibtrs-server/sessions | tee "$LOGDIR/srv-sessions.txt"
sed -n 's/.* rsps=\([0-9]*\) .*sig_rsps=\([0-9]*\).*/\1 \2/p' \
	"$LOGDIR/srv-sessions.txt" >"$LOGDIR/srv-sig.txt"
n=0
while read -r rsps sig; do
	n=$((n + 1))
	[ "$sig" -gt 0 ] || die "server: no signaled answer (rsps=$rsps)"
	[ $((16 * sig)) -le "$rsps" ] &&
		[ "$rsps" -le $((16 * sig + 15 * ncons)) ] ||
		die "server: sig_rsps=$sig for rsps=$rsps, want one in 16 per connection"
done <"$LOGDIR/srv-sig.txt"
[ "$n" = 2 ] || die "server: $n paths with answer counters, want 2"
grep -q 'proto_errors=[1-9]' "$KCLT_CTL/devices/$DEV0/paths" && die "protocol errors counted"

kclt_unmap "$DEV1"
KCLT_DEV=$DEV0
kclt_finish
log "PASS"
