#!/usr/bin/env bash
# run.sh - E04-failover (one guest): what a failed path costs. Our kernel
# client, the fio engine and nvme-rdma native multipath, each over 2
# Soft-RoCE paths, run a sustained verified job (4k randrw QD32,
# verify=crc32c) through a cut of path 1 (its link down, or its rxe device
# deleted) and the path's restore. Per cell: IO and verify errors, the
# longest stall between two completions (1 ms resolution), and how long the
# restored path took to carry IO again; throughput over time (100 ms bins).
# One MTTCG boot: times are wall clock within the boot. Parameters:
# params.env. The two-host version (QMP cable pull, the server guest killed
# and booted again) is not written yet.
#
# Usage: experiments/E04-failover/run.sh
# Writes results/E04-failover/<stamp>-<git>/ (meta.json, mttcg/raw/,
# mttcg/cells.csv, mttcg/timeline.csv, report.md).
set -euo pipefail
EX_TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$EX_TOP"
. experiments/lib/meta.sh
. experiments/E04-failover/params.env
stamp=$(date +%Y%m%d-%H%M%S)-$(ex_git)
dir=results/E04-failover/$stamp
mkdir -p "$dir/mttcg"
params=()
for v in $(grep -oE '^E04_[A-Z0-9_]+' experiments/E04-failover/params.env | sort -u); do
	params+=("$v=${!v}")
done
ex_meta_json "$dir/meta.json" E04-failover "${params[@]}" "phases=mttcg"
printf '%q\n' "${params[@]}" >"$dir/mttcg/params.env"
echo "== E04-failover: mttcg boot ($(date +%T))"
rc=0
experiments/testbed/run --mode mttcg --paths 2 --timeout "$E04_BOOT_TIMEOUT" \
	--out "$dir/mttcg" -- bash experiments/E04-failover/guest.sh /tb-out/raw |
	grep --line-buffered -E '^\[|^tb:|experiment:|fail' || true
rm -f "$dir/mttcg/params.env" "$dir/mttcg/cmd"
[ "$(cat "$dir/mttcg/rc" 2>/dev/null)" = 0 ] || {
	echo "E04: the boot failed (rc $(cat "$dir/mttcg/rc" 2>/dev/null || echo none)); see $dir/mttcg/console.log" >&2
	rc=1
}
/usr/bin/python3 experiments/E04-failover/summarize.py "$dir" || rc=1
[ -s "$dir/mttcg/raw/failed-cells.txt" ] && {
	echo "E04: failed cells:" >&2
	sed 's/^/  /' "$dir/mttcg/raw/failed-cells.txt" >&2
	rc=1
}
echo "E04: $dir/report.md"
exit $rc
