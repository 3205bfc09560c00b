#!/bin/bash
# 023-kclient-all-paths-down: the kernel client over 2 paths to the kernel
# server; both paths are cut for 5 s during a verified fio write job on
# /dev/ibnbdN, then restored. With every path down, unanswered IO waits
# for a reconnect and new IO is retried (ctrl_loss_tmo_ms, 30 s): fio ends
# without an error and verifies its data, both paths reconnected
# (reconnects >= 1), IO failed over (failovers >= 1 in total); unmap,
# rmmod, clean kernel log.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kclt_cut_setup kdown
kclt_cut_fio down
log "cutting both paths"
tb_path_cut 1
tb_path_cut 2
sleep 5
kill -0 $KFIO_PID 2>/dev/null || die "fio ended while every path was cut"
cat "$P" | tee "$LOGDIR/paths-cut.txt"
log "restoring both paths"
tb_path_restore 1
tb_path_restore 2
kfio_wait down "across the cut"
kclt_wait_connected "$P" 2
cat "$P" | tee "$LOGDIR/paths-after.txt"
[ "$(grep -c 'state=connected.*reconnects=[1-9]' "$LOGDIR/paths-after.txt")" = 2 ] ||
	die "not both paths reconnected"
grep -q 'failovers=[1-9]' "$LOGDIR/paths-after.txt" || die "no IO failed over"
grep -q 'proto_errors=[1-9]' "$LOGDIR/paths-after.txt" && die "protocol errors counted"
kmsgs | grep 'ibtrs_client' | grep -E 'failed|closed|connected' | head -12
kclt_finish 10
log "PASS"
