#!/bin/bash
# 011-kserver-path-cut: fio write+verify over 2 paths against the kernel
# server; path 1 is cut (link down) while IO flows and restored once the
# server closed it
# (the testbed re-creates its rxe device: a device removal for whatever
# the server still has on the old one). The server must notice the silent
# path (heartbeat timeout), tear it down, serve the retried requests on
# path 2 (a chunk whose original is still in flight waits for it), accept
# path 1's reconnect into the same session, and unload cleanly afterwards
# with nothing bad in the kernel log. The engine's report shows IO failed
# over from path 1, path 1 reconnected, both paths carried IO. Writes are
# held 3 s by dm-delay and the cut comes right after a batch of writes
# reached the server; the client's heartbeat (250 ms) gives the path up
# within about a second, so the retries of path 1's writes reach the
# server while their originals are still held: the server must count them
# as deferred (the "waits for the in-flight original" path ran). (With a
# 1 s hold and the default heartbeat, whether a retry overtook its original
# depended on where in the hold the cut fell; CI saw deferred=0.)
# TIMEOUT=300
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
need_paths 2
type tb_path_cut >/dev/null 2>&1 || skip "testbed guest-lib.sh (tb_path_cut) missing"
setup_nullb
# On the debug kernel (tests/run-vm --timeout-scale F) the hold and the
# waits around the cut are F times longer, and the heartbeat is klib's
# F x 500 ms (a 250 ms one there timed both paths out).
S=$TS
HOLD=$((3000 * S))
dm_delay kcut /dev/nullb0 0 $HOLD
kmod_load
c1=$(echo "$TB_CLT_ADDRS" | cut -d' ' -f1)

# 2 MiB of 4k writes, 32 in flight, each held 3 s: 16 batches, ~48 s, then
# the verify (reads are not held).
FIO_TIMEOUT=$((150 * S))
run_fio cut --paths="$(fio_paths 2)" --devpath=mapper/kcut --rw=randwrite \
	--bs=4k --iodepth=32 --size=2m --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --ctrl_loss_tmo=60 --connect_timeout=10000 \
	--hb_interval=250 &
FIO=$!
for i in $(seq 1 100); do
	kmsgs | grep -q 'joined (2 paths)' && break
	kill -0 $FIO 2>/dev/null || die "fio ended before the session had 2 paths"
	sleep 0.1
done
kmsgs | grep -q 'joined (2 paths)' || die "no 2-path session after 10 s"
sleep 1
# sysfs: the session, both paths joined and carrying requests
cat /sys/kernel/ibtrs-server/sessions | tee "$LOGDIR/sessions-before.txt"
grep -q '^sess .* paths=2 ' "$LOGDIR/sessions-before.txt" || die "sysfs: no 2-path session"
[ "$(grep -c '^  path .* state=joined reqs=[1-9]' "$LOGDIR/sessions-before.txt")" = 2 ] ||
	die "sysfs: not both paths joined with requests"
cat /sys/kernel/ibnbd-server/devices | tee "$LOGDIR/devices-before.txt"
grep -q '^  /dev/mapper/kcut handle=.* mode=rw ' "$LOGDIR/devices-before.txt" ||
	die "sysfs: mapper/kcut not open rw"
# Cut right after the next batch of writes reached the server (its write
# count moved): their originals are then held for most of the 3 s.
writes() { sed -n 's|^  /dev/mapper/kcut .* writes=\([0-9]*\) .*|\1|p' \
	/sys/kernel/ibnbd-server/devices; }
w0=$(writes)
for ((i = 0; i < 100 * S; i++)); do
	[ "$(writes)" != "$w0" ] && break
	sleep 0.05
done
[ "$(writes)" != "$w0" ] || die "no write reached the server in $((5 * S)) s"
log "cutting path 1 (server writes $w0 -> $(writes))"
tb_path_cut 1
for ((i = 0; i < 60 * S; i++)); do
	cat /sys/kernel/ibtrs-server/sessions > "$LOGDIR/sessions-cut.txt"
	grep -q '^  path .* deferred=[1-9]' "$LOGDIR/sessions-cut.txt" && break
	sleep 0.1
done
cat "$LOGDIR/sessions-cut.txt"
grep -q '^  path .* deferred=[1-9]' "$LOGDIR/sessions-cut.txt" ||
	die "no retry waited for its in-flight original (deferred=0 $((6 * S)) s after the cut)"
for ((i = 0; i < 100 * S; i++)); do
	kmsgs | grep -q "closing path from $c1" && break
	sleep 0.1
done
kill -0 $FIO 2>/dev/null || die "fio ended while path 1 was cut"
kmsgs | grep -q "closing path from $c1" ||
	die "the server did not close the cut path"
log "restoring path 1"
tb_path_restore 1
wait $FIO; rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc) across the path cut"
grep -q 'err= 0' "$LOGDIR/fio-cut.log" || die "fio reported errors"
has_report cut || die "no engine report in the fio output"
grep -h ': report: path' "$LOGDIR/fio-cut.log"
[ "$(report_path_val cut 1 failovers)" -ge 1 ] || die "no IO failed over from path 1"
[ "$(report_path_val cut 1 reconnects)" -ge 1 ] || die "path 1 did not reconnect"
[ "$(report_path_val cut 2 writes)" -ge 1 ] || die "path 2 carried no writes"
kmsgs | grep "closing path from $c1" | head -3
[ -z "$(cat /sys/kernel/ibtrs-server/sessions)" ] || die "sysfs: a session is left after fio"

kmod_unload
kmod_log_check 40
log "PASS"
