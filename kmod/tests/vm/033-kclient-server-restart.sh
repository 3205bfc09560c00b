#!/bin/bash
# 033-kclient-server-restart: the kernel server restarted under the kernel
# client's IO. nullb0 mapped over 2 paths; during a verified fio write job
# on /dev/ibnbdN the server modules are removed (rmmod closes the paths
# and drops the session) and loaded again 3 s later. The client must see
# its paths fail, keep the IO waiting (ctrl_loss_tmo_ms, 30 s), reconnect
# both paths to the new server (reconnects >= 1), reopen the device on the
# new session (its old handle is unknown there: -ESTALE -> "reopened"),
# and fio must end without an error and verify every block it wrote;
# unmap, rmmod, clean kernel log.
# TIMEOUT=150
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
setup_nullb
kmod_load
kclt_load reconnect_min_ms=500 reconnect_max_ms=2000
kclt_map "sessname=krst$(kclt_paths 2) device_path=nullb0"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
FIO_TIMEOUT=100
kclt_cut_fio rst
log "removing the server modules"
t0=$(date +%s%N)
kmod_unload
log "server modules removed in $((($(date +%s%N) - t0) / 1000000)) ms"
sleep 3
kill -0 $KFIO_PID 2>/dev/null || die "fio ended while the server was away"
cat "$P" | tee "$LOGDIR/paths-away.txt"
log "loading the server modules again"
kmod_load
kfio_wait rst "across the server restart"
kclt_wait_connected "$P" 2
cat "$P" | tee "$LOGDIR/paths-after.txt"
[ "$(grep -c 'state=connected.*reconnects=[1-9]' "$LOGDIR/paths-after.txt")" = 2 ] ||
	die "not both paths reconnected"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
kmsgs | grep -q "ibnbd_client: .*reopened nullb0" || die "no reopen of nullb0 logged"
kmsgs | grep 'ibtrs_client\|ibnbd_client' | grep -E 'failed|closed|connected|reopen' | head -12
kclt_finish 10
log "PASS"
