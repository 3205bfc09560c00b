#!/bin/bash
# Cutting one path leaves the others working, and restoring it brings it back.
# Also records what QPs on a cut path see (docs in experiments/testbed/README.md):
#  - "link" cut (netdev down): rxe stops sending on the path; no async event
#    reaches the QPs; a sender's next WR completes in error at once
#    (IBV_WC_LOC_QP_OP_ERR: no route), a QP that only waits hears nothing: a
#    silent peer that only a heartbeat detects.
#  - "rxe" cut (rdma link delete): device removal; RDMA CM delivers
#    DEVICE_REMOVAL and the QPs are flushed at once. (The removal waits for
#    every process holding the device, so no stream runs on path 1 then.)
# TIMEOUT=300
set -uo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
tb_require_cmd ib_write_bw
tb_require_cmd rping
[ "$TB_PATHS" -ge 2 ] || { echo "SKIP: needs 2 paths"; exit 77; }

sent() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/sent_pkts" 2>/dev/null || echo 0; }
rport=7100
listening() { tb_wait_cm_listener "$1" || echo "no listener on port $1 after 10 s"; }
rping_once() {	# rping_once I: one short verified rping over path I
	local srv clt rc
	srv=$(tb_nth $1 "$TB_SRV_ADDRS") clt=$(tb_nth $1 "$TB_CLT_ADDRS")
	rport=$((rport + 1))
	timeout 15 rping -s -a "$srv" -p $rport -C 5 -S 1024 >/dev/null 2>&1 &
	local spid=$!
	listening $rport
	timeout 10 rping -c -a "$srv" -I "$clt" -p $rport -C 5 -V -S 1024 >/dev/null 2>&1
	rc=$?
	kill $spid 2>/dev/null; wait $spid 2>/dev/null
	return $rc
}
rping_ok() {	# rping_ok I: up to 3 tries (TCG scheduling hiccups)
	local try
	for try in 1 2 3; do rping_once $1 && return 0; done
	return 1
}
# stream I PORT: ib_write_bw server+client over path I for 8 s; client pid in $!
stream() {
	local dev srv
	dev=$(tb_nth $1 "$TB_RXE_DEVS") srv=$(tb_nth $1 "$TB_SRV_ADDRS")
	timeout 40 ib_write_bw -R -d "$dev" -p $2 -D 8 -s 4096 >/tmp/bw-s$1.log 2>&1 &
	listening $2
	timeout 30 ib_write_bw -R -d "$dev" -p $2 -D 8 -s 4096 "$srv" >/tmp/bw-c$1.log 2>&1 &
}

fail=0
port=18515
for how in link rxe; do
	port=$((port + 10))	# fresh ports: the killed peers' CM ids may linger
	rping_ok 1 || { echo "$how: path 1 does not work before the cut"; fail=1; }
	stream 2 $((port + 1)); c2=$!
	c1=
	if [ $how = link ]; then stream 1 $port; c1=$!; fi
	sleep 3
	tb_log "cut path 1 ($how)"
	tb_path_cut 1 "$how"
	a1=$(sent rxe1) a2=$(sent rxe2)
	sleep 2
	b1=$(sent rxe1) b2=$(sent rxe2)
	echo "$how: 2 s after the cut: path 2 sent $((b2 - a2)) packets, path 1 sent $((b1 - a1))"
	[ $((b2 - a2)) -gt 100 ] || { echo "FAIL: $how: path 2 stalled after path 1 was cut"; fail=1; }
	if [ $how = link ] && [ $((b1 - a1)) -ne 0 ]; then
		echo "FAIL: $how: the cut path still sent packets"; fail=1
	fi
	if [ -n "$c1" ]; then
		wait $c1; r1=$?
		echo "$how: the path-1 stream's client ended with status $r1; last lines:"
		grep -v '^ *$' /tmp/bw-c1.log | tail -2 | sed 's/^/    /'
	fi
	wait $c2
	grep -q 'MsgRate' /tmp/bw-c2.log && echo "$how: path 2 stream: $(grep -A1 MsgRate /tmp/bw-c2.log | tail -1)" ||
		{ echo "FAIL: $how: path 2 stream produced no result"; cat /tmp/bw-c2.log; fail=1; }
	pkill ib_write_bw; sleep 0.5
	rping_ok 2 || { echo "FAIL: $how: path 2 broken while path 1 is cut"; fail=1; }
	if rping_once 1; then echo "FAIL: $how: the cut path 1 still carries RDMA"; fail=1; fi
	tb_path_restore 1 || { echo "FAIL: $how: restore failed"; fail=1; }
	if rping_ok 1; then echo "$how: path 1 works again after restore"; else
		echo "FAIL: $how: path 1 dead after restore"; fail=1; fi
done
exit $fail
