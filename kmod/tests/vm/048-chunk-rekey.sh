#!/bin/bash
# 048-chunk-rekey: chunk_mode rekey in the kernel modules (trs/PROTOCOL.md 5):
# the server gives every chunk a key of its own and replaces it after each
# IO, before the answer; the client follows the same rule.
#  1. ibnbd-serverd --chunk-mode rekey: the kernel client in frwr/remote
#     (1 and 2 paths), global/none and write_mode pull: verified randrw
#     (4k and 64k, QD8); every path's chunk_mode file says rekey.
#  2. ibtrs-server chunk_mode=rekey: the same kernel client jobs, each path
#     of the server re-keyed once per answer (rekeys = rsps, both > 0) and
#     shows chunk_mode=rekey; the fio engine in mw/remote and global/none on
#     2 paths, verified; the hostile client's chunk-replay: the ended IO's
#     key is refused by the NIC and the chunk's next key writes it.
#  3. ibtrs-server chunk_mode=static (the control): chunk-replay lands, the
#     paths count no re-key and the client's path says static.
# Then unload and a clean kernel log.
# TIMEOUT=900
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_bins
need_paths 2
setup_nullb
FIO_TIMEOUT=180
KSESS=/sys/kernel/ibtrs-server/sessions
HOSTILE=$TB_TOP/trs/build/trs-test-hostile
n=0

# kjob SERVER MODE(mr/inval) WRITE_MODE PATHS CHUNK_MODE: a verified job of
# the kernel client; its paths must show CHUNK_MODE, and against the kernel
# server every path must have re-keyed once per answer (rekey) or never.
kjob() {
	local srv=$1 mr=${2%/*} inval=${2#*/} wm=$3 p=$4 cm=$5 name d got
	name=k-$srv-$mr-$inval-$wm-$p
	kclt_load mr_mode="$mr" inval_mode="$inval" write_mode="$wm"
	kclt_map "sessname=$name$(kclt_paths "$p") device_path=nullb0"
	kfio "$name" --rw=randrw --bssplit=4k/50:64k/50 --iodepth=8 --size=8m \
		--offset=$((n * 16))m --verify=crc32c --do_verify=1 --verify_fatal=1
	got=0
	for d in /sys/kernel/ibtrs-client/"$name"/paths/*; do
		[ "$(cat "$d/chunk_mode")" = "$cm" ] ||
			die "$name: path $(basename "$d") says chunk_mode $(cat "$d/chunk_mode")"
		got=$((got + 1))
	done
	[ $got = "$p" ] || die "$name: $got path directories, $p paths"
	! grep -q 'proto_errors=[1-9]' "$KCLT_CTL/devices/$KCLT_DEV/paths" ||
		die "$name: protocol errors: $(cat "$KCLT_CTL/devices/$KCLT_DEV/paths")"
	[ "$srv" = kernel ] && ksess_check "$name" "$cm" "$p"
	kclt_unmap "$KCLT_DEV"
	kclt_unload
	n=$((n + 1))
	log "kernel client $mr/$inval write_mode=$wm, $p path(s), $srv server ($cm): verified"
}

# ksess_check SESSNAME CHUNK_MODE PATHS: the kernel server's paths of the
# session: chunk_mode=CHUNK_MODE, answers posted, and as many re-keys as
# answers (rekey) or none (static)
ksess_check() {
	local lines l rsps rekeys
	cat "$KSESS" >"$LOGDIR/sessions-$1.txt"
	lines=$(awk -v s="$1" '/^sess / { on = ($2 == s) } on && /^  path / { print }' \
		"$LOGDIR/sessions-$1.txt")
	[ "$(echo "$lines" | grep -c 'state=joined')" = "$3" ] ||
		die "$1: not $3 joined paths at the server: $(cat "$LOGDIR/sessions-$1.txt")"
	while read -r l; do
		rsps=$(echo "$l" | sed -n 's/.* rsps=\([0-9]*\).*/\1/p')
		rekeys=$(echo "$l" | sed -n 's/.* rekeys=\([0-9]*\).*/\1/p')
		echo "$l" | grep -q " chunk_mode=$2 " || die "$1: server path not $2: $l"
		[ "${rsps:-0}" -gt 0 ] || die "$1: a server path posted no answer: $l"
		if [ "$2" = rekey ]; then
			[ "$rekeys" = "$rsps" ] || die "$1: $rekeys re-keys for $rsps answers: $l"
		else
			[ "$rekeys" = 0 ] || die "$1: static path re-keyed $rekeys times: $l"
		fi
	done <<<"$lines"
	log "$1: server paths $2, $(echo "$lines" | sed -n 's/.* rsps=\([0-9]*\).* rekeys=\([0-9]*\).*/rsps=\1 rekeys=\2/p' | tr '\n' ' ')"
}

# ujob MODE PATHS: the fio engine's verified job against the kernel server
ujob() {
	local name="u-kernel-${1%/*}-${1#*/}-$2p"
	run_fio "$name" --paths="$(fio_paths "$2")" --devpath=nullb0 --access_mode=rw \
		--rw=randrw --bssplit=4k/50:64k/50 --iodepth=8 --size=8m \
		--offset=$((n * 16))m --direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--mr_mode="${1%/*}" --inval_mode="${1#*/}" ||
		die "engine $1 on $2 path(s): $(tail -5 "$LOGDIR/fio-$name.log")"
	grep -q 'err= 0' "$LOGDIR/fio-$name.log" || die "$name: fio reported errors"
	n=$((n + 1))
	log "engine $1, $2 path(s), kernel server (rekey): verified"
}

# replay WANT: the hostile client's chunk-replay against the kernel server
replay() {
	"$HOSTILE" -p "$SRV_PORT" -s "$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS")" \
		chunk-replay >"$LOGDIR/replay-$1.log" 2>&1 || true
	cat "$LOGDIR/replay-$1.log"
	grep -q "^PASS: hostile chunk-replay: $1" "$LOGDIR/replay-$1.log" ||
		die "chunk-replay against the kernel server: not '$1' (above)"
}

# 1. the daemon re-keys
start_server --chunk-mode rekey
kjob daemon frwr/remote push 1 rekey
kjob daemon frwr/remote push 2 rekey
kjob daemon global/none push 2 rekey
kjob daemon frwr/remote pull 2 rekey
stop_server || die "ibnbd-serverd exited with $?"

# 2. the kernel server re-keys
kmod_load chunk_mode=rekey
[ "$(cat /sys/module/ibtrs_server/parameters/chunk_mode)" = rekey ] ||
	die "chunk_mode parameter reads $(cat /sys/module/ibtrs_server/parameters/chunk_mode)"
kjob kernel frwr/remote push 1 rekey
kjob kernel frwr/remote push 2 rekey
kjob kernel global/none push 2 rekey
kjob kernel frwr/remote pull 2 rekey
ujob mw/remote 2
ujob global/none 2
replay 'chunk_mode rekey: the ended IO.s key 0x[0-9a-f]* is refused'
kmod_unload

# 3. the control: static chunks
kmod_load chunk_mode=static
kjob kernel frwr/remote push 2 static
replay 'exposure shown'
kmod_unload
kmod_log_check
log "PASS: $n verified jobs, the ended key refused under rekey and not under static"
