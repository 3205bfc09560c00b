#!/usr/bin/env bash
# run.sh - E01-baseline: raw verbs limits (perftest), nvme-rdma, upstream
# RNBD (1 and 2 paths) and local null_blk, same null_blk device, fio 4k
# randread/randwrite QD1/QD32 and 128k sequential read/write, >= 3 runs,
# interleaved. Two boots: icount (the primary, deterministic measure:
# instructions per IO) and multi-threaded TCG (near real time; perftest and
# the noise comparison).
#
# The icount boot is repeated E01_ICOUNT_BOOTS times (icount, icount2, ...:
# a verdict rests on the spread across boots, not only within one).
#
# Usage: experiments/E01-baseline/run.sh [icount] [mttcg]   (default: both)
# Writes results/E01-baseline/<stamp>-<git>/ and appends results/summary.csv.
set -euo pipefail
EX_TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$EX_TOP"
. experiments/lib/meta.sh
. experiments/E01-baseline/params.env
phases=
for p in ${*:-icount mttcg}; do
	phases+=" $p"
	if [ "$p" = icount ]; then
		for ((b = 2; b <= E01_ICOUNT_BOOTS; b++)); do phases+=" icount$b"; done
	fi
done
phases=${phases# }

rnbd_dir=$(experiments/baselines/rnbd-build.sh)
stamp=$(date +%Y%m%d-%H%M%S)-$(ex_git)
dir=results/E01-baseline/$stamp
mkdir -p "$dir"
params=()
for v in $(grep -oE '^E01_[A-Z_]+' experiments/E01-baseline/params.env); do
	params+=("$v=${!v}")
done
ex_meta_json "$dir/meta.json" E01-baseline "${params[@]}" "phases=$phases"
fast=()
[ "$E01_FAST_RXE" = 1 ] && fast=(--fast-rxe)
# A boot that hangs should end with its reason on the console: kernel errors
# (RCU stalls, hung tasks) printed there, and a soft lockup panics (the
# testbed's panic=-1 then ends the guest) instead of spinning until the host
# timeout with nothing to show (the icount boot of run 20261202-094850).
export TB_GUEST_APPEND="loglevel=4 softlockup_panic=1${TB_GUEST_APPEND:+ $TB_GUEST_APPEND}"
make -s -C experiments/lib
for phase in $phases; do
	mode=${phase%%[0-9]*}	# icount2 -> icount
	partial=()
	prof=()
	if [ "$mode" = icount ] && [ "$E01_PROFILE" = 1 ]; then
		if [ -e build/profiler/tbprof.so ]; then
			prof=(--profile)
		else
			echo "E01: the profiler plugin is not built (make; see experiments/profiler): no instruction profile" >&2
		fi
	fi
	echo "== E01-baseline: $phase boot ($(date +%T))"
	mkdir -p "$dir/$phase"
	echo "$rnbd_dir" >"$dir/$phase/rnbd-dir"
	printf '%q\n' "${params[@]}" >"$dir/$phase/params.env"	# effective values, for the guest
	experiments/testbed/run --mode "$mode" --paths "$E01_PATHS" "${fast[@]}" "${prof[@]}" \
		--timeout 1500 --out "$dir/$phase" -- \
		bash experiments/E01-baseline/guest.sh "$mode" /tb-out/raw |
		grep --line-buffered -E '^\[|^tb:|experiment:|fail' || true
	rm -f "$dir/$phase/rnbd-dir" "$dir/$phase/cmd" "$dir/$phase/params.env"
	if [ "$(cat "$dir/$phase/rc" 2>/dev/null)" != 0 ]; then
		# A boot that crashed, hung or timed out loses its boot, not the
		# experiment: the next boots still run. What it measured before
		# it stopped is summarized (its cells are complete files only),
		# and the run is marked.
		echo "E01: $phase boot failed (rc $(cat "$dir/$phase/rc" 2>/dev/null || echo none)); see $dir/$phase/console.log and output.log" >&2
		echo "$phase" >>"$dir/failed-boots.txt"
		failed=1 partial=(--partial)
		ls "$dir/$phase/raw/"*.snap >/dev/null 2>&1 || continue
	fi
	/usr/bin/python3 experiments/lib/summarize.py "$dir" E01-baseline "$phase" --append results/summary.csv --compress "${partial[@]}" ||
		{ echo "E01: $phase: summarize.py failed" >&2; failed=1; continue; }
	if [ -s "$dir/$phase/raw/failed-cells.txt" ]; then
		echo "E01: $phase: $(wc -l <"$dir/$phase/raw/failed-cells.txt") cell(s) failed:" >&2
		sed 's/^/  /' "$dir/$phase/raw/failed-cells.txt" >&2
		failed=1
	fi
done
echo "E01-baseline: results in $dir"
[ -s "$dir/failed-boots.txt" ] &&
	echo "E01-baseline: boot(s) that failed: $(tr '\n' ' ' <"$dir/failed-boots.txt")" >&2
exit ${failed:-0}
