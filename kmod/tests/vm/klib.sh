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

# ---- client modules (ibtrs-client.ko, ibnbd-client.ko; tests 02x) ----
KCLT_CTL=/sys/class/ibnbd-client/ctl
KCLT_LOADED=0

kclt_need() {
	[ -f "$KB/ibtrs-client.ko" ] && [ -f "$KB/ibnbd-client.ko" ] ||
		skip "$KB/ib*-client.ko not built (make -C kmod)"
	command -v fio >/dev/null || skip "fio not installed"
	[ -n "${TB_SRV_ADDRS:-}" ] || skip "no TB_SRV_ADDRS (no RDMA paths)"
}

# kclt_load [ibtrs-client params]: both client modules; on exit every
# device is unmapped and the client modules are removed before the server's.
kclt_load() {
	modprobe rdma_cm || die "modprobe rdma_cm"
	insmod "$KB/ibtrs-client.ko" "$@" || die "insmod ibtrs-client"
	KCLT_LOADED=1
	insmod "$KB/ibnbd-client.ko" port="$SRV_PORT" || die "insmod ibnbd-client"
	KCLT_LOADED=2
	[ -w "$KCLT_CTL/map_device" ] || die "no $KCLT_CTL/map_device"
	trap _kclt_cleanup EXIT
}

kclt_unload() {
	[ $KCLT_LOADED = 2 ] && { rmmod ibnbd_client || die "rmmod ibnbd_client"; }
	KCLT_LOADED=1
	rmmod ibtrs_client || die "rmmod ibtrs_client"
	KCLT_LOADED=0
}

# kclt_paths N: " path=c1@s1 path=c2@s2" for the first N testbed paths.
kclt_paths() {
	local p out=
	for p in $(fio_paths "$1" | tr , ' '); do out="$out path=$p"; done
	echo "$out"
}

# kclt_map "map string": maps; $KCLT_DEV is the new device's name (ibnbdN).
kclt_map() {
	local before after d
	before=$(ls "$KCLT_CTL/devices" 2>/dev/null)
	echo "$1" >"$KCLT_CTL/map_device" || die "map_device '$1' failed"
	after=$(ls "$KCLT_CTL/devices")
	KCLT_DEV=
	for d in $after; do
		echo "$before" | grep -qx "$d" || KCLT_DEV=$d
	done
	[ -n "$KCLT_DEV" ] || die "no new device after map_device '$1'"
	for d in $(seq 1 50); do [ -b "/dev/$KCLT_DEV" ] && break; sleep 0.1; done
	[ -b "/dev/$KCLT_DEV" ] || die "/dev/$KCLT_DEV did not appear"
	log "mapped /dev/$KCLT_DEV: $1"
}

# kclt_map_fails "map string": the write must fail with EINVAL.
kclt_map_fails() {
	local err
	if err=$(echo "$1" 2>&1 >"$KCLT_CTL/map_device"); then
		die "map_device accepted '$1'"
	fi
	echo "$err" | grep -q 'Invalid argument' ||
		die "map_device '$1': $err (not EINVAL)"
}

kclt_unmap() {	# NAME [normal|force]
	echo "${2:-normal}" >"$KCLT_CTL/devices/$1/unmap_device" ||
		die "unmap of $1 failed"
	[ -e "$KCLT_CTL/devices/$1" ] && die "$1 still in sysfs after unmap"
	[ -b "/dev/$1" ] && die "/dev/$1 still there after unmap"
	log "unmapped $1"
}

_kclt_cleanup() {
	local rc=$? d
	if [ $KCLT_LOADED != 0 ]; then
		for d in $(ls "$KCLT_CTL/devices" 2>/dev/null); do
			echo force >"$KCLT_CTL/devices/$d/unmap_device"
		done
		[ $KCLT_LOADED = 2 ] && rmmod ibnbd_client
		rmmod ibtrs_client
	fi
	(exit $rc)
	_kmod_cleanup
}
