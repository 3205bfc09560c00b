# klib.sh - helpers of the kernel-server VM tests (kmod/tests/vm/0[1-9]*),
# on top of server/tests/vmlib.sh and fio-engine/tests/lib.sh (sourced
# here). The modules come from $TB_KMOD_DIR (the testbed sets it: build/kmod/
# for Debian's kernel, build/kmod-debug/ for the debug kernel, see
# experiments/testbed/README.md), else build/kmod/ (make -C kmod).
. "$TB_TOP/server/tests/vmlib.sh"
. "$TB_TOP/fio-engine/tests/lib.sh"

KB=${TB_KMOD_DIR:-$TB_TOP/build/kmod}	# TB_KMOD_DIR: another build (e.g. to show a test failing)
FIO_TIMEOUT=${FIO_TIMEOUT:-60}	# each run_fio; they take 1-20 s here

# ---- the debug kernel (make check-debug, experiments/testbed/README.md)
# Its IO is slow in TCG (a 4k QD16 write job of test 010 ran at 41 IOPS,
# 166 KiB/s): fio's sizes of 4 MiB and more shrink
# (debug-bin/fio, TB_FIO_SIZE_DIV), and under tests/run-vm --timeout-scale
# F (TB_TIMEOUT_SCALE in the guest) every `timeout D CMD` of a test and of
# the libraries' helpers (run_fio, kfio, ...) waits D*F: the bounds stay
# bounds, scaled like the scripts' own TIMEOUT.
[ "${TB_KERNEL:-}" = debug ] && PATH=$TB_TOP/kmod/tests/vm/debug-bin:$PATH
# TS: the scale as an integer, for a test's own durations (holds, runtimes
# of jobs that must outlast a step, waits): 1 on Debian's kernel.
TS=${TB_TIMEOUT_SCALE:-1}
[[ $TS =~ ^[1-9][0-9]*$ ]] || TS=1
# Heartbeats scale too: there the default 1.5 s (3 x 500 ms) expired while
# a session was being set up (014: "nothing received for 1775 ms"). The
# kernel modules (kmod_load, kclt_load) get TS x 500 ms unless the test
# passes its own value (after this one, so it wins); the fio engine's
# jobs (run_fio, start_fio) get it too, over a test's own value: it goes
# in IBNBD_FIO_EXTRA, which comes last, as fio takes an engine option
# only after --ioengine; and the daemon (start_server: IBNBD_SRV_EXTRA;
# 021 on the debug kernel: "heartbeat timeout: nothing received for
# 1613 ms" from both paths under IO).
KHB=()
if [ "$TS" -gt 1 ]; then
	KHB=("hb_interval_ms=$((500 * TS))")
	IBNBD_FIO_EXTRA="${IBNBD_FIO_EXTRA:-} --hb_interval=$((500 * TS))"
	IBNBD_SRV_EXTRA="${IBNBD_SRV_EXTRA:-} --hb-interval $((500 * TS))"
fi
if [[ ${TB_TIMEOUT_SCALE:-1} =~ ^[0-9]+$ ]] && [ "${TB_TIMEOUT_SCALE:-1}" -gt 1 ]; then
	timeout() {
		local a=()
		while [ $# -gt 0 ]; do
			case $1 in
			-k|-s|--kill-after|--signal) a+=("$1" "$2"); shift 2 ;;
			-*) a+=("$1"); shift ;;
			*) break ;;
			esac
		done
		[ $# -gt 0 ] || { command timeout "${a[@]}"; return; }
		local d=$1
		shift
		[[ $d =~ ^[0-9]+(\.[0-9]+)?s?$ ]] &&
			d=$(awk -v d="${d%s}" -v f="$TB_TIMEOUT_SCALE" 'BEGIN { print d * f }')
		command timeout "${a[@]}" "$d" "$@"
	}
fi
KLOG=$LOGDIR/dmesg.log
KMOD_LOADED=0
# A marker line in the kernel log where the test starts: counting lines
# fails once the ring buffer (128 KiB) is full and drops the oldest ones.
_kmsg_mark="klib: test $TEST_NAME starts ($$.$RANDOM)"
echo "$_kmsg_mark" 2>/dev/null >/dev/kmsg

# kmsgs: the kernel log since the test started (all of the buffer when the
# test's own lines have pushed the marker out).
kmsgs() {
	dmesg | awk -v m="$_kmsg_mark" '{ l[NR] = $0 } index($0, m) { s = NR }
		END { for (i = s + 1; i <= NR; i++) print l[i] }'
}

