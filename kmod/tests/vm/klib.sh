# klib.sh - helpers of the kernel-server VM tests (kmod/tests/vm/0[1-9]*),
# on top of server/tests/vmlib.sh and fio-engine/tests/lib.sh (sourced
# here). The modules come from build/kmod/ (make -C kmod).
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"

KB=$TB_TOP/build/kmod
FIO_TIMEOUT=${FIO_TIMEOUT:-60}	# each run_fio; they take 1-20 s here
KLOG=$LOGDIR/dmesg.log
KMOD_LOADED=0
_dmesg_start=$(dmesg | wc -l)

# kmsgs: the kernel log since the test started.
kmsgs() { dmesg | tail -n +$((_dmesg_start + 1)); }

kmod_need() {
	local vm
	[ -f "$KB/ibtrs-server.ko" ] && [ -f "$KB/ibnbd-server.ko" ] ||
		skip "$KB/*.ko not built (make -C kmod)"
	vm=$(modinfo -F vermagic "$KB/ibtrs-server.ko" | cut -d' ' -f1)
	[ "$vm" = "$(uname -r)" ] ||
		skip "modules built for $vm, guest runs $(uname -r)"
	[ -e "$ENGINE_DIR/ibtrs.so" ] || skip "fio engine not built"
	command -v fio >/dev/null || skip "fio not installed"
	[ -n "${TB_SRV_ADDRS:-}" ] || skip "no TB_SRV_ADDRS (no RDMA paths)"
}

# kmod_load [ibtrs-server params]: both modules, dev_search_path=/dev.
kmod_load() {
	modprobe rdma_cm || die "modprobe rdma_cm"
	insmod "$KB/ibtrs-server.ko" port="$SRV_PORT" "$@" ||
		die "insmod ibtrs-server"
	KMOD_LOADED=1
	insmod "$KB/ibnbd-server.ko" dev_search_path=/dev ||
		die "insmod ibnbd-server"
	KMOD_LOADED=2
	kmsgs | grep -q "ibtrs_server: listening on port $SRV_PORT" ||
		die "no listening line in the kernel log"
}

# kmod_unload: fails the test if rmmod fails (or hangs: the test's timeout).
kmod_unload() {
	[ $KMOD_LOADED = 2 ] && { rmmod ibnbd_server || die "rmmod ibnbd_server"; }
	KMOD_LOADED=1
	rmmod ibtrs_server || die "rmmod ibtrs_server"
	KMOD_LOADED=0
}

# kmod_log_check: the modules' lines, and no kernel error report.
kmod_log_check() {
	kmsgs >"$KLOG"
	grep 'ibtrs_server\|ibnbd_server' "$KLOG" | tail -${1:-25}
	if grep -nE 'WARNING:|\bBUG\b|Oops|hung task|KASAN|UBSAN|slab|general protection|corruption|refcount_t:|circular locking|lockdep' "$KLOG"; then
		die "kernel log has errors (above)"
	fi
}

# On any exit: keep the kernel log, unload what is left.
_kmod_cleanup() {
	local rc=$?
	kmsgs >"$KLOG"
	[ $KMOD_LOADED = 2 ] && rmmod ibnbd_server
	[ $KMOD_LOADED != 0 ] && rmmod ibtrs_server
	[ -n "${KMOD_EXTRA_CLEANUP:-}" ] && eval "$KMOD_EXTRA_CLEANUP"
	(exit $rc)
	cleanup_common
}
trap _kmod_cleanup EXIT
