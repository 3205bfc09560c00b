#!/bin/bash
# 047-write-pull: write_mode pull in the kernel modules (trs/PROTOCOL.md 4).
# The server RDMA-READs a write's data from the client's buffer, which the
# kernel client registers per IO (REG_MR, REMOTE_READ only) and ends as
# inval_mode says.
#  1. ibnbd-serverd: the kernel client loaded with write_mode=pull in
#     frwr/remote, frwr/local and the unsafe global/none, on 2 paths:
#     verified randrw (4k and 64k, QD8); the paths line shows
#     write_mode=pull; the daemon pulled exactly the device's completed
#     writes; frwr registers every read and write (reg_mrs = reads +
#     writes) and ends each key as asked (remote: inv_rsps = reg_mrs,
#     local: local_invs = reg_mrs); a push map after them (the default, the
#     control) makes no pull.
#  2. ibnbd-serverd --test-fault replay-pull reads each pulled write's buffer
#     through its key again when the next write comes, after that write
#     ended: in frwr/remote and frwr/local every replay fails (remote access
#     error; the daemon fails the path, the client reconnects, the writes
#     still complete and read back equal), and so in bounce/remote (the
#     data copied into a bounce slot, which the key covered, bounce_bytes
#     counts the copies); in global/none every replay
#     succeeds: the exposure is shown, not assumed. (frwr/none is not
#     replayed: at QD1 the next write re-registers the same MR with a new
#     key before the replay, which then fails like a safe mode's.)
#  3. the kernel server: the fio engine with --write_mode=pull (mw/remote,
#     global/none) verified while the server's path counts its pulls; the
#     kernel client as in 1, the pulls from the server's sysfs.
# Then unload and a clean kernel log.
# TIMEOUT=900
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_bins
need_paths 2
setup_nullb
FIO_TIMEOUT=180
KSESS=/sys/kernel/ibtrs-server/sessions
n=0

# dstat FIELD: field FIELD of /sys/block/$KCLT_DEV/stat (1 reads, 5 writes)
dstat() { awk -v f="$1" '{ print $f }' "/sys/block/$KCLT_DEV/stat"; }
# psum NAME: NAME=<n> summed over the lines of the device's paths file
psum() {
	sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$KCLT_CTL/devices/$KCLT_DEV/paths" |
		awk '{ s += $1 } END { print s + 0 }'
}
# the daemon's pulls so far; the kernel server's (summed over its paths)
dpulls() {
	stats_dump
	sed -n 's/^fastpath .* pulls=\([0-9]*\).*/\1/p' "$STATS"
}
kpulls() { sed -n 's/.* pulls=\([0-9]*\).*/\1/p' "$KSESS" | awk '{ s += $1 } END { print s + 0 }'; }

