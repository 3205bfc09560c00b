#!/bin/bash
# 045-kclient-mr-modes: ibtrs-client's memory-registration and invalidation
# modes (module parameters mr_mode and inval_mode, kmod/README.md).
#  1. a bad value fails the load: insmod mr_mode=bogus, inval_mode=bogus,
#     and mr_mode=mw and =reg, write_mode=bogus (the shared
#     names of userspace's modes, trs/common/modes.c) exit non-zero, each
#     with a kernel message that names the value and says why;
#  2. for (frwr,remote) (frwr,local) (frwr,none) (bounce,remote)
#     (bounce,none) (global,remote)
#     (global,none): ibtrs-client loaded with them (unloaded and loaded
#     again between combinations), an UNSAFE warning for global and none,
#     nullb0 of the kernel server (queue_depth 32) mapped on 1 path whose
#     paths line and sysfs files show the modes; then three phases, each
#     between two readings of the path's counters (reg_mrs, local_invs,
#     inv_rsps, reg_wrs, bounce_bytes) and of the device's completed
#     reads R:
#     a. fio 4k randrw verify=crc32c (every read one segment):
#          frwr/remote  reg_mrs = R, local_invs = 0, inv_rsps = R
#          frwr/local   reg_mrs = R, local_invs = R, inv_rsps = 0
#          frwr/none    reg_mrs = R, inv_rsps = 0, and local_invs (the
#                       LOCAL_INV in front of an MR's next REG_MR only)
#                       below R by at least 1 and at most the MRs of the
#                       path (connections x 32: their first use)
#          bounce/*     as frwr/* (the bounce slot is registered)
#          global/*     reg_mrs = local_invs = inv_rsps = 0
#        and bounce_bytes = R x 4096 under bounce (every read copied out
#        of its slot, pushed writes never), 0 in the other modes;
#     b. fio 64k write + verify reads: frwr and bounce register every
#        read, global at most every read (some may be one segment);
#        invalidations as in (a) for what was registered; bounce_bytes
#        R x 65536 under bounce;
#     c. 16 reads of 64 KiB, each from 16 pages that are not adjacent
#        (several segments): read back equal to what was written, and in
#        every mode, global included, reg_mrs = 16 (invalidations as in
#        (a) for registered reads), bounce_bytes 16 x 65536 under bounce;
#     in every phase reg_wrs = reg_mrs + local_invs, no protocol error,
#     failover or reconnect (a REG_MR refused because its MR was still
#     valid fails the path), the path still connected;
#  3. unmap, rmmod, clean kernel log (no WARNING, BUG, ...).
# TIMEOUT=900
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 1
setup_nullb
FIO_TIMEOUT=180
QD=32

# 1. bad values
modinfo -p "$KB/ibtrs-client.ko" | grep -q '^mr_mode:' || die "no mr_mode in modinfo"
modinfo -p "$KB/ibtrs-client.ko" | grep -q '^inval_mode:' || die "no inval_mode in modinfo"
modprobe rdma_cm || die "modprobe rdma_cm"
while IFS='|' read -r bad why; do
	if command insmod "$KB/ibtrs-client.ko" "$bad" 2>"$LOGDIR/insmod-bad.txt"; then
		rmmod ibtrs_client
		die "insmod ibtrs-client $bad succeeded"
	fi
	lsmod | grep -q '^ibtrs_client ' && die "ibtrs_client loaded after $bad"
	p=${bad%%=*}
	kmsgs | grep -qF "ibtrs_client: $p '${bad#*=}': $why" ||
		die "no clear kernel message for $bad: $(kmsgs | tail -3)"
	log "insmod $bad refused: $(kmsgs | grep -F "$p '${bad#*=}'" | tail -1)"
done <<'EOT'
mr_mode=bogus|mr_mode is frwr, bounce or global
inval_mode=bogus|inval_mode is remote, local or none
mr_mode=mw|Linux 6.1 offers memory windows to userspace only
mr_mode=reg|kernel ULPs register a buffer per IO by fast registration
write_mode=bogus|write_mode is push or pull
EOT

kmod_load queue_depth=$QD

# _snap: "R reg_mrs local_invs inv_rsps reg_wrs proto_errors failovers
# reconnects bounce_bytes" of $KCLT_DEV and its one path ($PD).
_snap() {
	echo "$(awk '{ print $1 }' "/sys/block/$KCLT_DEV/stat")" \
		"$(cat "$PD/reg_mrs")" "$(cat "$PD/local_invs")" \
		"$(cat "$PD/inv_rsps")" "$(cat "$PD/reg_wrs")" \
		"$(cat "$PD/proto_errors")" "$(cat "$PD/failovers")" \
		"$(cat "$PD/reconnects")" "$(cat "$PD/bounce_bytes")"
}

