#!/bin/bash
# 021-kclient-userspace-srv: the kernel client (ibtrs-client.ko +
# ibnbd-client.ko) against the userspace daemon server/build/ibnbd-serverd
# serving a memory-backed null_blk: nullb0 mapped over 1 path, then over
# 2 paths; fio libaio direct=1 verify=crc32c (4k random writes, 4k-128k
# mixed), a pattern cross-checked with /dev/nullb0 in both directions, both
# paths carried IO with remote invalidation only, unmap, clean rmmod and
# kernel log, daemon exits 0 on SIGTERM.
# TIMEOUT=240
. "$TB_TOP/kmod/tests/vm/klib.sh"
kclt_need
need_bins
need_paths 2
setup_nullb
start_server
kclt_load

kclt_map "sessname=ku1$(kclt_paths 1) device_path=nullb0"
kfio w4k --rw=randwrite --bs=4k --iodepth=16 --size=16m --verify=crc32c \
	--do_verify=1 --verify_fatal=1
cmp_pattern "/dev/$KCLT_DEV" /dev/nullb0 100 13
kclt_unmap "$KCLT_DEV"

kclt_map "sessname=ku2$(kclt_paths 2) device_path=nullb0"
kfio rw2 --rw=randrw --bssplit=4k/40:16k/30:64k/20:128k/10 --iodepth=16 \
	--offset=64m --size=32m --verify=crc32c --do_verify=1 --verify_fatal=1
cmp_pattern "/dev/$KCLT_DEV" /dev/nullb0 140 13
cmp_pattern /dev/nullb0 "/dev/$KCLT_DEV" 160 13
kclt_check_2paths
kclt_unmap "$KCLT_DEV"
kclt_unload
stop_server || die "ibnbd-serverd exited with $?"
kmod_log_check
kmsgs | grep 'ibtrs_client\|ibnbd_client' | tail -8
log "PASS"