# kpull SERVER MODE(mr/inval) WRITE_MODE: a verified job of the kernel
# client on 2 paths, its pulls counted by SERVER (daemon or kernel).
kpull() {
	local srv=$1 mr=${2%/*} inval=${2#*/} wm=$3 name p0 r0 w0 reg0 inv0 li0 f0 r w p reg inv li f
	name=k-$srv-$mr-$inval-$wm
	kclt_load mr_mode="$mr" inval_mode="$inval" write_mode="$wm"
	[ "$(cat /sys/module/ibtrs_client/parameters/write_mode)" = "$wm" ] ||
		die "write_mode parameter reads $(cat /sys/module/ibtrs_client/parameters/write_mode)"
	kclt_map "sessname=$name$(kclt_paths 2) device_path=nullb0"
	[ "$(grep -c "mr_mode=$mr inval_mode=$inval write_mode=$wm " \
		"$KCLT_CTL/devices/$KCLT_DEV/paths")" = 2 ] ||
		die "$name: the paths do not show the modes: $(cat "$KCLT_CTL/devices/$KCLT_DEV/paths")"
	# deltas over the job (the map's control messages register too): after
	# udev's probe of the new device
	udevadm settle --timeout=10 2>/dev/null || true
	r0=$(dstat 1); w0=$(dstat 5)
	reg0=$(psum reg_mrs); inv0=$(psum inv_rsps); li0=$(psum local_invs)
	f0=$(psum failovers)
	if [ "$srv" = daemon ]; then p0=$(dpulls); else p0=$(kpulls); fi
	kfio "$name" --rw=randrw --bssplit=4k/50:64k/50 --iodepth=8 --size=8m \
		--offset=$((n * 16))m --verify=crc32c --do_verify=1 --verify_fatal=1
	r=$(($(dstat 1) - r0)); w=$(($(dstat 5) - w0))
	if [ "$srv" = daemon ]; then p=$(($(dpulls) - p0)); else p=$(($(kpulls) - p0)); fi
	reg=$(($(psum reg_mrs) - reg0)); inv=$(($(psum inv_rsps) - inv0))
	li=$(($(psum local_invs) - li0)); f=$(($(psum failovers) - f0))
	cat "$KCLT_CTL/devices/$KCLT_DEV/paths" >"$LOGDIR/paths-$name.txt"
	log "$name: $r reads, $w writes; $srv pulls=$p; client reg_mrs=$reg inv_rsps=$inv local_invs=$li failovers=$f"
	[ "$w" -gt 0 ] || die "$name: no writes"
	! grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-$name.txt" ||
		die "$name: protocol errors: $(cat "$LOGDIR/paths-$name.txt")"
	# A path the testbed's rxe fails (PROTOCOL.md 9) re-posts its IO on
	# the other: each such IO may be registered (and pulled) once more,
	# and its first registration ends with the path, not at an answer.
	if [ "$wm" = push ]; then
		[ "$p" = 0 ] || die "$name: a push client caused $p pulls"
	else
		[ "$p" -ge "$w" ] && [ "$p" -le $((w + f)) ] ||
			die "$name: $w writes completed ($f failovers), the $srv server pulled $p"
	fi
	case "$mr/$inval/$wm" in
	frwr/*/pull) [ "$reg" -ge $((r + w)) ] && [ "$reg" -le $((r + w + f)) ] ||
		die "$name: reg_mrs=$reg for $r reads + $w writes ($f failovers)" ;;
	esac
	case "$mr/$inval" in
	frwr/remote) [ "$inv" -le "$reg" ] && [ "$inv" -ge $((reg - f)) ] && [ "$li" = 0 ] ||
		die "$name: remote: inv_rsps=$inv local_invs=$li for reg_mrs=$reg ($f failovers)" ;;
	frwr/local) [ "$li" -le "$reg" ] && [ "$li" -ge $((reg - f)) ] && [ "$inv" = 0 ] ||
		die "$name: local: local_invs=$li inv_rsps=$inv for reg_mrs=$reg ($f failovers)" ;;
	global/none) # multi-segment buffers are registered, never invalidated at
		# their answer; a LOCAL_INV goes in front of a still-valid MR's
		# next REG_MR only
		[ "$inv" = 0 ] && [ "$li" -le "$reg" ] ||
		die "$name: none: inv_rsps=$inv local_invs=$li for reg_mrs=$reg" ;;
	esac
	kclt_unmap "$KCLT_DEV"
	kclt_unload
	n=$((n + 1))
}

# replay MODE safe|unsafe: 6 pulled 4k writes at QD1 (one dd) against the
# replaying daemon on 1 path, read back equal.
replay() {
	local mr=${1%/*} inval=${1#*/} want=$2 name skip reps rae bb
	name=rp-$mr-$inval
	skip=$(wc -l <"$SRV_LOG")
	kclt_load mr_mode="$mr" inval_mode="$inval" write_mode=pull \
		reconnect_min_ms=200 reconnect_max_ms=500
	kclt_map "sessname=$name$(kclt_paths 1) device_path=nullb0"
	head -c 24576 /dev/urandom >"$LOGDIR/$name.bin"
	timeout 120 dd if="$LOGDIR/$name.bin" of="/dev/$KCLT_DEV" bs=4k count=6 \
		seek=$((4096 + n * 8)) oflag=direct status=none ||
		die "$name: the pulled writes failed"
	timeout 60 dd if="/dev/$KCLT_DEV" of="$LOGDIR/$name.back" bs=4k count=6 \
		skip=$((4096 + n * 8)) iflag=direct status=none ||
		die "$name: reading back failed"
	cmp "$LOGDIR/$name.bin" "$LOGDIR/$name.back" || die "$name: read back differs"
	tail -n +$((skip + 1)) "$SRV_LOG" >"$LOGDIR/srv-$name.log"
	reps=$(grep -c 'test fault replay: .* read at ' "$LOGDIR/srv-$name.log" || true)
	rae=$(grep -c 'remote access error' "$LOGDIR/srv-$name.log" || true)
	log "$name: $reps replays, $rae remote access errors; $(psum reconnects) reconnects; data equal"
	[ "$reps" -gt 0 ] || die "$name: the daemon replayed nothing"
	if [ "$mr" = bounce ]; then
		# 6 writes copied in, 6 reads copied out (re-posts copy again)
		bb=$(cat /sys/kernel/ibtrs-client/"$name"/paths/*/bounce_bytes)
		log "$name: bounce_bytes $bb"
		[ "$bb" -ge $((12 * 4096)) ] ||
			die "$name: bounce_bytes $bb, under the 12 x 4096 copied"
	fi
	if [ "$want" = safe ]; then
		[ "$rae" -gt 0 ] && [ "$rae" -ge "$reps" ] ||
			die "$name: $reps replays through ended keys, only $rae failed"
	else
		[ "$rae" = 0 ] && [ "$reps" -ge 5 ] ||
			die "$name: unsafe mode, yet $rae of $reps replays failed (the test shows nothing)"
	fi
	kclt_unmap "$KCLT_DEV"
	kclt_unload
	n=$((n + 1))
}

# kpull_all SERVER: the kernel client's pulled modes, then the push control
kpull_all() {
	local m
	for m in frwr/remote frwr/local global/none; do
		kpull "$1" "$m" pull
	done
	kpull "$1" frwr/remote push
}

# 1. the daemon
start_server
kpull_all daemon
stop_server || die "ibnbd-serverd exited with $?"

# 2. the replaying daemon
start_server --test-fault replay-pull -v
replay frwr/remote safe
replay frwr/local safe
replay bounce/remote safe
replay global/none unsafe
stop_server || die "ibnbd-serverd exited with $?"

# 3. the kernel server
modprobe rdma_cm || die "modprobe rdma_cm"
kmod_load
for m in mw/remote global/none; do
	name=u-kernel-${m%/*}-${m#*/}
	start_fio "$name" --paths="$(fio_paths 2)" --devpath=nullb0 --access_mode=rw \
		--rw=randwrite --bssplit=4k/50:64k/50 --iodepth=8 --size=16m \
		--offset=$((n * 16))m --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--write_mode=pull --mr_mode="${m%/*}" --inval_mode="${m#*/}"
	seen=0
	while kill -0 "$FIO_PID" 2>/dev/null; do
		p=$(kpulls)
		[ "$p" -gt "$seen" ] && seen=$p
		sleep 0.2
	done
	wait "$FIO_PID" || die "$name: fio failed: $(tail -5 "$LOGDIR/fio-$name.log")"
	grep -q 'err= 0' "$LOGDIR/fio-$name.log" || die "$name: fio reported errors"
	w=$(grep -h ': report: path ' "$LOGDIR/fio-$name.log" |
		sed -n 's/.* writes=\([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	log "$name: $w writes, the kernel server counted up to $seen pulls while it ran"
	[ "$w" -gt 0 ] && [ "$seen" -gt 0 ] && [ "$seen" -le "$w" ] ||
		die "$name: $w writes, $seen pulls seen at the kernel server"
	n=$((n + 1))
done
kpull_all kernel
kmod_unload
kmod_log_check
log "PASS: $n jobs"
