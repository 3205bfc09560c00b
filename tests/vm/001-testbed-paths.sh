#!/bin/bash
# Testbed self-test: every path carries RDMA traffic on its own rxe device,
# with data checked (rping -V verifies every ping/pong buffer), and the
# traffic shows up in that path's rxe counters and no other path's.
# TIMEOUT=180
set -euo pipefail
. "$TB_TOP/experiments/testbed/guest-lib.sh"
tb_require_cmd rping

sent() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/sent_pkts"; }
fail=0
for ((i = 1; i <= TB_PATHS; i++)); do
	srv=$(tb_nth $i "$TB_SRV_ADDRS") clt=$(tb_nth $i "$TB_CLT_ADDRS")
	declare -A before=()
	for d in $TB_RXE_DEVS; do before[$d]=$(sent $d); done
	rping -s -a "$srv" -C 20 -S 4096 >/tmp/rping-s$i.log 2>&1 &
	spid=$!
	# The server listens once it has started (0.5 s was not always enough
	# on a loaded host: the connect was rejected, and the server then
	# waited for ever): a rejected connect is tried again, for 20 s.
	ok=0
	for ((try = 0; try < 40; try++)); do
		sleep 0.5
		if timeout 60 rping -c -a "$srv" -I "$clt" -C 20 -V -S 4096 >/tmp/rping-c$i.log 2>&1; then
			ok=1
			break
		fi
		grep -q REJECTED /tmp/rping-c$i.log && kill -0 $spid 2>/dev/null || break
	done
	if [ $ok = 0 ]; then
		echo "path $i: rping failed"; cat /tmp/rping-c$i.log; fail=1
		kill $spid 2>/dev/null
	fi
	wait $spid || { echo "path $i: rping server failed"; fail=1; }
	own=$(tb_nth $i "$TB_RXE_DEVS")
	for d in $TB_RXE_DEVS; do
		delta=$(($(sent $d) - ${before[$d]}))
		if [ "$d" = "$own" ] && [ $delta -lt 40 ]; then
			echo "path $i: only $delta packets on $d"; fail=1
		elif [ "$d" != "$own" ] && [ $delta -ne 0 ]; then
			echo "path $i: $delta packets leaked onto $d"; fail=1
		fi
	done
	echo "path $i ($srv via $own): rping 20 x 4 KiB verified, $(($(sent $own) - ${before[$own]})) packets"
done
exit $fail
