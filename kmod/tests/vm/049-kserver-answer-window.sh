#!/bin/bash
# 049-kserver-answer-window: the window between an answer's post and its
# chunk's ACTIVE -> FREE on the kernel server, forced open on any kernel.
# The client may send a chunk's next request, on the same path, as soon as
# it has the answer; before 9e2cbb2 the server took such a request for a
# re-send on a busy path and failed a healthy path ("request for chunk N
# which is busy on this path"). Only the debug kernel's slowness had opened
# the window (024 there). Here the test-only module ibtrs-test-hold
# (kmod/tests/hold/) holds the answering task for 20 ms right after each
# answer's post on CPU 0. The kernel client runs 4k writes at an iodepth
# above the session's tags, from its per-CPU connections, so a chunk freed
# by an answer is taken at once by the next request, sent from CPU 1 while
# CPU 0 is still held. Checked:
#  1. the hold ran (its held count), and requests reached a chunk still
#     answering: the server counted them deferred (verified jobs of 1 MiB
#     until deferred >= 3, at most 10; one job brings 1 to 7);
#  2. no path failed: no "busy on this path" in the log, the client's path
#     never reconnected nor failed IO over, the server's path is the one
#     that joined (recon_cnt=0);
#  3. fio's writes verify; the modules unload; the kernel log is clean.
# Seen failing: with the answering check of ibtrs_srv_io_req_busy()
# removed, the first window closed the path (2 of 2 runs).
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 1
HOLD_KO=$KB/tests-hold/ibtrs-test-hold.ko
[ -f "$HOLD_KO" ] || skip "$HOLD_KO not built (make -C kmod)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the hold keeps one busy)"
# completions in the submitter's context (the server's CQ work): the
# answer is posted from a task, which the hold can keep; irqmode=1
# (softirq) would hold the answer's send too, and open no window
nullb_cfs kwin irqmode=0 memory_backed=1 size=256
kmod_load queue_depth=16
kclt_load
kclt_map "sessname=kwin$(kclt_paths 1) device_path=${NULLB_DEV#/dev/}"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
S=/sys/kernel/ibtrs-server/sessions
insmod "$HOLD_KO" hold_us=20000 hold_cpu=0 || die "insmod ibtrs-test-hold"
HOLD_LOADED=1
KCLT_EXTRA_CLEANUP='[ "${HOLD_LOADED:-0}" = 1 ] && rmmod ibtrs_test_hold'
kmsgs | grep -q 'ibtrs_test_hold: holding each answer' ||
	die "ibtrs-test-hold did not arm"
log "queue depth: $(cat /sys/block/$KCLT_DEV/queue/nr_requests) requests, $(ls /sys/block/$KCLT_DEV/mq | wc -l) hw queues"
# Jobs of 1 MiB of 4k writes, 64 submitted at a time (more than the 16 -
# control chunks), each verified, until 3 requests met their chunk still
# answering (a job brings 1 to 7 of them; at most 10 jobs)
FIO_TIMEOUT=$((120 * TS))
deferred() { sed -n 's/^  path .* deferred=\([0-9]*\) .*/\1/p' "$S"; }
for job in $(seq 1 10); do
	kfio "win$job" --rw=randwrite --bs=4k --iodepth=64 \
		--iodepth_batch_submit=1 --size=1m --verify=crc32c \
		--do_verify=1 --verify_fatal=1
	kmsgs | grep 'busy on this path' &&
		die "the server failed a path for a request in the window (job $job)"
	[ "$(deferred)" -ge 3 ] && break
done
log "$job jobs"
held=$(cat /sys/module/ibtrs_test_hold/parameters/held)
cat "$S" | tee "$LOGDIR/sessions.txt"
cat "$P" | tee "$LOGDIR/paths.txt"
rmmod ibtrs_test_hold || die "rmmod ibtrs-test-hold"
HOLD_LOADED=0
log "posts held: $held"
[ "$held" -ge 1 ] || die "the hold never ran"
kmsgs | grep 'busy on this path' && die "the server failed a path for a request in the window"
[ "$(deferred)" -ge 3 ] ||
	die "only $(deferred) requests met their chunk still answering in $job jobs: the window was not opened"
log "requests in the window: $(grep -o 'deferred=[0-9]*' "$LOGDIR/sessions.txt")"
grep -q '^  path .* recon_cnt=0 ' "$LOGDIR/sessions.txt" ||
	die "the server's path reconnected"
grep -q ' failovers=0 reconnects=0 ' "$P" || die "the client's path failed over or reconnected"
kclt_finish 30
log "PASS"
