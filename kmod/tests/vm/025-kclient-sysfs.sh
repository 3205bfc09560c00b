#!/bin/bash
# 025-kclient-sysfs: the session directory of ibtrs-client,
# /sys/kernel/ibtrs-client/<sessname>/ (state, mp_policy, counters,
# add_path, paths/<src@dst>/{state,counters,reconnect,remove_path}),
# exercised during one verified fio write job (kernel server, same guest):
#  1. bad inputs refused with EINVAL (unknown policy, bad address, reconnect
#     or remove_path with anything but 1), each with a kernel message; the
#     only path cannot be removed (EBUSY);
#  2. add_path: the session grows from 1 to 2 paths under IO, both carry IO;
#  3. mp_policy round-robin and min-latency under IO: each path carries at
#     least 20 % of the requests (min-latency must share equal paths);
#  4. reconnect of path 1 under IO: it reconnects (reconnects counters);
#  5. remove_path of path 2 under IO: its directory goes, path 1 carries on;
#  fio ends without error and verifies; messages and registration work
#  requests per IO are computed from the session counters; unmap removes
#  the session directory; rmmod; the kernel log is clean.
# TIMEOUT=180
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
setup_nullb
kmod_load
kclt_load reconnect_min_ms=500 reconnect_max_ms=2000

# _wfail ERRTEXT FILE VALUE: writing VALUE to FILE must fail with ERRTEXT.
_wfail() {
	local err
	if err=$( (echo "$3" >"$2") 2>&1); then
		die "$2 accepted '$3'"
	fi
	echo "$err" | grep -q "$1" || die "$2 '$3': $err (want $1)"
}
# _reqs DIR: requests of a path so far.
_reqs() { cat "$1/reqs"; }

c1=$(tb_nth 1 "$TB_CLT_ADDRS") s1=$(tb_nth 1 "$TB_SRV_ADDRS")
c2=$(tb_nth 2 "$TB_CLT_ADDRS") s2=$(tb_nth 2 "$TB_SRV_ADDRS")
kclt_map "sessname=ksys path=$c1@$s1 device_path=nullb0"
S=/sys/kernel/ibtrs-client/ksys
P1=$S/paths/$c1@$s1
P2=$S/paths/$c2@$s2
for f in state mp_policy ios read_bytes write_bytes inflight msgs reg_wrs \
	failovers reconnects add_path; do
	[ -e "$S/$f" ] || die "no $S/$f"
done
for f in state reqs rsps msgs reg_wrs local_invs hb_sent hb_rtt_us \
	proto_errors failovers reconnects inflight lat_us reconnect remove_path; do
	[ -e "$P1/$f" ] || die "no $P1/$f"
done
[ "$(cat $S/state)" = connected ] || die "session state $(cat $S/state)"
[ "$(cat $P1/state)" = connected ] || die "path state $(cat $P1/state)"
[ "$(cat $S/mp_policy)" = round-robin ] || die "mp_policy $(cat $S/mp_policy)"

# 1. bad inputs
_wfail 'Invalid argument' $S/mp_policy fastest
kmsgs | grep -q "mp_policy: unknown policy 'fastest'" || die "no log line for the bad policy"
_wfail 'Invalid argument' $S/add_path 10.0.0.300
_wfail 'Invalid argument' $S/add_path "$c2@"
_wfail 'Invalid argument' $S/add_path "10.99.2.2@fe80::1"
kmsgs | grep -q "add_path: bad path '10.0.0.300'" || die "no log line for the bad path"
_wfail 'Invalid argument' $P1/reconnect 2
_wfail 'Invalid argument' $P1/remove_path yes
_wfail 'Device or resource busy' $P1/remove_path 1
kmsgs | grep -q "remove_path: the last path" || die "no log line for the last path"
_wfail 'File exists' $S/add_path "$c1@$s1"
[ "$(cat $S/mp_policy)" = round-robin ] || die "a bad policy changed mp_policy"

FIO_TIMEOUT=120
# 64 MiB at 8 MiB/s: ~8 s of writes, then the verify reads; the job must
# outlast every step below, so the debug kernel's fio keeps its size
# (TB_FIO_SIZE_DIV=1: its 8 MiB at ~1 MiB/s had ended before step 5)
timeout -k 10 "$FIO_TIMEOUT" env TB_FIO_SIZE_DIV=1 fio --name=sys --filename="/dev/$KCLT_DEV" \
	--ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=16 \
	--size=64m --rate=8m --verify=crc32c --do_verify=1 --verify_fatal=1 \
	>"$LOGDIR/fio-sys.log" 2>&1 &
