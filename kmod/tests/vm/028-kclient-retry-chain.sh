#!/bin/bash
# 028-kclient-retry-chain: one write retried on a third path while the
# server still holds the first retry (issue 16 item 7). The server's device
# is suspended, so the original write stays in flight there; the server
# notices cut paths slowly (hb_interval_ms=5000), the client fast (500 ms).
# The path carrying the write is cut: the client re-sends it on a second
# path, where the server parks it (its chunk is busy). That path is cut
# too: the client re-sends on the third path while the server still has
# the second's retry parked. Before the fix the server had one parked-retry
# slot per chunk and failed the third, healthy path ("request for chunk N
# which is busy"); now the newest retry replaces the parked one. After the
# resume the write must succeed (served once more on the third path, which
# stays connected), the server counts a deferred retry, no 'busy' line.
# TIMEOUT=180
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 3
command -v dmsetup >/dev/null || skip "no dmsetup"
type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
setup_nullb
dm_delay kchn /dev/nullb0 0 0
kmod_load hb_interval_ms=5000
kclt_load reconnect_min_ms=20000 reconnect_max_ms=30000 cons_per_path=1
kclt_map "sessname=kchn$(kclt_paths 3) device_path=mapper/kchn"
P=$KCLT_CTL/devices/$KCLT_DEV/paths
dd if=/dev/zero of="/dev/$KCLT_DEV" bs=4k count=8 oflag=direct status=none ||
	die "a write before the suspend failed"

# _busy_path: the path (1..3) with the write in flight, or nothing
_busy_path() {
	grep -n 'state=connected.* inflight=1 ' "$P" | cut -d: -f1 | head -1
}
# _wait_moved OLD: until the write is in flight on another path (5 s)
_wait_moved() {
	local i p
	for i in $(seq 1 50); do
		p=$(_busy_path)
		[ -n "$p" ] && [ "$p" != "$1" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}

dmsetup suspend --noudevsync kchn || die "dmsetup suspend"
KMOD_EXTRA_CLEANUP='dmsetup resume --noudevsync kchn 2>/dev/null'
dd if=/dev/urandom of="$LOGDIR/blk" bs=4k count=1 status=none
timeout 100 dd if="$LOGDIR/blk" of="/dev/$KCLT_DEV" bs=4k count=1 seek=300 \
	oflag=direct status=none 2>"$LOGDIR/dd.err" &
DD=$!
p1=
for i in $(seq 1 50); do p1=$(_busy_path); [ -n "$p1" ] && break; sleep 0.1; done
[ -n "$p1" ] || die "the write is on no path: $(cat "$P")"
log "the write is in flight on path $p1: cutting it"
tb_path_cut "$p1"
p2=$(_wait_moved "$p1") || die "the write did not move off path $p1: $(cat "$P")"
log "re-sent on path $p2 (parked on the server): cutting it"
tb_path_cut "$p2"
p3=$(_wait_moved "$p2") || die "the write did not move off path $p2: $(cat "$P")"
log "re-sent on path $p3"
sleep 1
cat /sys/kernel/ibtrs-server/sessions | tee "$LOGDIR/sessions.txt"
kmsgs | grep 'which is busy' && die "the server failed a path for the busy chunk"
sed -n "${p3}p" "$P" | grep -q "state=connected" ||
	die "path $p3 is not connected: $(sed -n "${p3}p" "$P")"
dmsetup resume --noudevsync kchn || die "dmsetup resume"
KMOD_EXTRA_CLEANUP=
wait $DD || die "the write failed: $(cat "$LOGDIR/dd.err")"
log "the write succeeded after the resume"
dd if="/dev/$KCLT_DEV" of="$LOGDIR/back" bs=4k count=1 skip=300 iflag=direct status=none ||
	die "cannot read the block back"
cmp -s "$LOGDIR/blk" "$LOGDIR/back" || die "the block reads back different"
grep -q 'deferred=[1-9]' "$LOGDIR/sessions.txt" || die "the server counted no deferred retry"
sed -n "${p3}p" "$P" | grep -q 'state=connected' || die "path $p3 lost after the resume"
kmsgs | grep 'which is busy' && die "the server failed a path for the busy chunk"
for p in "$p1" "$p2"; do tb_path_restore "$p"; done
kclt_finish 30
log "PASS"