# _delta BEFORE AFTER: R REG LI INV RW PE FO RC BB, the differences.
_delta() {
	local -a a b
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	R=$((b[0] - a[0])) REG=$((b[1] - a[1])) LI=$((b[2] - a[2]))
	INV=$((b[3] - a[3])) RW=$((b[4] - a[4])) PE=$((b[5] - a[5]))
	FO=$((b[6] - a[6])) RC=$((b[7] - a[7])) BB=$((b[8] - a[8]))
}

# _per X: X per read, 3 decimals.
_per() { awk -v x="$1" -v r="$R" 'BEGIN { printf "%.3f", r ? x / r : 0 }'; }

# _want COND TEXT: fails the test unless the arithmetic COND holds.
_want() {
	(($1)) || die "$MODE $PHASE: want $1 ($2): R=$R reg_mrs=$REG local_invs=$LI inv_rsps=$INV reg_wrs=$RW bounce_bytes=$BB"
}

# _common: what holds in every mode and phase.
_common() {
	log "$MODE $PHASE: reads $R, per read: reg_mrs $(_per $REG) local_invs $(_per $LI) inv_rsps $(_per $INV) reg_wrs $(_per $RW)"
	echo "$MODE $PHASE R=$R reg_mrs=$REG local_invs=$LI inv_rsps=$INV reg_wrs=$RW bounce_bytes=$BB" >>"$LOGDIR/counts.txt"
	_want "R > 0" "reads were made"
	_want "RW == REG + LI" "reg_wrs counts REG_MR and LOCAL_INV"
	_want "PE == 0 && FO == 0 && RC == 0" "no protocol error ($PE), failover ($FO) or reconnect ($RC)"
	[ "$(cat "$PD/state")" = connected ] || die "$MODE $PHASE: path $(cat "$PD/state")"
}

# _bounce_rule BYTES: bytes copied through the bounce pool by this phase's
# reads (BYTES each) under bounce, none otherwise.
_bounce_rule() {
	if [ "$MRM" = bounce ]; then
		_want "BB == R * $1" "every read copied out of its bounce slot"
	else
		_want "BB == 0" "no bounce pool outside mr_mode bounce"
	fi
}

# _inv_rules NREG: invalidations of NREG registered reads under $INVM
# (reads with the global rkey need none, and are never invalidated).
_inv_rules() {
	case $INVM in
	remote) _want "LI == 0" "the server invalidates"
		_want "INV == $1" "every registered read answered with invalidation" ;;
	local) _want "INV == 0" "no NEED_INV, no invalidating answer"
		_want "LI == $1" "one LOCAL_INV per registered read" ;;
	none) _want "INV == 0" "no NEED_INV, no invalidating answer"
		_want "LI <= $1" "a LOCAL_INV only before a valid MR's next REG_MR" ;;
	esac
}

# _seg_reads: 16 reads of 64 KiB at 200 MiB, each from 16 even pages of a
# 32-page mapping whose pages were all faulted in (never adjacent: 16
# segments), after writes of the same from another buffer; the data must
# read back equal. Between two snapshots only these reads run.
_seg_write() {
	python3 - "/dev/$KCLT_DEV" "$1" <<'PYEOF' || die "$MODE: segmented IO failed"
import mmap, os, sys
dev, mode = sys.argv[1], sys.argv[2]
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
n = 32 * 4096
buf = mmap.mmap(-1, n)
buf[:] = bytes(n)
views = [memoryview(buf)[2 * p * 4096:(2 * p + 1) * 4096] for p in range(16)]
for k in range(16):
    off = (200 << 20) + k * (64 << 10)
    want = bytes((i * 13 + k * 7) & 0xff for i in range(64 << 10))
    if mode == "write":
        for p in range(16):
            views[p][:] = want[p * 4096:(p + 1) * 4096]
        assert os.pwritev(fd, views, off) == 64 << 10
    else:
        assert os.preadv(fd, views, off) == 64 << 10
        if b"".join(bytes(v) for v in views) != want:
            sys.exit("read %d differs from what was written" % k)
os.close(fd)
PYEOF
}