FIO=$!
sleep 1

# 2. add_path under IO
echo "$c2@$s2" >$S/add_path || die "add_path $c2@$s2 failed"
[ -d "$P2" ] || die "no $P2 after add_path"
[ "$(cat $P2/state)" = connected ] || die "added path is $(cat $P2/state)"
log "add_path: 2 paths"

# 3. policies under IO: both paths share
_share() {	# POLICY: both paths carry >= 20 % of the requests for 2 s
	local a1 a2 d1 d2
	echo "$1" >$S/mp_policy || die "mp_policy $1 refused"
	[ "$(cat $S/mp_policy)" = "$1" ] || die "mp_policy reads $(cat $S/mp_policy)"
	sleep 0.3
	a1=$(_reqs $P1) a2=$(_reqs $P2)
	sleep $((2 * TS))	# the debug kernel (TS 4) moved 87 requests in 2 s once
	d1=$(($(_reqs $P1) - a1)) d2=$(($(_reqs $P2) - a2))
	log "$1: path 1 $d1 requests, path 2 $d2 (lat_us $(cat $P1/lat_us) / $(cat $P2/lat_us))"
	[ $((d1 + d2)) -gt 100 ] || die "$1: too little IO ($d1 + $d2)"
	[ $((d1 * 5)) -ge $((d1 + d2)) ] && [ $((d2 * 5)) -ge $((d1 + d2)) ] ||
		die "$1: paths do not share ($d1 / $d2)"
}
_share round-robin
_share min-latency
echo min-inflight >$S/mp_policy || die "mp_policy min-inflight refused"
echo round-robin >$S/mp_policy || die "mp_policy round-robin refused"

# 4. reconnect of path 1 under IO
r0=$(cat $P1/reconnects) sr0=$(cat $S/reconnects)
echo 1 >$P1/reconnect || die "reconnect failed"
for i in $(seq 1 50); do
	[ "$(cat $P1/reconnects)" -gt "$r0" ] && [ "$(cat $P1/state)" = connected ] && break
	sleep 0.1
done
[ "$(cat $P1/reconnects)" -gt "$r0" ] || die "path 1 did not reconnect"
[ "$(cat $S/reconnects)" -gt "$sr0" ] || die "session reconnects did not grow"
log "reconnect: path 1 $(cat $P1/state), reconnects $(cat $P1/reconnects), failovers $(cat $P1/failovers)"
kmsgs | grep -q "path $s1:$SRV_PORT: reconnect now" || die "no log line for the reconnect"

# 5. remove_path of path 2 under IO
a1=$(_reqs $P1)
echo 1 >$P2/remove_path || die "remove_path of path 2 failed"
[ -e "$P2" ] && die "$P2 still there after remove_path"
for i in $(seq 1 $((50 * TS))); do
	[ "$(_reqs $P1)" -gt "$a1" ] && break
	sleep 0.1
done
[ "$(_reqs $P1)" -gt "$a1" ] || die "no IO on path 1 after path 2 was removed"
kill -0 $FIO 2>/dev/null || die "fio ended before the remove_path was checked"
log "remove_path: path 2 gone, $(cat $S/failovers) failovers in the session"

wait $FIO
rc=$?
[ $rc -eq 0 ] || die "fio failed ($rc): $(tail -5 "$LOGDIR/fio-sys.log")"
grep -q 'err= 0' "$LOGDIR/fio-sys.log" || die "fio reported errors"
ios=$(cat $S/ios) msgs=$(cat $S/msgs) regs=$(cat $S/reg_wrs)
log "session: ios=$ios msgs=$msgs reg_wrs=$regs read_bytes=$(cat $S/read_bytes) write_bytes=$(cat $S/write_bytes) inflight=$(cat $S/inflight)"
log "per IO: $(awk -v m="$msgs" -v r="$regs" -v i="$ios" 'BEGIN { printf "%.3f messages, %.3f registration WRs", m / i, r / i }')"
[ "$ios" -gt 16384 ] || die "ios=$ios, fewer than fio's 16384 writes"
[ "$msgs" -ge "$ios" ] || die "fewer messages ($msgs) than IOs ($ios)"
[ "$(cat $S/inflight)" = 0 ] || die "session inflight $(cat $S/inflight) after fio"
[ "$(cat $P1/proto_errors)" = 0 ] || die "protocol errors on path 1"
kclt_unmap "$KCLT_DEV"
[ -e "$S" ] && die "$S still there after the last unmap"
kclt_unload
kmod_unload
kmod_log_check 10
log "PASS"
