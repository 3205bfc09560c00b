#!/usr/bin/env bash
# run.sh - build and run the libFuzzer harnesses of tests/fuzz/ (README.md).
#
# Usage: tests/fuzz/run.sh [--check] [--seconds N] [HARNESS...]
#   default   (make fuzz) each harness runs N seconds (FUZZ_SECONDS, 60)
#             from its seeds and its working corpus build/fuzz/corpus/<h>/,
#             which grows from run to run
#   --check   (make check) the committed seeds are the generator's output,
#             every regression input of regress/<h>/ passes, then every
#             harness runs from its seeds alone (a fresh corpus) for its
#             share of FUZZ_CHECK_SECONDS (60) in all (budget.sh: 3 s for
#             the small ones, 6 s for the string and multi-message ones;
#             --seconds N: N each)
# Each harness prints one line, per docs/CONVENTIONS.md:
#   PASS: fuzz/<h> (N execs, cov C, ft F, corpus U units, S s)
#   FAIL: fuzz/<h>: <the sanitizer's or invariant's summary> (input: <file>)
# and a crash's input is kept under build/fuzz/artifacts/<h>/; replay it
# with build/fuzz/fuzz_<h> <file>. Fuzzers run under nice -n FUZZ_NICE (10),
# FUZZ_JOBS (one per CPU) at a time, each for its whole share.
# Exit status 1 if anything failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
b=$top/build/fuzz
check=0
secs=${FUZZ_SECONDS:-60}
fixed=0
while [ $# -gt 0 ]; do
	case $1 in
	--check) check=1 ;;
	--seconds) secs=$2; fixed=1; shift ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
all=$(make -s -C "$here" list)
harnesses=${*:-$all}
for h in $harnesses; do
	grep -qw -- "$h" <<<"$all" || { echo "run.sh: no harness '$h' (have: $all)" >&2; exit 2; }
done
mkdir -p "$b"
rc=0
start=$(date +%s)

# clang with libFuzzer (Debian: clang, libclang-rt-dev; make deps)
if ! command -v "${FUZZ_CC:-clang}" >/dev/null ||
   ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
	"${FUZZ_CC:-clang}" -fsanitize=fuzzer -x c - -o "$b/.probe" 2>/dev/null; then
	for h in $harnesses; do
		echo "SKIP: fuzz/$h: clang with libFuzzer not installed (make deps)"
	done
	exit 0
fi

bins=()
for h in $harnesses; do
	bins+=("$b/fuzz_$h")
done
if ! make -j"$(nproc)" -C "$here" -k "${bins[@]}" >"$b/build.log" 2>&1; then
	grep -E 'error|Error' "$b/build.log" | head -20
fi

