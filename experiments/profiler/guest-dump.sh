#!/usr/bin/env bash
# guest-dump.sh - symbol sources for experiments/profiler/attribute.py,
# taken inside the testbed guest.
#
# Usage: guest-dump.sh kallsyms OUT   /proc/kallsyms with module names; once
#                                     per boot, after every module is loaded
#                                     (kernel ASLR: only this boot's copy is
#                                     right). Needs root (else addresses are 0).
#                                     With TB_PROFILE=1 and TB_OUT set it
#                                     also runs build/profiler/tbnic: the
#                                     NIC code's address ranges for the
#                                     plugin's caller attribution, in
#                                     $TB_OUT/nic.ranges (TBNIC_RULES=FILE
#                                     for other rules than components.conf)
#        guest-dump.sh maps OUT       every process's executable mappings:
#                                     "P <pid> <comm>" then its /proc/PID/maps
#                                     lines with x permission; right after a
#                                     window's STOP, while the measured
#                                     processes still run.
# Writes OUT atomically (OUT.tmp, then rename) so a reader never sees half.
set -euo pipefail

die() {
	echo "guest-dump: $*" >&2
	exit 1
}

# Caller attribution (tbprof.c): the plugin reads $TB_OUT/nic.ranges when
# tbnic executes the CONF marker. Without tbnic the profile is symbol-only.
nic_ranges() {
	local ks=$1 bin
	bin=$(cd "$(dirname "$0")/../.." && pwd)/build/profiler/tbnic
	[ "${TB_PROFILE:-0}" = 1 ] && [ -n "${TB_OUT:-}" ] || return 0
	if [ ! -x "$bin" ]; then
		echo "guest-dump: $bin not built: no caller attribution" >&2
		return 0
	fi
	"$bin" --kallsyms "$ks" --out "$TB_OUT/nic.ranges" ${TBNIC_RULES:+--rules "$TBNIC_RULES"} ||
		echo "guest-dump: tbnic failed: no caller attribution" >&2
}

dump_kallsyms() {
	local out=$1

	[ "$(id -u)" = 0 ] || die "kallsyms needs root (addresses read as 0 otherwise)"
	# Copied into the guest's /tmp first: /proc/kallsyms comes a page per
	# read, and one 9p write per page to $TB_OUT left the guest idle in
	# thousands of round trips, each of which an icount boot (sleep=off)
	# jumps over to its next timer, so under host load the dump alone ran
	# past a 120 s guest timeout. From /tmp, cat writes 128 KiB at a time.
	local tmp
	tmp=$(mktemp /tmp/kallsyms.XXXXXX)
	cat /proc/kallsyms >"$tmp"
	# kptr_restrict can zero the addresses even for root. Per-CPU
	# variables come first and are 0-based anyway: look at text symbols.
	if awk '$2 ~ /^[Tt]$/ { nz = $1 !~ /^0+$/; exit } END { exit !nz }' "$tmp"; then
		cat "$tmp" >"$out.tmp" && mv "$out.tmp" "$out"
		nic_ranges "$tmp"
		rm -f "$tmp"
	else
		rm -f "$tmp"
		die "/proc/kallsyms shows no addresses (kernel.kptr_restrict=$(cat /proc/sys/kernel/kptr_restrict))"
	fi
}

# Two greps (which, unlike awk, go on past a process that exited) and one
# awk: the dump runs after a window's STOP, so its cost is not measured, but
# a shell loop with a here-string per line took ~30 s of wall time per
# window under TCG.
dump_maps() {
	local out=$1

	{
		grep -H . /proc/[0-9]*/comm || true
		# grep fails on a process that exited meanwhile: not an error
		grep -H '^[0-9a-f]*-[0-9a-f]* ..x' /proc/[0-9]*/maps || true
	} 2>/dev/null | awk '{
		i = index($0, ":"); f = substr($0, 1, i - 1); rest = substr($0, i + 1)
		split(f, p, "/"); pid = p[3]
		if (p[4] == "comm") { comm[pid] = rest; next }
		if (!(pid in seen)) { order[++n] = pid; seen[pid] = 1 }
		lines[pid] = lines[pid] rest "\n"
	}
	END {
		for (k = 1; k <= n; k++) {
			pid = order[k]
			printf "P %s %s\n%s", pid, (pid in comm) ? comm[pid] : "?", lines[pid]
		}
	}' >"$out.tmp"
	mv "$out.tmp" "$out"
}

[ $# -eq 2 ] || die "usage: guest-dump.sh kallsyms|maps OUT"
case $1 in
kallsyms) dump_kallsyms "$2" ;;
maps) dump_maps "$2" ;;
*) die "unknown dump '$1' (kallsyms or maps)" ;;
esac
