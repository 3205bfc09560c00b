#!/usr/bin/env bash
# vm-plan - what tests/check's two VM passes run, without booting a guest
# (tests/run-vm --list): every glob of tests/san-vm-tests names at least
# one VM test; the first pass (run-vm with an --exclude per glob) and the
# sanitizer pass together run every VM test exactly once; --exclude leaves
# out exactly what it names; a glob that names nothing is refused.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
rv=tests/run-vm
check() {	# NAME OK(0/1) WHY
	if [ "$2" = 0 ]; then echo "PASS: vm-plan: $1"; else echo "FAIL: vm-plan: $1: $3"; fi
}
mapfile -t globs < <(grep -v '^#' tests/san-vm-tests)
all=$("$rv" --list)
bad=
san=
excl=()
for g in "${globs[@]}"; do
	m=$("$rv" --list "$g" 2>/dev/null) || { bad+=" $g"; continue; }
	san+="$m"$'\n'
	excl+=(--exclude "$g")
done
check "every sanitizer-pass glob names a VM test (${#globs[@]} globs)" "$([ -z "$bad" ] && [ ${#globs[@]} -gt 0 ]; echo $?)" \
	"no match:$bad"
first=$("$rv" --list "${excl[@]}")
both=$(printf '%s\n%s\n' "$first" "$san" | sed '/^$/d' | sort)
dups=$(uniq -d <<<"$both")
check "the two passes run every VM test once ($(wc -l <<<"$all") tests)" \
	"$([ -n "$first" ] && [ "$both" = "$(sort <<<"$all")" ] && [ -z "$dups" ]; echo $?)" \
	"twice: $dups; missing: $(comm -23 <(sort <<<"$all") <(uniq <<<"$both") | tr '\n' ' ')"
one=$(head -n1 <<<"$all")
left=$("$rv" --list --exclude "$one")
check "--exclude leaves out exactly what it names" \
	"$([ "$(wc -l <<<"$left")" = $(($(wc -l <<<"$all") - 1)) ] && ! grep -qxF "$one" <<<"$left"; echo $?)" \
	"excluding $one: $(wc -l <<<"$left") of $(wc -l <<<"$all") left"
"$rv" --list no-such-test-glob >/dev/null 2>&1
check "a glob that names no VM test is refused" "$([ $? = 1 ]; echo $?)" "exit status not 1"