# ---- kmemleak (the debug kernel; nothing happens without
# /sys/kernel/debug/kmemleak). The log of kmemleak holds every object it
# ever found unreferenced, allocated by the boot or by earlier tests too:
# the test's start clears it ("clear": what was reported so far is never
# reported again), and at its end (_kmod_cleanup, after the modules are
# removed: an object only a module's globals pointed to is unreferenced
# once the module is gone) only the objects whose allocation backtrace
# has a frame of our modules fail the test. A frame is ours when kmemleak
# names the module ("[ibtrs_server]", KMEMLEAK_MODS) or, the module being
# unloaded (the address no longer resolves), when its address lies in a
# range one of our modules occupied during this test (recorded at each
# insmod from /proc/modules; the debug kernel boots with no_hash_pointers,
# so kmemleak prints real addresses). Kmemleak reports an object only when
# two scans found it unreferenced and unchanged (a scan takes ~35 s in the
# TCG guest), and an object freed late (RCU, a work item) looks leaked
# until it is freed: the end runs pause, scan, pause, scan, read; pause,
# read again (freed objects are gone from the list) and counts only the
# objects of both reads. Results in $LOGDIR/kmemleak.txt (ours) and
# kmemleak-all.txt (every report of the second read).
KMEMLEAK=/sys/kernel/debug/kmemleak
KMEMLEAK_MODS=${KMEMLEAK_MODS:-ibtrs_[a-z_]*|ibnbd_[a-z_]*}
KML_RANGES=$LOGDIR/kmemleak-ranges.txt
: >"$KML_RANGES"
[ -w "$KMEMLEAK" ] && echo clear >"$KMEMLEAK" 2>/dev/null

# _kml_note: records the address ranges of our loaded modules, one line
# "NAME LO HI" (16 hex digits each, HI excluded) per module instance.
_kml_note() {
	local name size _a _b _c addr
	[ -w "$KMEMLEAK" ] || return 0
	while read -r name size _a _b _c addr _; do
		[[ $name =~ ^($KMEMLEAK_MODS)$ && $addr =~ ^0x[0-9a-f]+$ ]] || continue
		printf '%s %016x %016x\n' "$name" "$addr" "$((addr + size))"
	done </proc/modules >>"$KML_RANGES"
	sort -u -o "$KML_RANGES" "$KML_RANGES"
}

# insmod: every load of a module in the tests goes through here.
insmod() {
	command insmod "$@" || return
	_kml_note
}

