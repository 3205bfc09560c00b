#!/bin/bash
# 013-kserver-access: access modes of the kernel server, as the userspace
# daemon's tests 003 and 007 check them:
#  - while one session writes nullb0 (rw), a second rw opener is refused
#    with the reason, ro is allowed, a local O_EXCL open is refused (the
#    writer holds the device FMODE_EXCL), a migration opener is admitted as
#    the second writer and a third writer refused; after the holder left,
#    rw is granted again;
#  - a writer killed with writes held by dm-delay (15 s each): the next rw
#    opener is refused ("IO still in flight") until they landed, then
#    admitted, and its data verifies.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
setup_nullb
kmod_load
P=$(fio_paths 1)

wait_klog() {	# PATTERN [TENTHS]
	local i
	for i in $(seq 1 "${2:-100}"); do
		kmsgs | grep -q -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

# Holder: rw, time based, in the background until SIGINT stops it below
# (start_fio: $FIO_PID is fio's own pid); its runtime only bounds it (on
# the debug kernel a 30 s one ended before the second writer's OPEN came).
start_fio holder --paths="$P" --devpath=nullb0 --rw=randwrite --bs=4k \
	--size=16m --time_based --runtime=$((120 * TS)) --iodepth=1 --rate_iops=50
HOLDER=$FIO_PID
wait_klog 'opened /dev/nullb0 (rw)' $((100 * TS)) || die "holder never opened the device"

run_fio second --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=1m \
	--access_mode=rw && die "second rw opener was NOT refused"
grep -q 'already opened for writing' "$LOGDIR/fio-second.log" ||
	die "refusal without a clear reason: $(grep -i ibtrs "$LOGDIR/fio-second.log")"
wait_klog "refused open of 'nullb0' (rw): device already opened for writing" 10 ||
	die "the server did not log the refusal"

run_fio reader --paths="$P" --devpath=nullb0 --rw=read --bs=4k --size=1m \
	--access_mode=ro || die "ro opener refused"

python3 - <<'EOF' || die "a local O_EXCL open got the device while a client writes"
import errno, os, sys
try:
    os.close(os.open("/dev/nullb0", os.O_RDONLY | os.O_EXCL))
except OSError as e:
    if e.errno == errno.EBUSY:
        print("local O_EXCL open refused: EBUSY")
        sys.exit(0)
    raise
sys.exit(1)
EOF

# migration holds the second writer slot while a third tries: it runs
# until stopped (with a 6 s runtime, the debug kernel's slow fio start let
# the third writer come after the migration opener had left)
start_fio mig --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=4m \
	--time_based --runtime=$((120 * TS)) --rate_iops=50 --access_mode=migration
MIG=$FIO_PID
wait_klog 'opened /dev/nullb0 (migration)' $((100 * TS)) || die "migration opener not admitted"
run_fio third --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=1m \
	--access_mode=migration && die "third writer was NOT refused"
grep -q 'two writers' "$LOGDIR/fio-third.log" || die "third writer: unclear reason"
kill -0 $MIG 2>/dev/null || die "the migration opener ended before the third writer was refused"
kill -INT $MIG 2>/dev/null
wait $MIG
grep -q 'err= 0' "$LOGDIR/fio-mig.log" ||
	die "migration opener failed: $(tail -5 "$LOGDIR/fio-mig.log")"

kill -INT $HOLDER 2>/dev/null
wait $HOLDER
run_fio again --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=1m ||
	die "rw open after the holder left failed"
log "access modes OK"

# Claim drain: the old writer dies with 4 writes held 15 s by dm-delay (long
# enough that the new writer's first attempt comes before they land, also on
# a loaded host: with 6 s, the kill and a fio start took longer there).
dm_delay ibnbd-kslow /dev/nullb0 0 $((15000 * TS))
DEV=mapper/ibnbd-kslow
start_fio old --paths="$P" --devpath=$DEV --rw=write --bs=4k --size=1m \
	--iodepth=4 --access_mode=rw --thread
OLD=$FIO_PID
wait_klog 'opened .*ibnbd-kslow (rw) handle' $((100 * TS)) || die "the old writer never opened"
OLD_SESS=$(kmsgs | grep 'opened .*ibnbd-kslow (rw) handle' | tail -1 |
	sed -n 's/.*sess \([^:]*\): opened.*/\1/p')
sleep 1
kill -KILL $OLD
wait $OLD 2>/dev/null
wait_klog "sess $OLD_SESS: disconnected" $((80 * TS)) || die "the old session did not end"
inflight=$(kmsgs | sed -n "s/.*ibnbd_server: sess $OLD_SESS: disconnected (\([0-9]*\) IOs in flight).*/\1/p")
[ "${inflight:-0}" -ge 1 ] ||
	die "old session gone with ${inflight:-?} IOs in flight (the test needs held writes)"
log "old session $OLD_SESS dropped with $inflight writes in flight"
ok=
for i in $(seq 1 40); do
	if run_fio new$i --paths="$P" --devpath=$DEV --rw=write --bs=4k \
		--size=64k --iodepth=16 --access_mode=rw --verify=crc32c \
		--do_verify=1 --verify_fatal=1; then
		ok=$i
		break
	fi
	grep -q 'IO still in flight' "$LOGDIR/fio-new$i.log" ||
		die "new writer refused for another reason: $(grep -i ibtrs "$LOGDIR/fio-new$i.log" | head -3)"
	sleep 0.5
done
[ -n "$ok" ] || die "new writer never admitted"
[ "$ok" -gt 1 ] || die "new writer admitted at once: the old writes were not waited for"
log "new writer admitted at attempt $ok"
kmsgs >"$KLOG"
released=$(line_of "sess $OLD_SESS: .*in-flight IO drained, rw claim released" "$KLOG")
opened=$(grep -n 'opened .* (rw) handle' "$KLOG" | tail -1 | cut -d: -f1)
[ "$released" -gt 0 ] || die "no claim release logged for $OLD_SESS"
[ "${opened:-0}" -gt "$released" ] ||
	die "new rw open granted (log line $opened) before the old writes landed (line $released)"

kmod_unload
kmod_log_check 30
log "PASS"