if [ $check = 1 ]; then
	# The committed seeds are what gen_seeds writes (regenerate:
	# make -C tests/fuzz seeds).
	rm -rf "$b/seeds"
	if make -s -C "$here" "$b/gen_seeds" >>"$b/build.log" 2>&1 &&
	   "$b/gen_seeds" "$b/seeds" && diff -r "$b/seeds" "$here/corpus" >"$b/seeds.diff"; then
		echo "PASS: fuzz/seeds (corpus/ is gen_seeds' output, $(find "$here/corpus" -type f | wc -l) files)"
	else
		echo "FAIL: fuzz/seeds: corpus/ differs from gen_seeds' output (make -C tests/fuzz seeds; $b/seeds.diff)"
		rc=1
	fi
	# Inputs that once crashed a harness: each must pass now.
	for h in $harnesses; do
		for f in "$here/regress/$h"/*; do
			[ -f "$f" ] || continue
			n=regress/$h/$(basename "$f")
			if [ ! -x "$b/fuzz_$h" ]; then
				echo "FAIL: fuzz/$n: harness not built (see $b/build.log)"
				rc=1
			elif "$b/fuzz_$h" "$f" >"$b/regress.log" 2>&1; then
				echo "PASS: fuzz/$n"
			else
				echo "FAIL: fuzz/$n: $(grep -m1 -E 'SUMMARY|INVARIANT|ERROR' "$b/regress.log")"
				rc=1
			fi
		done
	done
fi
# shellcheck source=tests/fuzz/budget.sh
. "$here/budget.sh"

[ $check = 1 ] || printf "%-12s %12s %6s %6s %8s %6s\n" harness execs cov ft corpus secs >"$b/summary.txt"
# fuzz_one HARNESS: fuzz one harness; its PASS/FAIL line goes to
# $b/$h.result, its summary row (make fuzz) to $b/$h.row.
fuzz_one() {
	local h=$1 bin=$b/fuzz_$1 work art log dict hs t0 frc t execs last cov ft units why input
	: >"$b/$h.row"
	if [ ! -x "$bin" ]; then
		echo "FAIL: fuzz/$h: not built (see $b/build.log)" >"$b/$h.result"
		return
	fi
	if [ $check = 1 ]; then
		work=$b/check/$h
		rm -rf "$work"
	else
		work=$b/corpus/$h
	fi
	art=$b/artifacts/$h/
	log=$b/$h.log
	mkdir -p "$work" "$art"
	dict=()
	[ -f "$here/dict/$h.dict" ] && dict=(-dict="$here/dict/$h.dict")
	hs=$secs
	# shellcheck disable=SC2086
	[ $check = 1 ] && [ $fixed = 0 ] && hs=$(fuzz_check_secs "$h" $harnesses)
	t0=$(date +%s)
	nice -n "${FUZZ_NICE:-10}" "$bin" -max_total_time="$hs" \
		-print_final_stats=1 -close_fd_mask=1 -timeout=10 \
		-artifact_prefix="$art" "${dict[@]}" "$work" "$here/corpus/$h" \
		>"$log" 2>&1
	frc=$?
	t=$(( $(date +%s) - t0 ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | grep 'cov: ' | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	units=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	if [ $frc -eq 0 ] && ! grep -qE '^SUMMARY:|FUZZ INVARIANT FAILED' "$log"; then
		echo "PASS: fuzz/$h (${execs:-?} execs, cov ${cov:-?}, ft ${ft:-?}, corpus ${units:-?} units, $t s)" >"$b/$h.result"
		printf "%-12s %12s %6s %6s %8s %6s\n" "$h" "${execs:-?}" \
			"${cov:-?}" "${ft:-?}" "${units:-?}" "$t" >"$b/$h.row"
	else
		why=$(grep -m1 -E '^SUMMARY:|FUZZ INVARIANT FAILED|==ERROR' "$log")
		input=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
		echo "FAIL: fuzz/$h: ${why:-exit status $frc} (input: ${input:-none}; log: $log)" >"$b/$h.result"
	fi
}
# FUZZ_JOBS harnesses at a time (default: one per CPU); each keeps its own
# time budget, so the coverage per harness is what a serial run reaches.
slots=${FUZZ_JOBS:-$(nproc)}
for h in $harnesses; do
	rm -f "$b/$h.result"
	while [ "$(jobs -rp | wc -l)" -ge "$slots" ]; do wait -n; done
	fuzz_one "$h" &
done
wait
for h in $harnesses; do
	if [ -s "$b/$h.result" ]; then
		cat "$b/$h.result"
	else
		echo "FAIL: fuzz/$h: the harness run left no result (log: $b/$h.log)"
	fi
	grep -q '^PASS: ' "$b/$h.result" 2>/dev/null || rc=1
	[ $check = 1 ] || cat "$b/$h.row" >>"$b/summary.txt"
done
if [ $check = 0 ]; then
	echo "--- $(wc -w <<<"$harnesses") harnesses, $secs s each, $(( $(date +%s) - start )) s in all ($b/summary.txt)"
	cat "$b/summary.txt"
else
	echo "fuzz: $(wc -w <<<"$harnesses") harnesses, $(( $(date +%s) - start )) s in all"
fi
exit $rc
