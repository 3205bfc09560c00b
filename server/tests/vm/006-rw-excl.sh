#!/bin/bash
# 006-rw-excl: a block device is opened O_EXCL for rw/migration (as rnbd-srv
# does): while it is mounted or held O_EXCL on the server host, an rw open
# over IBNBD is refused with a reason the client sees; ro still works; and
# while a client has it rw, a local O_EXCL open (mount, mkfs) is refused.
# TIMEOUT=240
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server
P=$(fio_paths 1)
PY=/usr/bin/python3
[ -x $PY ] || skip "no $PY"

# excl_open DEV: 0 if an O_EXCL open of DEV succeeds now.
excl_open() {
	$PY -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL))' "$1" 2>/dev/null
}

refused_rw() {	# NAME: an rw job must be refused, for the device being in use
	run_fio "$1" --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=1m \
		--access_mode=rw && die "$1: rw open NOT refused"
	grep -q 'in use on the server' "$LOGDIR/fio-$1.log" ||
		die "$1: refused without the reason: $(grep -i 'ibtrs' "$LOGDIR/fio-$1.log" | head -3)"
}

excl_open /dev/nullb0 || die "/dev/nullb0 is already held O_EXCL (left over by another test?)"

# 1. Held O_EXCL by a local process.
$PY -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
time.sleep(120)' /dev/nullb0 >"$LOGDIR/holder.out" 2>&1 &
HOLD=$!
for i in $(seq 1 50); do grep -q held "$LOGDIR/holder.out" && break; sleep 0.1; done
grep -q held "$LOGDIR/holder.out" || die "cannot hold /dev/nullb0 O_EXCL: $(cat "$LOGDIR/holder.out")"
refused_rw held_rw
grep -q "refused open of 'nullb0' (rw).*in use on the server" "$SRV_LOG" ||
	die "server did not log the refusal"
run_fio held_ro --paths="$P" --devpath=nullb0 --rw=read --bs=4k --size=1m \
	--access_mode=ro || die "ro open refused while held O_EXCL locally"
kill $HOLD
wait $HOLD

# 2. Mounted.
if command -v mkfs.ext4 >/dev/null; then
	MNT=$(mktemp -d /tmp/ibnbd-mnt.XXXXXX)
	mkfs.ext4 -q -F /dev/nullb0 >/dev/null 2>&1 && mount /dev/nullb0 "$MNT" ||
		die "cannot mount /dev/nullb0"
	refused_rw mounted_rw
	run_fio mounted_ro --paths="$P" --devpath=nullb0 --rw=read --bs=4k \
		--size=1m --access_mode=ro || die "ro open refused while mounted"
	umount "$MNT"
	rmdir "$MNT"
else
	log "no mkfs.ext4: mount case skipped"
fi

# 3. Free again: rw works, and the server's claim fences local O_EXCL users.
excl_open /dev/nullb0 || die "/dev/nullb0 still held after the holders left"
start_fio rw --paths="$P" --devpath=nullb0 --rw=write --bs=4k --size=16m \
	--time_based --runtime=10 --rate_iops=100 --access_mode=rw
FIO=$FIO_PID
for i in $(seq 1 100); do
	grep -q 'opened /dev/nullb0 (rw' "$SRV_LOG" && break
	sleep 0.1
done
grep -q 'opened /dev/nullb0 (rw' "$SRV_LOG" || die "rw open failed once the device was free"
excl_open /dev/nullb0 && die "a local O_EXCL open succeeded while a client has the device rw"
wait $FIO || die "rw job failed: $(tail -5 "$LOGDIR/fio-rw.log")"
# Claim released with the writer.
for i in $(seq 1 50); do excl_open /dev/nullb0 && break; sleep 0.1; done
excl_open /dev/nullb0 || die "O_EXCL claim not released after the writer left"
stop_server || die "daemon exit status $?"
log "PASS"
