#!/bin/bash
# 014-kserver-rmmod-busy: the server modules are removed while a 2-path
# session does IO (writes held 2 s each by dm-delay, so requests are in
# flight in the block layer): rmmod ibnbd_server must close every path,
# wait for the in-flight IO to be answered (and dropped), free the session
# and return within 15 s; rmmod ibtrs_server follows; the kernel log has no
# error report. Asserted: requests were in flight at the server before the
# rmmod (sysfs active > 0), the session and the device were closed with IO
# in flight and its claim released only when it drained. The client then
# fails its IO (every path down beyond ctrl_loss_tmo=2) and fio ends.
# The hold is 2 s, not less: the device is closed after the session's
# "disconnected" line and a grace period (synchronize_rcu()), which on a
# loaded TCG host took long enough for 300 ms writes to land in between
# (CI, 2026-12-02: 16 in flight at "disconnected", none at "closed").
# TIMEOUT=180
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
need_paths 2
setup_nullb
dm_delay ibnbd-krm /dev/nullb0 0 $((2000 * TS))
kmod_load

start_fio busy --paths="$(fio_paths 2)" --devpath=mapper/ibnbd-krm \
	--rw=randwrite --bs=4k --iodepth=16 --size=64m --time_based \
	--runtime=60 --ctrl_loss_tmo=2
for i in $(seq 1 100); do
	kmsgs | grep -q 'opened .*ibnbd-krm (rw)' && break
	sleep 0.1
done
kmsgs | grep -q 'opened .*ibnbd-krm (rw)' || die "fio never opened the device"
sleep 2
cat /sys/kernel/ibtrs-server/sessions | tee "$LOGDIR/sessions.txt"
cat /sys/kernel/ibnbd-server/devices
grep -q '^sess .* active=[1-9]' "$LOGDIR/sessions.txt" ||
	die "no request in flight at the server before rmmod"
t0=$(date +%s)
timeout 15 rmmod ibnbd_server || die "rmmod ibnbd_server failed or took > 15 s"
KMOD_LOADED=1
log "rmmod ibnbd_server took $(($(date +%s) - t0)) s"
kmsgs | grep -E 'disconnected \([0-9]+ IOs in flight\)' | tail -2
kmsgs | grep -Eq 'disconnected \([1-9][0-9]* IOs in flight\)' ||
	die "rmmod found no IO in flight: the test did not test the wait"
kmsgs | grep -Eq 'closed .*ibnbd-krm .*[1-9][0-9]* IOs in flight' ||
	die "the device was closed with no IO in flight"
kmsgs | grep -q 'in-flight IO drained' ||
	die "no in-flight-IO-drained line: the claim was not held until the IO landed"
timeout 15 rmmod ibtrs_server || die "rmmod ibtrs_server failed"
KMOD_LOADED=0
for i in $(seq 1 150); do
	kill -0 $FIO_PID 2>/dev/null || break
	sleep 0.2
done
kill -0 $FIO_PID 2>/dev/null && die "fio still running 30 s after the server left"
kmod_log_check 30
log "PASS"
