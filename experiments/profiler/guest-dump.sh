#!/usr/bin/env bash
# guest-dump.sh - symbol sources for experiments/profiler/attribute.py,
# taken inside the testbed guest.
#
# Usage: guest-dump.sh kallsyms OUT   /proc/kallsyms with module names; once
#                                     per boot, after every module is loaded
#                                     (kernel ASLR: only this boot's copy is
#                                     right). Needs root (else addresses are 0).
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

dump_kallsyms() {
	local out=$1

	[ "$(id -u)" = 0 ] || die "kallsyms needs root (addresses read as 0 otherwise)"
	cat /proc/kallsyms >"$out.tmp"
	# kptr_restrict can zero the addresses even for root. Per-CPU
	# variables come first and are 0-based anyway: look at text symbols.
	if awk '$2 ~ /^[Tt]$/ { nz = $1 !~ /^0+$/; exit } END { exit !nz }' "$out.tmp"; then
		mv "$out.tmp" "$out"
	else
		rm -f "$out.tmp"
		die "/proc/kallsyms shows no addresses (kernel.kptr_restrict=$(cat /proc/sys/kernel/kptr_restrict))"
	fi
}

# Shell builtins only inside the loop: a process per pid would cost
# instructions in a window that is still being dumped while others run.
dump_maps() {
	local out=$1 d pid comm line f

	{
		for d in /proc/[0-9]*; do
			pid=${d#/proc/}
			# Processes may exit while we read: skip them quietly.
			{ read -r comm <"$d/comm"; } 2>/dev/null || continue
			echo "P $pid $comm"
			while read -r line; do
				read -r -a f <<<"$line"
				[[ ${f[1]:-} == *x* ]] && echo "$line"
			done 2>/dev/null <"$d/maps" || true
		done
	} >"$out.tmp"
	mv "$out.tmp" "$out"
}

[ $# -eq 2 ] || die "usage: guest-dump.sh kallsyms|maps OUT"
case $1 in
kallsyms) dump_kallsyms "$2" ;;
maps) dump_maps "$2" ;;
*) die "unknown dump '$1' (kallsyms or maps)" ;;
esac
