#!/usr/bin/env bash
# remote.sh - real-hardware mode of experiments/testbed/run (do not call
# directly). Runs a command on the client host of a hosts file over ssh with
# the testbed environment, then copies its output folder back.
# Args: HOSTS_FILE DRY_RUN(0|1) PATHS TIMEOUT CWD CMDLINE
set -euo pipefail
conf=$1 dry=$2 paths=$3 timeout=$4 cwd=$5 cmdline=$6
top=$(cd "$(dirname "$0")/../.." && pwd)
[ -r "$conf" ] || { echo "run: cannot read hosts file $conf" >&2; exit 125; }
# shellcheck disable=SC1090
. "$conf"
for v in TB_CLIENT_SSH TB_SERVER_SSH TB_REMOTE_TOP TB_REMOTE_OUT TB_SRV_ADDRS TB_CLT_ADDRS TB_RXE_DEVS TB_NETDEVS; do
	[ -n "${!v:-}" ] || { echo "run: $conf does not set $v" >&2; exit 125; }
done
first() { echo "$2" | tr -s ' ' '\n' | head -n "$1" | tr '\n' ' ' | sed 's/ $//'; }
for v in TB_SRV_ADDRS TB_CLT_ADDRS TB_RXE_DEVS TB_NETDEVS; do
	n=$(echo "${!v}" | wc -w)
	[ "$n" -ge "$paths" ] || { echo "run: $v has $n entries, --paths $paths needs $paths" >&2; exit 125; }
done
rel=${cwd#"$top"}
stamp=$(date +%Y%m%d-%H%M%S)
rout=$TB_REMOTE_OUT/$stamp
envs="TB_MODE=real TB_TOP=$TB_REMOTE_TOP TB_OUT=$rout TB_PATHS=$paths"
envs+=" TB_SRV_ADDRS='$(first "$paths" "$TB_SRV_ADDRS")' TB_CLT_ADDRS='$(first "$paths" "$TB_CLT_ADDRS")'"
envs+=" TB_RXE_DEVS='$(first "$paths" "$TB_RXE_DEVS")' TB_NETDEVS='$(first "$paths" "$TB_NETDEVS")'"
envs+=" TB_SRV_SSH='$TB_SERVER_SSH' TB_TIMEOUT=$timeout"
remote="mkdir -p $rout && cd $TB_REMOTE_TOP$rel && export $envs && timeout -k 5 $timeout bash -c $(printf '%q' "$cmdline")"
local_out=$top/build/testbed/runs/real-$stamp
steps=(
	"ssh -o BatchMode=yes $TB_SERVER_SSH true"
	"ssh -o BatchMode=yes $TB_CLIENT_SSH $(printf '%q' "$remote")"
	"mkdir -p $local_out && scp -rq $TB_CLIENT_SSH:$rout/. $local_out/"
)
if [ "$dry" = 1 ]; then
	echo "run: dry run, real-hardware mode, $paths path(s); would execute:"
	for s in "${steps[@]}"; do echo "  $s"; done
	exit 0
fi
eval "${steps[0]}" || { echo "run: cannot ssh to server $TB_SERVER_SSH" >&2; exit 125; }
set +e
eval "${steps[1]}"
rc=$?
set -e
eval "${steps[2]}" || echo "run: could not copy $rout back" >&2
echo "run: exit $rc; output in $local_out" >&2
exit $rc
