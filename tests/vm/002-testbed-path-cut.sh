#!/bin/bash
# Cutting one path leaves the others working, and restoring it brings it back.
# Also records what QPs on a cut path see (docs in experiments/testbed/README.md):
#  - "link" cut (netdev down): rxe stops sending; nothing is reported to the
#    QPs; the requester side errors only when its RC retries run out
#    (IBV_WC_RETRY_EXC_ERR), the responder side never hears anything: a
#    silent peer that only a heartbeat detects.
#  - "rxe" cut (rdma link delete): device removal; RDMA CM delivers
#    DEVICE_REMOVAL and the QPs are flushed at once.
# TIMEOUT=240
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
tb_require_cmd ib_write_bw
[ "$TB_PATHS" -ge 2 ] || { echo "SKIP: needs 2 paths"; exit 77; }

sent() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/sent_pkts" 2>/dev/null || echo 0; }
rping_ok() {	# rping_ok I: short verified rping over path I
	local srv clt
	srv=$(tb_nth $1 "$TB_SRV_ADDRS") clt=$(tb_nth $1 "$TB_CLT_ADDRS")
	rping -s -a "$srv" -C 5 -S 1024 >/dev/null 2>&1 &
	sleep 0.5
	timeout 30 rping -c -a "$srv" -I "$clt" -C 5 -V -S 1024 >/dev/null 2>&1
	local rc=$?
	kill $! 2>/dev/null; wait $! 2>/dev/null
	return $rc
}
fail=0
for how in link rxe; do
	pkill ib_write_bw || true
	# Long streams on path 1 and path 2.
	for i in 1 2; do
		timeout 40 ib_write_bw -R -d rxe$i -p $((18514 + i)) -D 8 -s 4096 >/tmp/bw-s$i.log 2>&1 &
	done
	sleep 1
	timeout 30 ib_write_bw -R -d rxe1 -p 18515 -D 8 -s 4096 "$(tb_nth 1 "$TB_SRV_ADDRS")" >/tmp/bw-c1.log 2>&1 &
	c1=$!
	timeout 30 ib_write_bw -R -d rxe2 -p 18516 -D 8 -s 4096 "$(tb_nth 2 "$TB_SRV_ADDRS")" >/tmp/bw-c2.log 2>&1 &
	c2=$!
	sleep 3
	tb_log "cut path 1 ($how)"
	tb_path_cut 1 "$how"
	a1=$(sent rxe1) a2=$(sent rxe2)
	sleep 2
	b1=$(sent rxe1) b2=$(sent rxe2)
	if [ $((b2 - a2)) -le 100 ]; then
		echo "$how: path 2 stalled after path 1 was cut ($((b2 - a2)) packets in 2 s)"; fail=1
	fi
	if [ "$how" = link ] && [ $((b1 - a1)) -ne 0 ]; then
		echo "$how: cut path 1 still sent $((b1 - a1)) packets"; fail=1
	fi
	t0=$(date +%s.%N)
	wait $c1 && r1=0 || r1=$?
	t1=$(date +%s.%N)
	echo "$how cut: path-1 client ended rc=$r1 $(echo "$t1 - $t0" | bc 2>/dev/null || true)s after the cut+2s; last lines:"
	grep -v '^ *$' /tmp/bw-c1.log | tail -2 | sed 's/^/    /'
	wait $c2 && r2=0 || r2=$?
	grep -q 'MsgRate' /tmp/bw-c2.log || { echo "$how: path 2 stream produced no result"; cat /tmp/bw-c2.log; fail=1; }
	pkill ib_write_bw || true
	tb_path_restore 1
	if rping_ok 1; then echo "$how: path 1 works again after restore"; else echo "$how: path 1 dead after restore"; fail=1; fi
	rping_ok 2 || { echo "$how: path 2 broken"; fail=1; }
done
exit $fail
