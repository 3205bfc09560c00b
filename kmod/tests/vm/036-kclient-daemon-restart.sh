#!/bin/bash
# 036-kclient-daemon-restart: the userspace daemon (server/build/
# ibnbd-serverd) killed under the kernel client's IO. nullb0 served by the
# daemon, mapped over 2 paths; during a verified fio write job on
# /dev/ibnbdN (48 MiB, 4k randwrite at 6 MiB/s, QD16) the daemon is killed with
# SIGKILL and started again 3 s later. The client must fail its paths,
# keep the IO waiting (ctrl_loss_tmo_ms, 30 s), reconnect both paths
# (reconnects >= 1), reopen the device on the daemon's new session
# ("reopened nullb0"), and fio must end without an error and verify every
# block; unmap, rmmod, the daemon exits 0 on SIGTERM, clean kernel log.
# TIMEOUT=150
. "$TB_TOP/kmod/tests/vm/klib.sh"
kclt_need
need_bins
need_paths 2
setup_nullb
start_server
kclt_load reconnect_min_ms=500 reconnect_max_ms=2000
kclt_map "sessname=kdrs$(kclt_paths 2) device_path=nullb0"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
FIO_TIMEOUT=100
kclt_cut_fio drs
log "killing ibnbd-serverd (SIGKILL)"
kill -KILL "$SRV_PID"
wait "$SRV_PID" 2>/dev/null
SRV_PID=
mv "$SRV_LOG" "$LOGDIR/serverd-killed.log"
sleep 3
kill -0 $KFIO_PID 2>/dev/null || die "fio ended while the daemon was away"
cat "$P" | tee "$LOGDIR/paths-away.txt"
log "starting ibnbd-serverd again"
start_server
kfio_wait drs "across the daemon's restart"
kclt_wait_connected "$P" 2 || die "not both paths connected again"
cat "$P" | tee "$LOGDIR/paths-after.txt"
[ "$(grep -c 'state=connected.*reconnects=[1-9]' "$LOGDIR/paths-after.txt")" = 2 ] ||
	die "not both paths reconnected"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
kmsgs | grep -q "ibnbd_client: .*reopened nullb0" || die "no reopen of nullb0 logged"
kmsgs | grep 'ibtrs_client\|ibnbd_client' | grep -E 'failed|closed|connected|reopen' | head -12
kclt_unmap "$KCLT_DEV"
kclt_unload
stop_server || die "ibnbd-serverd exited with $?"
kmod_log_check
log "PASS"