i=0
for combo in frwr,remote frwr,local frwr,none bounce,remote bounce,none \
	global,remote global,none; do
	i=$((i + 1))
	MRM=${combo%,*} INVM=${combo#*,} MODE="$MRM/$INVM"
	kclt_load mr_mode="$MRM" inval_mode="$INVM"
	[ "$(cat /sys/module/ibtrs_client/parameters/mr_mode)" = "$MRM" ] ||
		die "$MODE: parameters/mr_mode $(cat /sys/module/ibtrs_client/parameters/mr_mode)"
	[ "$(cat /sys/module/ibtrs_client/parameters/inval_mode)" = "$INVM" ] ||
		die "$MODE: parameters/inval_mode $(cat /sys/module/ibtrs_client/parameters/inval_mode)"
	if [ "$MRM" = global ]; then
		kmsgs | grep -q 'ibtrs_client: mr_mode=global is UNSAFE' ||
			die "$MODE: no UNSAFE warning for mr_mode=global"
	fi
	if [ "$INVM" = none ]; then
		kmsgs | grep -q 'ibtrs_client: inval_mode=none is UNSAFE' ||
			die "$MODE: no UNSAFE warning for inval_mode=none"
	fi
	SESS=kmr$i
	kclt_map "sessname=$SESS$(kclt_paths 1) device_path=nullb0"
	PD=$(ls -d /sys/kernel/ibtrs-client/$SESS/paths/*/)
	PD=${PD%/}
	grep -q "mr_mode=$MRM inval_mode=$INVM " "$KCLT_CTL/devices/$KCLT_DEV/paths" ||
		die "$MODE: paths line: $(cat "$KCLT_CTL/devices/$KCLT_DEV/paths")"
	[ "$(cat "$PD/mr_mode") $(cat "$PD/inval_mode") $(cat "$PD/write_mode")" = "$MRM $INVM push" ] ||
		die "$MODE: path files: $(cat "$PD/mr_mode") $(cat "$PD/inval_mode") $(cat "$PD/write_mode")"
	ncons=$(find "/sys/block/$KCLT_DEV/mq" -mindepth 1 -maxdepth 1 -type d | wc -l)

	# a. 4k randrw, verified
	PHASE=4k
	s0=$(_snap)
	kfio "r4k-$i" --rw=randrw --bs=4k --iodepth=16 --size=8m \
		--verify=crc32c --do_verify=1 --verify_fatal=1
	_delta "$s0" "$(_snap)"
	_common
	_bounce_rule 4096
	if [ "$MRM" != global ]; then
		_want "REG == R" "one REG_MR per read"
		_inv_rules "$R"
		if [ "$INVM" = none ]; then
			_want "LI < R" "no LOCAL_INV at the answer: an MR's first use has none"
			_want "LI >= R - $ncons * $QD" "a LOCAL_INV before every re-registration"
		fi
	else
		_want "REG == 0 && LI == 0 && INV == 0" "one-segment reads use the global rkey"
	fi

	# b. 64k writes, then their verify reads
	PHASE=64k
	s0=$(_snap)
	kfio "r64k-$i" --rw=write --bs=64k --iodepth=8 --offset=64m --size=8m \
		--verify=crc32c --do_verify=1 --verify_fatal=1
	_delta "$s0" "$(_snap)"
	_common
	_bounce_rule 65536
	if [ "$MRM" != global ]; then
		_want "REG == R" "one REG_MR per read"
	else
		_want "REG <= R" "at most the reads of several segments registered"
		log "$MODE 64k: $REG of $R reads had several segments"
	fi
	_inv_rules "$REG"

	# c. reads of 16 segments each
	PHASE=16seg
	_seg_write write
	s0=$(_snap)
	_seg_write read
	_delta "$s0" "$(_snap)"
	_common
	_want "R == 16" "16 reads"
	_bounce_rule 65536
	_want "REG == 16" "a read of several segments is registered in every mode"
	_inv_rules 16

	tee -a "$LOGDIR/paths.txt" <"$KCLT_CTL/devices/$KCLT_DEV/paths"
	kmsgs | grep -q "sess $SESS path .*failed:" && die "$MODE: the path failed: $(kmsgs | grep "sess $SESS path" | tail -5)"
	kclt_unmap "$KCLT_DEV"
	kclt_unload
	kmod_log_check_now
done

cat "$LOGDIR/counts.txt"
kmod_unload
kmod_log_check
kmsgs | grep 'ibtrs_client' | grep -v 'connected\|closed\|open,' | tail -12
log "PASS"
