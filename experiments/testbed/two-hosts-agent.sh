#!/bin/bash
# two-hosts-agent.sh - the server guest's command in two-host mode (run
# --two-hosts): serve commands from the client guest on the management link
# (two-hosts-agent.py on 10.98.0.1:TB_AGENT_PORT) until the host runner
# creates /tb-out/stop.
port=${TB_AGENT_PORT:-7000}
python3 "$TB_TOP/experiments/testbed/two-hosts-agent.py" 10.98.0.1 "$port" &
apid=$!
echo "tb: server agent on 10.98.0.1:$port"
while [ ! -e /tb-out/stop ]; do
	kill -0 "$apid" 2>/dev/null || { echo "tb: the agent died"; exit 1; }
	sleep 0.3
done
kill "$apid" 2>/dev/null
wait "$apid" 2>/dev/null
exit 0
