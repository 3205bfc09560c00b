#!/bin/bash
# two-hosts-cost-run.sh [OUT] - client-side vs server-side instructions per
# IO (probes/two-hosts-cost.sh in the client guest of
# `run --two-hosts --mode icount --profile --paths 1`, under the VM lock),
# then the per-side table (two-hosts-cost.py) into OUT/README.md. The raw
# profiles, kallsyms and maps are kept gzipped. Environment: SYSTEMS, CELLS,
# RUNS (two-hosts-cost.sh). Default OUT:
# results/testbed-two-hosts/<stamp>-cost.
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
out=${1:-$top/results/testbed-two-hosts/$(date +%Y%m%d-%H%M%S)-cost}
mkdir -p "$out"
out=$(cd "$out" && pwd)
lock=(flock /tmp/ibtrs-vm.lock)
[ "${TB_VM_LOCK_HELD:-0}" = 1 ] && lock=()
[ -r build/profiler/tbprof.so ] || { echo "two-hosts-cost-run: profiler not built (make build)" >&2; exit 1; }
[ -e build/kmod/ibnbd-client.ko ] || { echo "two-hosts-cost-run: kernel modules not built (make -C kmod)" >&2; exit 1; }
b=$top/build/testbed/two-hosts-cost
rm -rf "$b"
# The guest gets no host environment: the settings go on its command line.
"${lock[@]}" experiments/testbed/run --two-hosts --mode icount --profile --paths 1 -q \
	--timeout 3000 --out "$b" -- env SYSTEMS="${SYSTEMS:-ibnbd nvme_rdma}" RUNS="${RUNS:-3}" \
	${CELLS:+CELLS="$CELLS"} experiments/testbed/probes/two-hosts-cost.sh \
	>"$b.log" 2>&1 || { echo "two-hosts-cost-run: the run failed: $(tail -5 "$b.log")" >&2; exit 1; }
wall=$(sed -n 's/^run: two hosts: exit 0 after \([0-9]*\)s.*/\1/p' "$b.log")
for side in clt srv; do
	mkdir -p "$out/$side"
	cp -r "$b/$side/raw" "$out/$side/"
	cp "$b/$side/profile.raw" "$b/$side/qemu-cmdline" "$out/$side/"
	cp "$b/$side/output.log" "$out/$side/" 2>/dev/null || true
done
{
	echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- experiments kmod || echo ' (experiments/ or kmod/ modified)')"
	echo "date $(date -u +%FT%TZ)"
	echo "wall_s $wall (both guests, from the launcher; the VM lock's wait excluded)"
	echo "qemu $(qemu-system-x86_64 --version | head -1)"
	echo "mode icount shift=0 sleep=on, 1 vCPU and 2 GiB per guest, -cpu qemu64, MTU 1500, 1 path"
	echo "guest_kernel $(experiments/testbed/kver.sh)"
} >"$out/meta.txt"
{
	echo "# Two-host testbed: client-side vs server-side cost per IO"
	echo
	echo "Made by \`experiments/testbed/probes/two-hosts-cost-run.sh\` (guest side"
	echo "\`two-hosts-cost.sh\`, table \`two-hosts-cost.py\`); every number below is computed"
	echo "from the files in this folder."
	echo
	sed 's/^/- /' "$out/meta.txt"
	echo
	/usr/bin/python3 experiments/testbed/probes/two-hosts-cost.py "$out"
} >"$out/README.md"
# keep the raw profile files compressed, as results/E01-baseline does
for side in clt srv; do
	gzip -9 "$out/$side/profile.raw" "$out/$side/raw/kallsyms.txt" "$out/$side/raw/"*.maps
done
cat "$out/README.md"