# kml_filter READ1 READ2: the records of READ2 that READ1 has too (same
# header line and backtrace; the age differs) with a frame of ours; status
# 1 when there is one.
kml_filter() {
	awk -v re="[[]($KMEMLEAK_MODS)[]]" -v ranges="$KML_RANGES" '
	function ours(line,   f, a, i) {
		if (line ~ re) return 1
		# "[<ffffffffc0a1b2c3>] 0xffffffffc0a1b2c3": that module is gone
		if (split(line, f, " ") < 2 || f[2] !~ /^0x[0-9a-f]+$/) return 0
		a = "x" substr(f[2], 3)
		while (length(a) < 17) a = "x0" substr(a, 2)
		for (i = 1; i <= nr; i++) if (a >= lo[i] && a < hi[i]) return 1
		return 0
	}
	function flush() {
		if (head == "") return
		if (recfile == 1) seen[head bt] = 1
		else if ((head bt) in seen && mine) { print rec; n++ }
		head = ""
	}
	BEGIN {
		while ((getline l < ranges) > 0) {
			split(l, f, " "); nr++; lo[nr] = "x" f[2]; hi[nr] = "x" f[3]
		}
	}
	FNR == 1 { flush(); file++ }
	/^unreferenced object / {
		flush(); head = $0; rec = $0; bt = ""; mine = 0; inbt = 0; recfile = file
		next
	}
	head != "" {
		rec = rec "\n" $0
		if (inbt && $1 ~ /^\[</) { bt = bt "|" $2; if (ours($0)) mine = 1 }
		else inbt = ($1 == "backtrace:")
	}
	END { flush(); exit n > 0 }
	' "$1" "$2"
}

# kml_check: 0 when kmemleak reports no object allocated by our modules
# (or there is no kmemleak, or none of our modules was loaded); else prints
# them and returns 1.
kml_check() {
	local a=$LOGDIR/kmemleak-1.txt b=$LOGDIR/kmemleak-all.txt n
	[ -w "$KMEMLEAK" ] || return 0
	_kml_note
	[ -s "$KML_RANGES" ] || return 0
	sleep "${KML_PAUSE:-2}"
	echo scan >"$KMEMLEAK"
	sleep "${KML_PAUSE:-2}"
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >"$a"
	sleep "${KML_PAUSE:-2}"
	cat "$KMEMLEAK" >"$b"
	kml_filter "$a" "$b" >"$LOGDIR/kmemleak.txt" && return 0
	n=$(grep -c '^unreferenced object' "$LOGDIR/kmemleak.txt")
	echo "[$TEST_NAME] kmemleak: $n unreferenced object(s) allocated by our modules:"
	head -n 120 "$LOGDIR/kmemleak.txt"
	return 1
}

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
	insmod "$KB/ibtrs-server.ko" port="$SRV_PORT" "${KHB[@]}" "$@" ||
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

# Kernel-log reports that fail a test. Beyond WARN/BUG/Oops: what the debug
# kernel (run --kernel debug) prints: KASAN ("BUG: KASAN: ..."), lockdep
# ("WARNING: possible circular locking dependency", "possible recursive
# locking", "inconsistent lock state", "suspicious RCU usage", ...),
# DEBUG_ATOMIC_SLEEP ("BUG: sleeping function called from invalid
# context"), DMA-API debugging, debugobjects ("ODEBUG: free active ..."),
# DEBUG_LIST ("list_add corruption", "list_del corruption"), hung tasks
# ("INFO: task X blocked for more than N seconds"), soft lockups and RCU
# stalls.
KLOG_ERRORS='WARNING:|\bBUG\b|Oops|hung task|blocked for more than|KASAN|UBSAN|slab|general protection|corruption|refcount_t:|circular locking|lockdep|possible recursive locking|inconsistent lock state|suspicious RCU usage|bad unlock balance|held lock freed|lock held when returning|irq lock inversion|sleeping function called from invalid context|DMA-API|ODEBUG|list_(add|del) corruption|soft lockup|rcu_.* detected stalls|detected stall'

# kmod_log_check: the modules' lines, and no kernel error report.
kmod_log_check() {
	kmsgs >"$KLOG"
	grep 'ibtrs_server\|ibnbd_server' "$KLOG" | tail -${1:-25}
	if grep -nE "$KLOG_ERRORS" "$KLOG"; then
		die "kernel log has errors (above)"
	fi
}

# kmod_log_check_now: no kernel error report so far (for tests that log
# more than the ring buffer holds: check before the lines are dropped).
kmod_log_check_now() {
	kmsgs >"$KLOG"
	if grep -nE "$KLOG_ERRORS" "$KLOG"; then
		die "kernel log has errors (above)"
	fi
}

# krxe_counters: every rxe device's non-zero hardware counters (retries,
# RNR NAKs, sequence errors, ...) and the softnet drops, in
# $LOGDIR/rxe-counters.txt and the log: what a failed test's transport saw.
krxe_counters() {
	local c d
	for d in /sys/class/infiniband/*/ports/1/hw_counters; do
		[ -d "$d" ] || continue
		for c in "$d"/*; do
			[ "$(cat "$c" 2>/dev/null || echo 0)" = 0 ] ||
				echo "$(echo "$d" | cut -d/ -f5) $(basename "$c") $(cat "$c")"
		done
	done >"$LOGDIR/rxe-counters.txt"
	c=0
	while read -r _ dropped squeezed _; do
		echo "softnet cpu$c dropped $((16#$dropped)) squeezed $((16#$squeezed))"
		c=$((c + 1))
	done </proc/net/softnet_stat >>"$LOGDIR/rxe-counters.txt"
	log "rxe counters: $(grep -E 'retry|rnr|seq_err|dup|out_of|dropped [1-9]' "$LOGDIR/rxe-counters.txt" | tr '\n' ';')"
}

# On any exit: keep the kernel log, unload what is left, and (the debug
# kernel) fail a test that passed so far when kmemleak reports an object
# of our modules.
_kmod_cleanup() {
	local rc=$?
	kmsgs >"$KLOG"
	[ "$rc" != 0 ] && [ "$rc" != 77 ] && krxe_counters
	[ $KMOD_LOADED = 2 ] && rmmod ibnbd_server
	[ $KMOD_LOADED != 0 ] && rmmod ibtrs_server
	[ -n "${KMOD_EXTRA_CLEANUP:-}" ] && eval "$KMOD_EXTRA_CLEANUP"
	if [ "$rc" != 77 ] && ! kml_check; then
		[ "$rc" = 0 ] && { log "FAIL: kmemleak reports objects of our modules (above; $LOGDIR/kmemleak.txt)"; rc=1; }
	fi
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

# kclt_load [ibtrs-client params]: both client modules (ibnbd-client's
# parameters in $KCLT_NBD_ARGS); on exit every
# device is unmapped and the client modules are removed before the server's.
kclt_load() {
	modprobe rdma_cm || die "modprobe rdma_cm"
	insmod "$KB/ibtrs-client.ko" "${KHB[@]}" "$@" || die "insmod ibtrs-client"
	KCLT_LOADED=1
	# shellcheck disable=SC2086 # KCLT_NBD_ARGS: ibnbd-client parameters
	insmod "$KB/ibnbd-client.ko" port="$SRV_PORT" ${KCLT_NBD_ARGS:-} ||
		die "insmod ibnbd-client"
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
	# KCLT_EXTRA_CLEANUP runs before the devices go (e.g. a umount)
	[ -n "${KCLT_EXTRA_CLEANUP:-}" ] && eval "$KCLT_EXTRA_CLEANUP"
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

# ---- shared steps of the client tests (020-023, 03x) ----

# kfio NAME [fio args]: libaio, direct IO on /dev/$KCLT_DEV, bounded by
# $FIO_TIMEOUT; fails the test on an error.
kfio() {
	local name=$1
	shift
	timeout -k 10 "$FIO_TIMEOUT" fio --name="$name" \
		--filename="/dev/$KCLT_DEV" --ioengine=libaio --direct=1 \
		"$@" >"$LOGDIR/fio-$name.log" 2>&1 ||
		die "fio $name failed: $(tail -5 "$LOGDIR/fio-$name.log")"
	grep -q 'err= 0' "$LOGDIR/fio-$name.log" || die "fio $name reported errors"
	log "fio $name: OK ($(grep -o 'IOPS=[^,]*' "$LOGDIR/fio-$name.log" | tr '\n' ' '))"
}

# kfio_bg NAME [fio args]: kfio in the background; $KFIO_PID.
kfio_bg() {
	local name=$1
	shift
	timeout -k 10 "$FIO_TIMEOUT" fio --name="$name" \
		--filename="/dev/$KCLT_DEV" --ioengine=libaio --direct=1 \
		"$@" >"$LOGDIR/fio-$name.log" 2>&1 &
	KFIO_PID=$!
}

# kfio_wait NAME WHAT: waits for kfio_bg's fio; fails the test unless it
# ended with status 0 and err= 0 ("fio failed (rc) WHAT: ...").
kfio_wait() {
	local rc
	wait "$KFIO_PID"
	rc=$?
	[ $rc -eq 0 ] || die "fio failed ($rc) $2: $(tail -5 "$LOGDIR/fio-$1.log")"
	grep -q 'err= 0' "$LOGDIR/fio-$1.log" || die "fio reported errors"
}

# cmp_pattern WRITE_DEV READ_DEV OFFSET_MIB [MULT]: 4 MiB of a pattern
# (byte i = i * MULT + offset/4096, period 4099; MULT defaults to 7)
# written through one device (O_DIRECT) must read back equal from the other.
cmp_pattern() {
	python3 - "$1" "$2" "$3" "${4:-7}" <<'PYEOF' || die "$1 -> $2: content differs"
import mmap, os, sys
wdev, rdev, off, mult = sys.argv[1], sys.argv[2], int(sys.argv[3]) << 20, int(sys.argv[4])
n = 4 << 20
pat = bytes((i * mult + off // 4096) & 0xff for i in range(4099))
buf = mmap.mmap(-1, n)
data = (pat * (n // len(pat) + 1))[:n]
buf[:] = data
fd = os.open(wdev, os.O_WRONLY | os.O_DIRECT)
assert os.pwritev(fd, [buf], off) == n
os.close(fd)
rbuf = mmap.mmap(-1, n)
fd = os.open(rdev, os.O_RDONLY | os.O_DIRECT)
r = os.preadv(fd, [rbuf], off)
os.close(fd)
if r != n or rbuf[:] != data:
    print("%s -> %s at %d: %d bytes read, content differs" % (wdev, rdev, off, r))
    sys.exit(1)
print("%s -> %s: 4 MiB at %d MiB equal" % (wdev, rdev, off >> 20))
PYEOF
}

# kclt_check_2paths: the paths file of $KCLT_DEV (kept in
# $LOGDIR/paths.txt): both paths connected with requests and answers, reads
# remotely invalidated (no LOCAL_INV), no protocol error.
kclt_check_2paths() {
	cat "$KCLT_CTL/devices/$KCLT_DEV/paths" | tee "$LOGDIR/paths.txt"
	[ "$(grep -c 'state=connected reqs=[1-9][0-9]* rsps=[1-9]' "$LOGDIR/paths.txt")" = 2 ] ||
		die "not both paths connected with requests and answers"
	[ "$(grep -c 'local_invs=0 ' "$LOGDIR/paths.txt")" = 2 ] ||
		die "reads fell back to LOCAL_INV"
	grep -q 'proto_errors=[1-9]' "$LOGDIR/paths.txt" && die "protocol errors counted"
}

# kclt_wait_connected FILE N: up to 10 s for N paths in FILE to be connected.
kclt_wait_connected() {
	local i
	for i in $(seq 1 100); do
		[ "$(grep -c 'state=connected' "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# kclt_cut_setup SESSNAME: the set-up of the path-cut tests (022, 023):
# kernel server and client (reconnect backoff 0.5-2 s) serving nullb0,
# mapped over 2 paths; $P is the device's paths file, FIO_TIMEOUT=150.
kclt_cut_setup() {
	kmod_need
	kclt_need
	need_paths 2
	type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
	setup_nullb
	kmod_load
	kclt_load reconnect_min_ms=500 reconnect_max_ms=2000
	kclt_map "sessname=$1$(kclt_paths 2) device_path=nullb0"
	P=$KCLT_CTL/devices/$KCLT_DEV/paths
	FIO_TIMEOUT=150
}

# kclt_cut_fio NAME [SIZE]: SIZE (48m) of verified 4k random writes at
# 6 MiB/s (~8 s of writes for 48m, then the verify reads) in the
# background, 2 s later both
# paths must be carrying IO; it returns once a path has IO in flight (on
# the debug kernel fio's start is slow: 023's cut once found 3 requests
# sent and none in flight, so nothing failed over).
kclt_cut_fio() {
	local i
	kfio_bg "$1" --rw=randwrite --bs=4k --iodepth=16 --size="${2:-48m}" --rate=6m \
		--verify=crc32c --do_verify=1 --verify_fatal=1
	sleep 2
	cat "$P"
	[ "$(grep -c 'state=connected reqs=[1-9]' "$P")" = 2 ] ||
		die "not both paths carrying IO before the cut"
	for ((i = 0; i < 100 * TS; i++)); do
		grep -q 'inflight=[1-9]' "$P" && return 0
		sleep 0.1
	done
	die "no path had IO in flight in $((10 * TS)) s"
}

# kclt_finish [LOG LINES]: unmap, unload the four modules, check the log.
kclt_finish() {
	kclt_unmap "$KCLT_DEV"
	kclt_unload
	kmod_unload
	kmod_log_check "${1:-25}"
}

# kclt_cli_need: the ibnbd tool (kmod/cli), built here if the host has not
# (the guest's writes stay in its overlay); $IBNBD is its path.
kclt_cli_need() {
	IBNBD=$TB_TOP/build/cli/ibnbd
	make -s -C "$TB_TOP/kmod/cli" >"$LOGDIR/cli-build.log" 2>&1 ||
		die "building kmod/cli failed: $(tail -5 "$LOGDIR/cli-build.log")"
	[ -x "$IBNBD" ] || die "no $IBNBD after make -C kmod/cli"
}

# kclt_cli_map ARGS...: ibnbd map ARGS; $KCLT_DEV is the new device (the
# tool's output, /dev/ibnbdN, must be a block device).
kclt_cli_map() {
	local out
	out=$("$IBNBD" map "$@" 2>"$LOGDIR/cli-err.txt") ||
		die "ibnbd map $*: $(cat "$LOGDIR/cli-err.txt")"
	[ -b "$out" ] || die "ibnbd map printed '$out', not a block device"
	KCLT_DEV=${out#/dev/}
	[ -d "$KCLT_CTL/devices/$KCLT_DEV" ] || die "no $KCLT_CTL/devices/$KCLT_DEV"
}

# kclt_cli_map_fails ERRNO_NAME ARGS...: ibnbd map must exit 1 naming the
# errno; its stderr is left in $LOGDIR/cli-err.txt.
kclt_cli_map_fails() {
	local want=$1 rc
	shift
	"$IBNBD" map "$@" >/dev/null 2>"$LOGDIR/cli-err.txt" && rc=0 || rc=$?
	[ $rc = 1 ] || die "ibnbd map $*: exit $rc, expected 1: $(cat "$LOGDIR/cli-err.txt")"
	grep -q "($want)" "$LOGDIR/cli-err.txt" ||
		die "ibnbd map $*: not $want: $(cat "$LOGDIR/cli-err.txt")"
}

# kclt_paths_args N: "--path c1@s1 --path c2@s2" for the first N paths.
kclt_paths_args() {
	local p out=
	for p in $(fio_paths "$1" | tr , ' '); do out="$out --path $p"; done
	echo "$out"
}
