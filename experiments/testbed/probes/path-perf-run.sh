#!/bin/bash
# path-perf-run.sh [OUT] - per-path latency and bandwidth (path-perf.sh) in
# the single-guest testbed and across the two guests of --two-hosts, both
# with 2 paths, MTTCG, one after the other under the VM lock; writes
# OUT/{one-guest,two-hosts}/results.txt, the runs' metadata and
# OUT/README.md (a table made from the results by path-perf-table.py).
# Default OUT: results/testbed-two-hosts/<stamp>-path-perf.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
out=${1:-$top/results/testbed-two-hosts/$(date +%Y%m%d-%H%M%S)-path-perf}
mkdir -p "$out"
out=$(cd "$out" && pwd)
lock=(flock /tmp/ibtrs-vm.lock)
[ "${TB_VM_LOCK_HELD:-0}" = 1 ] && lock=()
probe=experiments/testbed/probes/path-perf.sh
for m in one-guest two-hosts; do
	b=$top/build/testbed/path-perf-$m
	rm -rf "$b"
	args=(--paths 2 -q --timeout 400 --out "$b")
	[ $m = two-hosts ] && args+=(--two-hosts)
	"${lock[@]}" experiments/testbed/run "${args[@]}" -- "$probe" >"$b.log" 2>&1 || {
		echo "path-perf-run: $m failed: $(tail -5 "$b.log")" >&2
		exit 1
	}
	d=$b
	[ $m = two-hosts ] && d=$b/clt
	mkdir -p "$out/$m"
	cp "$d/path-perf/results.txt" "$out/$m/"
	grep -h "^tb: guest" "$d/output.log" | head -1 >"$out/$m/guest.txt" || true
	cp "$d/qemu-cmdline" "$out/$m/"
	[ $m = two-hosts ] && cp "$b/srv/qemu-cmdline" "$out/$m/qemu-cmdline.srv"
done
{
	echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- experiments || echo ' (experiments/ modified)')"
	echo "date $(date -u +%FT%TZ)"
	echo "qemu $(qemu-system-x86_64 --version | head -1)"
	echo "host_cpus $(nproc)"
} >"$out/meta.txt"
/usr/bin/python3 experiments/testbed/probes/path-perf-table.py "$out" >"$out/README.md"
cat "$out/README.md"
