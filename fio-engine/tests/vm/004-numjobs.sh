#!/bin/bash
# 004-numjobs: several jobs at once, one IBTRS session each with unique
# names: numjobs=4 readers on one device plus a writer job on another.
# TIMEOUT=300
. "$TB_TOP/server/tests/vmlib.sh"
need_bins
setup_nullb 2
[ -b /dev/nullb1 ] || skip "null_blk already loaded with one device"
start_server
P=$(fio_paths)

# Lay down data for the readers to verify.
run_fio prep --paths="$P" --devpath=nullb0 --rw=write --bs=64k --size=16m \
	--verify=crc32c --do_verify=0 --iodepth=8 || die "prep failed"

LD_LIBRARY_PATH=$ENGINE_DIR timeout 240 "${FIO_CMD[@]}" --ioengine=ibtrs --port="$SRV_PORT" ${IBNBD_FIO_EXTRA:-} \
	--paths="$P" --group_reporting=0 \
	--name=readers --devpath=nullb0 --rw=read --bs=64k --size=16m \
	--verify=crc32c --verify_only=1 --verify_fatal=1 --numjobs=4 --iodepth=4 \
	--name=writer --devpath=nullb1 --rw=randwrite --bs=4k --size=16m \
	--iodepth=16 --verify=crc32c --verify_fatal=1 \
	>"$LOGDIR/fio-multi.log" 2>&1 || die "multi-job run failed"
n=$(grep -c 'protocol version' "$SRV_LOG")
names=$(sed -n 's/.*sess \([^:]*\): connected.*/\1/p' "$SRV_LOG" | sort | uniq -d)
[ -z "$names" ] || die "duplicate session names: $names"
[ "$n" -ge 6 ] || die "expected >= 6 sessions (prep + 4 readers + writer), saw $n"
stop_server || die "daemon exit status $?"
log "PASS"
