# shellcheck shell=bash
# budget.sh - sourced by run.sh and planted.sh: how long `make check` fuzzes
# each harness. FUZZ_CHECK_SECONDS (60) is shared out by weight: the
# harnesses of small input spaces (a few fixed-size fields) reach their
# coverage within a second or two and get one share, those of strings and
# of several messages two.
FUZZ_BIG="rx io_req ibnbd map_device srv_opts engine_opts"

# fuzz_check_secs HARNESS ALL-HARNESSES...: seconds for HARNESS (at least 3)
fuzz_check_secs() {
	local h=$1 w=0 x s
	shift
	for x in "$@"; do
		if grep -qw -- "$x" <<<"$FUZZ_BIG"; then w=$((w + 2)); else w=$((w + 1)); fi
	done
	s=$(( ${FUZZ_CHECK_SECONDS:-60} / w ))
	grep -qw -- "$h" <<<"$FUZZ_BIG" && s=$((s * 2))
	[ "$s" -ge 3 ] || s=3
	echo "$s"
}
