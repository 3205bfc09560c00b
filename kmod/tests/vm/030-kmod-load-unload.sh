#!/bin/bash
# 030-kmod-load-unload: the four modules (ibtrs-server, ibnbd-server,
# ibtrs-client, ibnbd-client) loaded and removed 20 times with rdma_cm
# loaded: after each load the users are counted right (ibtrs-* used once,
# by its ibnbd-*; ibnbd-* by nobody), the control file and the server's
# listener exist, after each removal nothing of them is left in /sys/module
# and rdma_cm's / ib_core's reference counts are back to where they were;
# the kernel log has no WARNING, BUG, Oops, KASAN or slab report.
# TIMEOUT=120
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
modprobe rdma_cm || die "modprobe rdma_cm"
ROUNDS=${ROUNDS:-20}
refcnt() { local r=gone; read -r r 2>/dev/null <"/sys/module/$1/refcnt"; echo "$r"; }
cm0=$(refcnt rdma_cm)
core0=$(refcnt ib_core)
log "before: rdma_cm refcnt $cm0, ib_core refcnt $core0"
t0=$(date +%s%N)
for i in $(seq 1 "$ROUNDS"); do
	kmod_load
	kclt_load
	r="ibtrs_server=$(refcnt ibtrs_server) ibnbd_server=$(refcnt ibnbd_server)"
	r="$r ibtrs_client=$(refcnt ibtrs_client) ibnbd_client=$(refcnt ibnbd_client)"
	[ "$r" = "ibtrs_server=1 ibnbd_server=0 ibtrs_client=1 ibnbd_client=0" ] ||
		die "round $i: refcounts $r"
	[ -d /sys/kernel/ibtrs-server ] || die "round $i: no /sys/kernel/ibtrs-server"
	[ "$(ls "$KCLT_CTL/devices")" = "" ] || die "round $i: devices listed"
	kclt_unload
	kmod_unload
	for m in ibtrs_server ibnbd_server ibtrs_client ibnbd_client; do
		[ -e /sys/module/$m ] && die "round $i: /sys/module/$m left"
	done
	[ -e "$KCLT_CTL" ] && die "round $i: $KCLT_CTL left"
	[ "$(refcnt rdma_cm)" = "$cm0" ] && [ "$(refcnt ib_core)" = "$core0" ] ||
		die "round $i: rdma_cm refcnt $(refcnt rdma_cm) (was $cm0), ib_core $(refcnt ib_core) (was $core0)"
	[ $((i % 5)) = 0 ] && log "round $i: refcounts $r, back to 0"
done
log "$ROUNDS rounds in $((($(date +%s%N) - t0) / 1000000)) ms"
n=$(kmsgs | grep -c "ibtrs_server: listening on port $SRV_PORT")
[ "$n" = "$ROUNDS" ] || die "$n listening lines for $ROUNDS loads"
kmod_log_check 4
log "PASS"
