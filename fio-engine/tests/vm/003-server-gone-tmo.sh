#!/bin/bash
# 003-server-gone-tmo: the daemon is stopped mid-run and not restarted;
# with ctrl_loss_tmo=3 the job fails within a bounded time with a clear
# error saying that every path is lost.
# TIMEOUT=240
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server

run_fio gone --paths="$(fio_paths)" --devpath=nullb0 --rw=randwrite --bs=4k \
	--iodepth=8 --size=32m --time_based --runtime=120 --ctrl_loss_tmo=3 &
FIO=$!
sleep 4
kill -0 $FIO 2>/dev/null || die "fio ended before the server went away"
stop_server TERM || die "daemon exit status $?"
t0=$(date +%s)
wait $FIO; rc=$?
t=$(( $(date +%s) - t0 ))
[ $rc -ne 0 ] || die "fio succeeded although the server is gone"
[ $t -le 60 ] || die "fio took ${t}s to fail (ctrl_loss_tmo=3)"
grep -q 'ctrl_loss_tmo expired' "$LOGDIR/fio-gone.log" ||
	die "no clear error: $(grep -i 'ibtrs\|err' "$LOGDIR/fio-gone.log" | head -5)"
log "fio failed after ${t}s with: $(grep 'ctrl_loss_tmo expired' "$LOGDIR/fio-gone.log" | head -1)"

# And a server that is not there at all: clear error at connect.
run_fio none --paths="$(fio_paths 1)" --devpath=nullb0 --rw=read --size=1m \
	--connect_timeout=2000 && die "fio succeeded without a server"
grep -q 'cannot connect to the server' "$LOGDIR/fio-none.log" ||
	die "unclear unreachable-server error: $(grep -i ibtrs "$LOGDIR/fio-none.log" | head -3)"
log "PASS"
