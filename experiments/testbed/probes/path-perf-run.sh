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
# PP_SHAPE="I:RATE" (e.g. "2:40mbit"): a third run, two guests with path I
# shaped on both sides (paths.sh shape), in OUT/two-hosts-shaped.
modes="one-guest two-hosts"
[ -n "${PP_SHAPE:-}" ] && modes+=" two-hosts-shaped"
# PP_MODES: run only these (e.g. to add the shaped run to an OUT folder)
modes=${PP_MODES:-$modes}
for m in $modes; do
	b=$top/build/testbed/path-perf-$m
	rm -rf "$b"
	args=(--paths 2 -q --timeout 400 --out "$b")
	cmd=("$probe")
	[ $m != one-guest ] && args+=(--two-hosts)
	[ $m = two-hosts-shaped ] && cmd=(env PP_SHAPE="$PP_SHAPE" "$probe")
	"${lock[@]}" experiments/testbed/run "${args[@]}" -- "${cmd[@]}" >"$b.log" 2>&1 || {
		echo "path-perf-run: $m failed: $(tail -5 "$b.log")" >&2
		exit 1
	}
	d=$b
	[ $m != one-guest ] && d=$b/clt
	mkdir -p "$out/$m"
	cp "$d/path-perf/results.txt" "$out/$m/"
	grep -h "^tb: guest" "$d/output.log" | head -1 >"$out/$m/guest.txt" || true
	cp "$d/qemu-cmdline" "$out/$m/"
	[ $m != one-guest ] && cp "$b/srv/qemu-cmdline" "$out/$m/qemu-cmdline.srv"
done
{
	echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- experiments || echo ' (experiments/ modified)')"
	echo "date $(date -u +%FT%TZ)"
	echo "qemu $(qemu-system-x86_64 --version | head -1)"
	echo "host_cpus $(nproc)"
} >"$out/meta.txt"
/usr/bin/python3 experiments/testbed/probes/path-perf-table.py "$out" >"$out/README.md"
cat "$out/README.md"
