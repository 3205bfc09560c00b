#!/usr/bin/env bash
# run-cells.sh - the host side of a cell experiment (E01-baseline,
# E02-mr-inval, ...): boots the testbed once per phase, runs
# experiments/lib/guest-cells.sh inside it (systems x workloads x runs,
# interleaved) and summarizes every boot into results/.
#
# Usage: experiments/lib/run-cells.sh EXP PREFIX [icount] [mttcg]
#   EXP     the experiment's folder (experiments/EXP/params.env is sourced)
#   PREFIX  its parameters' prefix (E01, E02): PREFIX_SYSTEMS, _WORKLOADS,
#           _RUNS, _ICOUNT_BOOTS, _PATHS, _FAST_RXE, _PROFILE, ... (see
#           experiments/E01-baseline/params.env for the full list)
# Phases default to PREFIX_PHASES, else "icount mttcg". The icount boot is
# repeated PREFIX_ICOUNT_BOOTS times (icount, icount2, ...: a verdict rests
# on the spread across boots, not only within one).
# Writes results/EXP/<stamp>-<git>/ and appends results/summary.csv.
set -euo pipefail
EX_TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$EX_TOP"
exp=$1 pfx=$2
shift 2
. experiments/lib/meta.sh
. "experiments/$exp/params.env"
_pv() { local v="${pfx}_$1"; echo "${!v:-$2}"; }	# _pv NAME [DEFAULT]
phases=
for p in ${*:-$(_pv PHASES "icount mttcg")}; do
	phases+=" $p"
	if [ "$p" = icount ]; then
		for ((b = 2; b <= $(_pv ICOUNT_BOOTS 1); b++)); do phases+=" icount$b"; done
	fi
done
phases=${phases# }

rnbd_dir=$(experiments/baselines/rnbd-build.sh)
stamp=$(date +%Y%m%d-%H%M%S)-$(ex_git)
dir=results/$exp/$stamp
mkdir -p "$dir"
params=()
for v in $(grep -oE "^${pfx}_[A-Z0-9_]+" "experiments/$exp/params.env" | sort -u); do
	params+=("$v=${!v}")
done
ex_meta_json "$dir/meta.json" "$exp" "${params[@]}" "phases=$phases"
fast=()
[ "$(_pv FAST_RXE 1)" = 1 ] && fast=(--fast-rxe)
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
	if [ "$mode" = icount ] && [ "$(_pv PROFILE 1)" = 1 ]; then
		if [ -e build/profiler/tbprof.so ]; then
			prof=(--profile)
		else
			echo "$pfx: the profiler plugin is not built (make; see experiments/profiler): no instruction profile" >&2
		fi
	fi
	echo "== $exp: $phase boot ($(date +%T))"
	mkdir -p "$dir/$phase"
	echo "$rnbd_dir" >"$dir/$phase/rnbd-dir"
	{
		printf '%q\n' "${params[@]}"	# effective values, for the guest
		echo "EX_PREFIX=$pfx EX_NAME=$exp"
	} >"$dir/$phase/params.env"
	experiments/testbed/run --mode "$mode" --paths "$(_pv PATHS 2)" "${fast[@]}" "${prof[@]}" \
		--timeout "$(_pv BOOT_TIMEOUT 1500)" --out "$dir/$phase" -- \
		bash experiments/lib/guest-cells.sh "$mode" /tb-out/raw |
		grep --line-buffered -E '^\[|^tb:|experiment:|fail' || true
	rm -f "$dir/$phase/rnbd-dir" "$dir/$phase/cmd" "$dir/$phase/params.env"
	if [ "$(cat "$dir/$phase/rc" 2>/dev/null)" != 0 ]; then
		# A boot that crashed, hung or timed out loses its boot, not the
		# experiment: the next boots still run. What it measured before
		# it stopped is summarized (its cells are complete files only),
		# and the run is marked.
		echo "$pfx: $phase boot failed (rc $(cat "$dir/$phase/rc" 2>/dev/null || echo none)); see $dir/$phase/console.log and output.log" >&2
		echo "$phase" >>"$dir/failed-boots.txt"
		failed=1 partial=(--partial)
		ls "$dir/$phase/raw/"*.snap >/dev/null 2>&1 || continue
	fi
	/usr/bin/python3 experiments/lib/summarize.py "$dir" "$exp" "$phase" --append results/summary.csv --compress "${partial[@]}" ||
		{ echo "$pfx: $phase: summarize.py failed" >&2; failed=1; continue; }
	if [ -s "$dir/$phase/raw/failed-cells.txt" ]; then
		echo "$pfx: $phase: $(wc -l <"$dir/$phase/raw/failed-cells.txt") cell(s) failed:" >&2
		sed 's/^/  /' "$dir/$phase/raw/failed-cells.txt" >&2
		failed=1
	fi
done
echo "$exp: results in $dir"
[ -s "$dir/failed-boots.txt" ] &&
	echo "$exp: boot(s) that failed: $(tr '\n' ' ' <"$dir/failed-boots.txt")" >&2
exit ${failed:-0}
