#!/bin/bash
# 047-write-pull-refused: the kernel modules do not pull writes
# (write_mode pull, trs/PROTOCOL.md 4), and say so instead of corrupting:
# the fio engine with --write_mode=pull against the kernel server fails,
# naming the mode (the server does not announce TRS_INFO_F_PULL); the same
# engine with --write_mode=push writes and verifies on the same server
# (the control: the refusal is the mode's, not a broken set-up). Then
# unload and a clean kernel log.
# TIMEOUT=300
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
need_bins
need_paths 1
setup_nullb
FIO_TIMEOUT=60
modprobe rdma_cm || die "modprobe rdma_cm"
kmod_load

if run_fio pull-kernel --paths="$(fio_paths 1)" --devpath=nullb0 --access_mode=rw \
	--rw=randwrite --bs=4k --size=1m --write_mode=pull --ctrl_loss_tmo=2; then
	die "a write_mode pull job ran against the kernel server"
fi
grep -q "write_mode pull: the server does not pull writes" "$LOGDIR/fio-pull-kernel.log" ||
	die "no named refusal: $(tail -5 "$LOGDIR/fio-pull-kernel.log")"
log "pull against the kernel server: $(grep -m1 'write_mode pull' "$LOGDIR/fio-pull-kernel.log")"

run_fio push-kernel --paths="$(fio_paths 1)" --devpath=nullb0 --access_mode=rw \
	--rw=randwrite --bs=4k --size=1m --verify=crc32c --do_verify=1 --verify_fatal=1 ||
	die "the push control failed: $(tail -5 "$LOGDIR/fio-push-kernel.log")"
grep -q 'err= 0' "$LOGDIR/fio-push-kernel.log" || die "push control: fio reported errors"
kmod_unload
kmod_log_check
log "PASS"
