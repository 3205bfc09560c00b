#!/bin/bash
# 004-bad-opens: device paths that escape the search root, character
# devices, missing devices are refused with a reason the fio user sees,
# and the daemon keeps serving afterwards.
# TIMEOUT=240
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb
start_server
P=$(fio_paths 1)

try() {	# name devpath expected-text
	run_fio "$1" --paths="$P" --devpath="$2" --rw=read --bs=4k --size=1m &&
		die "open of '$2' was NOT refused"
	grep -q "$3" "$LOGDIR/fio-$1.log" ||
		die "open of '$2': expected '$3', got: $(grep -i 'ibtrs' "$LOGDIR/fio-$1.log" | head -3)"
	log "refused '$2' as expected"
}
try dotdot ../etc/passwd 'escapes the search root'
try abs /etc/passwd 'outside the search root'
try chr /dev/null 'not a block device or regular file'
try missing /dev/no-such-dev 'no such device'
ln -sf /etc/passwd /dev/ibnbd-test-escape
try symlink /dev/ibnbd-test-escape 'escapes the search root'
rm -f /dev/ibnbd-test-escape

# Still serving.
run_fio ok --paths="$P" --devpath=nullb0 --rw=read --bs=4k --size=4m ||
	die "daemon stopped serving after bad opens"
stop_server || die "daemon exit status $?"
log "PASS"
