#!/bin/bash
# 012-kserver-hostile: trs/build/trs-test-hostile (a raw verbs client that
# breaks one rule per case: wrong version/magic/cid, out-of-range chunk id,
# write/read lengths beyond the chunk, oversized user header, unknown type,
# an RDMA write outside the pool) against the kernel server, while fio does
# verified IO in another session. Every case must be rejected or its path
# closed by validation (the hostile client answers heartbeats) within
# LIMIT_MS, with the reason in the kernel log; the control case "idle" stays
# connected; no heartbeat timeout; fio ends without error. Then
# cross-session: one session's pool key must not write through another
# session's connection, nor through its own path's after a reconnect. The
# modules unload and the kernel log is clean.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
need_paths 2
HOSTILE=$TB_TOP/trs/build/trs-test-hostile
[ -x "$HOSTILE" ] || skip "$HOSTILE not built (make -C trs)"
LIMIT_MS=${LIMIT_MS:-500}
declare -A reason=(
	[badver]='rejecting a connection from .*: unsupported protocol major version'
	[badmagic]='rejecting a connection from .*: bad magic'
	[badcid]='rejecting a connection from .*: connection index out of range'
	[chunk-id]='sess hostile: closing path from .*: bad receive: chunk id >= queue depth'
	[write-len]='sess hostile: closing path from .*: invalid request in chunk 1: write data_len exceeds chunk'
	[read-len]='sess hostile: closing path from .*: invalid request in chunk 1: read length exceeds chunk'
	[usr-len]='sess hostile: closing path from .*: invalid request in chunk 1: user header longer than max_usr_len'
	[bad-type]='sess hostile: closing path from .*: invalid request in chunk 1: unknown request type'
	[outside-pool]='sess hostile: closing path from .*: receive failed: remote access error'
)
setup_nullb
kmod_load

# the good client: ~15 s of verified writes at 4 MiB/s over both paths
FIO_TIMEOUT=120
run_fio good --paths="$(fio_paths 2)" --devpath=nullb0 --rw=randwrite \
	--bs=4k --iodepth=8 --size=60m --rate=4m --verify=crc32c \
	--do_verify=1 --verify_fatal=1 &
FIO=$!
for i in $(seq 1 100); do
	kmsgs | grep -q 'opened /dev/nullb0 (rw)' && break
	sleep 0.1
done
"$HOSTILE" -p "$SRV_PORT" -w 3000 \
	-s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
	>"$LOGDIR/hostile.log" 2>&1
cat "$LOGDIR/hostile.log"
kill -0 $FIO 2>/dev/null || die "the good client ended before the hostile cases did"
wait $FIO || die "the good client failed: $(tail -5 "$LOGDIR/fio-good.log")"
grep -q 'err= 0' "$LOGDIR/fio-good.log" || die "the good client reported errors"

kmsgs >"$KLOG"
fail=
for c in "${!reason[@]}"; do
	line=$(grep "^PASS: hostile $c:" "$LOGDIR/hostile.log") ||
		{ log "FAIL: $c: case failed"; fail=1; continue; }
	ms=$(echo "$line" | sed -n 's/.* after \([0-9]*\) ms.*/\1/p')
	[ -n "$ms" ] && [ "$ms" -le "$LIMIT_MS" ] ||
		{ log "FAIL: $c: took ${ms:-?} ms (limit $LIMIT_MS)"; fail=1; }
	grep -Eq "${reason[$c]}" "$KLOG" ||
		{ log "FAIL: $c: the server did not log '${reason[$c]}'"; fail=1; }
done
grep -q '^PASS: hostile idle:' "$LOGDIR/hostile.log" ||
	{ log "FAIL: idle: control connection not kept"; fail=1; }
! grep -q 'heartbeat timeout' "$KLOG" ||
	{ log "FAIL: a path was dropped by heartbeat timeout"; fail=1; }
[ -z "$fail" ] || die "hostile cases failed (above)"

# a session's pool key works on its own path's QPs only (a PD per path):
# not through another session's connection, not after its path reconnects
"$HOSTILE" -p "$SRV_PORT" -s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
	cross-session chunk-replay >"$LOGDIR/hostile-cross.log" 2>&1
cat "$LOGDIR/hostile-cross.log"
grep -q '^PASS: hostile cross-session' "$LOGDIR/hostile-cross.log" ||
	die "cross-session failed (above)"
# static chunks: a chunk stays writable with its key after its IO (shown)
grep -q '^PASS: hostile chunk-replay' "$LOGDIR/hostile-cross.log" ||
	die "chunk-replay failed (above)"

kmod_unload
kmod_log_check 40
log "PASS"
