#!/bin/bash
# 046-modes-verify: fio verify=crc32c in every registration and
# invalidation mode, both clients against both servers, on 1 and 2 paths:
#  - the fio engine (userspace) in mr_mode/inval_mode mw/remote, mw/local,
#    reg/local, bounce/remote, bounce/none and the unsafe mw/none and
#    global/none, against ibnbd-serverd and then against the kernel server;
#  - the kernel client (ibtrs-client mr_mode, inval_mode) in frwr/remote,
#    frwr/local, bounce/remote and the unsafe frwr/none, global/remote and
#    global/none,
#    against both servers as well;
#  - the daemon with chunk_mode rekey: the engine in mw/remote, bounce/none
#    and global/none (the kernel modules' chunk_mode rekey: test 048).
# Each mode runs on 1 path against one server and on 2 against the other
# (the path count alternates from mode to mode, and the kernel server's
# turn starts where the daemon's did not), so every client-server pair
# and every mode meets both path counts in 29 jobs (the full square, 62
# jobs, took 153 s of make check's 45 minutes: `tests/run-vm --env
# ALL_PATHS=1 kmod/tests/vm/046-modes-verify.sh` runs it).
# Each job writes and reads back 4k and 64k blocks (randrw, QD8) and must
# end with err=0; each pair also reports its modes (the engine's report
# line, the kernel path's paths line), so a mode that silently fell back
# to another fails. Then unload and a clean kernel log.
# TIMEOUT=1200
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_bins
need_paths 2
setup_nullb
FIO_TIMEOUT=120

ENGINE_MODES="mw/remote mw/local reg/local bounce/remote bounce/none mw/none global/none"
KCLT_MODES="frwr/remote frwr/local bounce/remote frwr/none global/remote global/none"
n=0

# paths_of I FIRST: the path counts mode I runs on (FIRST: 1 or 2, the
# count of mode 0); ALL_PATHS=1: both.
paths_of() {
	[ "${ALL_PATHS:-0}" = 1 ] && { echo 1 2; return; }
	echo $(((($1 + $2 - 1) % 2) + 1))
}

# ufio SERVER MR INVAL PATHS: the engine's verified job in one mode.
ufio() {
	local name="u-$1-${2}-${3}-$4p" off=$((n * 16))m
	run_fio "$name" --paths="$(fio_paths "$4")" --devpath=nullb0 --access_mode=rw \
		--rw=randrw --bssplit=4k/50:64k/50 --iodepth=8 --size=8m --offset="$off" \
		--direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--mr_mode="$2" --inval_mode="$3" ||
		die "engine $2/$3 on $4 path(s) against the $1 server: $(tail -5 "$LOGDIR/fio-$name.log")"
	grep -q 'err= 0' "$LOGDIR/fio-$name.log" || die "$name: fio reported errors"
	[ "$(grep -c ': report: path [0-9]* .*writes=[1-9]' "$LOGDIR/fio-$name.log")" -ge "$4" ] ||
		die "$name: not every path carried IO: $(grep ': report: path' "$LOGDIR/fio-$name.log")"
	n=$((n + 1))
	log "engine $2/$3, $4 path(s), $1 server: verified"
}

# kfio_modes SERVER FIRST: the kernel client's verified jobs in every mode
# (FIRST: see paths_of).
kfio_modes() {
	local m mr inval p i=0
	for m in $KCLT_MODES; do
		mr=${m%/*}
		inval=${m#*/}
		kclt_load mr_mode="$mr" inval_mode="$inval"
		for p in $(paths_of $i "$2"); do
			kclt_map "sessname=k-$1-$mr-$inval-$p$(kclt_paths $p) device_path=nullb0"
			grep -q "mr_mode=$mr inval_mode=$inval " "$KCLT_CTL/devices/$KCLT_DEV/paths" ||
				die "the paths line does not show $mr/$inval: $(cat "$KCLT_CTL/devices/$KCLT_DEV/paths")"
			kfio "k-$1-$mr-$inval-$p" --rw=randrw --bssplit=4k/50:64k/50 --iodepth=8 \
				--size=8m --offset=$((n * 16))m --verify=crc32c --do_verify=1 \
				--verify_fatal=1
			cat "$KCLT_CTL/devices/$KCLT_DEV/paths" >"$LOGDIR/paths.txt"
			[ "$(grep -c 'state=connected reqs=[1-9][0-9]* rsps=[1-9]' "$LOGDIR/paths.txt")" = "$p" ] ||
				die "not every path carried IO: $(cat "$LOGDIR/paths.txt")"
			! grep -q 'proto_errors=[1-9]' "$LOGDIR/paths.txt" ||
				die "protocol errors counted: $(cat "$LOGDIR/paths.txt")"
			kclt_unmap "$KCLT_DEV"
			n=$((n + 1))
			log "kernel client $mr/$inval, $p path(s), $1 server: verified"
		done
		kclt_unload
		i=$((i + 1))
	done
}

# 1. the userspace daemon
start_server
i=0
for m in $ENGINE_MODES; do
	for p in $(paths_of $i 1); do
		ufio daemon "${m%/*}" "${m#*/}" $p
	done
	i=$((i + 1))
done
kfio_modes daemon 1
stop_server || die "ibnbd-serverd exited with $?"

# 1b. the daemon with chunk_mode rekey: the engine in three modes
start_server --chunk-mode rekey
i=0
for m in mw/remote bounce/none global/none; do
	for p in $(paths_of $i 2); do
		ufio rekey-daemon "${m%/*}" "${m#*/}" $p
	done
	i=$((i + 1))
done
grep -q 'chunk_mode rekey' "$SRV_LOG" || die "the daemon did not log chunk_mode rekey"
stop_server || die "ibnbd-serverd exited with $?"

# 2. the kernel server
kmod_load chunk_mode=static
i=0
for m in $ENGINE_MODES; do
	for p in $(paths_of $i 2); do
		ufio kernel "${m%/*}" "${m#*/}" $p
	done
	i=$((i + 1))
done
kfio_modes kernel 2
kmod_unload
kmod_log_check
log "PASS: $n verified jobs"
