#!/usr/bin/env bash
# ibnbd-cli - the ibnbd tool (kmod/cli/) against a fake sysfs tree
# (IBNBD_SYSFS_ROOT): the map_device string written for several argument
# combinations is exactly the expected one and the new device is printed;
# usage errors exit 2 without writing anything; a failing write exits 1
# with the errno; unmap writes normal/force to the right device; list -o
# json is valid JSON with the right fields; list -o normal shows the devices.
# A fake "kernel" (a background loop) takes each map string written and
# adds the next device, as ibnbd-client does.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if ! make -s -C "$top/kmod/cli" >/dev/null 2>"$top/build/host-ibnbd-cli-build.log"; then
	echo "FAIL: ibnbd-cli-build: see build/host-ibnbd-cli-build.log"
	exit 1
fi
IBNBD=${IBNBD:-$top/build/cli/ibnbd}
T=$(mktemp -d)
FAKE=
trap '[ -n "$FAKE" ] && kill $FAKE 2>/dev/null; rm -rf "$T"' EXIT
export IBNBD_SYSFS_ROOT=$T/sys
CTL=$T/sys/class/ibnbd-client/ctl
mkdir -p "$CTL/devices" "$T/sys/block"
: >"$CTL/map_device"
: >"$T/written"
fails=0
pass() { echo "PASS: ibnbd-cli-$1"; }
fail() { echo "FAIL: ibnbd-cli-$1: $2"; fails=$((fails + 1)); }

# the fake kernel: a map string in map_device -> appended to written,
# map_device emptied, devices/ibnbdN created
fake_kernel() {
	local n=0 s d
	while :; do
		s=$(cat "$CTL/map_device" 2>/dev/null)
		if [ -n "$s" ]; then
			printf '%s\n' "$s" >>"$T/written"
			: >"$CTL/map_device"
			d=$CTL/devices/ibnbd$n
			mkdir -p "$d" "$T/sys/block/ibnbd$n"
			echo open >"$d/state"
			sed 's/.*sessname=\([^ ]*\).*/\1/' <<<"$s" >"$d/session"
			sed 's/.*device_path=\([^ ]*\).*/\1/' <<<"$s" >"$d/mapping_path"
			: >"$d/unmap_device"
			echo "path 10.99.1.1:1234 state=connected reqs=$n rsps=$n failovers=0" >"$d/paths"
			echo $(((n + 1) * 2048)) >"$T/sys/block/ibnbd$n/size"
			n=$((n + 1))
		fi
		sleep 0.01
	done
}
fake_kernel &
FAKE=$!

# map_ok NAME EXPECTED_STRING EXPECTED_DEV ARGS...
map_ok() {
	local name=$1 want=$2 wdev=$3 out rc got
	shift 3
	out=$("$IBNBD" map "$@" 2>"$T/err") && rc=0 || rc=$?
	got=$(tail -1 "$T/written")
	if [ $rc -ne 0 ]; then
		fail "$name" "exit $rc: $(cat "$T/err")"
	elif [ "$got" != "$want" ]; then
		fail "$name" "wrote '$got', expected '$want'"
	elif [ "$out" != "$wdev" ]; then
		fail "$name" "printed '$out', expected '$wdev'"
	else
		pass "$name"
	fi
}

map_ok map-1path "sessname=s1 path=10.0.0.1 device_path=nullb0" /dev/ibnbd0 \
	--sessname s1 --path 10.0.0.1 --device nullb0
map_ok map-2paths-ro \
	"sessname=s2 path=10.99.1.2@10.99.1.1 path=10.99.2.2@10.99.2.1 device_path=/dev/nullb1 access_mode=ro" \
	/dev/ibnbd1 --sessname s2 --path 10.99.1.2@10.99.1.1 \
	--path 10.99.2.2@10.99.2.1 --device /dev/nullb1 --access-mode ro
map_ok map-short-migration \
	"sessname=s3 path=fe80::1@fe80::2 device_path=nullb0 access_mode=migration" \
	/dev/ibnbd2 -s s3 -p fe80::1@fe80::2 -d nullb0 -a migration
map_ok map-eq-form-rw "sessname=s4 path=1.2.3.4 device_path=disk/by-id/x access_mode=rw" \
	/dev/ibnbd3 --access-mode=rw --device=disk/by-id/x --path=1.2.3.4 --sessname=s4

# usage errors: exit 2, nothing written
nw=$(wc -l <"$T/written")
usage_case() {	# NAME ARGS...
	local name=$1 rc
	shift
	"$IBNBD" "$@" >/dev/null 2>"$T/err" && rc=0 || rc=$?
	sleep 0.05
	if [ $rc -ne 2 ]; then
		fail "usage-$name" "exit $rc (expected 2): $(cat "$T/err")"
	elif [ "$(wc -l <"$T/written")" != "$nw" ] || [ -s "$CTL/map_device" ]; then
		fail "usage-$name" "something was written"
	elif [ ! -s "$T/err" ]; then
		fail "usage-$name" "no message"
	else
		pass "usage-$name ($(head -1 "$T/err"))"
	fi
}
usage_case unknown-option map --sessname s --path 1.1.1.1 --device d --colour blue
usage_case missing-path map --sessname s --device nullb0
usage_case missing-sessname map --path 1.1.1.1 --device nullb0
usage_case missing-device map --sessname s --path 1.1.1.1
usage_case bad-access-mode map --sessname s --path 1.1.1.1 --device d --access-mode rx
usage_case blank-in-path map --sessname s --path '1.1.1.1 colour=blue' --device d
usage_case bad-path map --sessname s --path '1.1.1.1@' --device d
usage_case nine-paths map --sessname s -p 1.1.1.1 -p 1.1.1.2 -p 1.1.1.3 -p 1.1.1.4 \
	-p 1.1.1.5 -p 1.1.1.6 -p 1.1.1.7 -p 1.1.1.8 -p 1.1.1.9 --device d
usage_case extra-arg map --sessname s --path 1.1.1.1 --device d extra
usage_case unknown-command frobnicate
usage_case unmap-bad-name unmap sda
usage_case unmap-no-name unmap
usage_case list-bad-format list -o yaml

# unmap
"$IBNBD" unmap ibnbd0 2>"$T/err" && [ "$(cat "$CTL/devices/ibnbd0/unmap_device")" = normal ] &&
	pass unmap-normal || fail unmap-normal "$(cat "$T/err"; cat "$CTL/devices/ibnbd0/unmap_device")"
"$IBNBD" unmap /dev/ibnbd1 --force 2>"$T/err" &&
	[ "$(cat "$CTL/devices/ibnbd1/unmap_device")" = force ] &&
	[ ! -s "$CTL/devices/ibnbd0/unmap_device" -o "$(cat "$CTL/devices/ibnbd0/unmap_device")" = normal ] &&
	pass unmap-force || fail unmap-force "$(cat "$T/err"; cat "$CTL/devices/ibnbd1/unmap_device")"
"$IBNBD" unmap ibnbd9 2>"$T/err" && rc=0 || rc=$?
[ $rc = 1 ] && grep -q 'not mapped' "$T/err" && pass unmap-unknown ||
	fail unmap-unknown "exit $rc: $(cat "$T/err")"

# list: an access_mode file where the kernel has one, none elsewhere
echo ro >"$CTL/devices/ibnbd1/access_mode"
printf 'path 10.99.1.1:1234 state=connected reqs=5 rsps=5\npath 10.99.2.1:1234 state=reconnecting reqs=0 rsps=0\n' \
	>"$CTL/devices/ibnbd1/paths"
mkdir "$CTL/devices/ibnbd10"	# a device whose files are gone: nulls
if "$IBNBD" list -o json >"$T/list.json" 2>"$T/err" &&
	python3 -m json.tool "$T/list.json" >/dev/null 2>"$T/jerr"; then
	if msg=$(python3 - "$T/list.json" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
d = {x["name"]: x for x in j["devices"]}
assert [x["name"] for x in j["devices"]] == ["ibnbd0", "ibnbd1", "ibnbd2", "ibnbd3", "ibnbd10"], list(d)
a = d["ibnbd1"]
want = {"name": "ibnbd1", "device": "/dev/ibnbd1", "session": "s2",
        "mapping_path": "/dev/nullb1", "state": "open", "access_mode": "ro",
        "size_bytes": 4096 * 512}
for k, v in want.items():
    assert a[k] == v, (k, a[k], v)
assert len(a["paths"]) == 2, a["paths"]
assert a["paths"][0] == {"addr": "10.99.1.1:1234", "state": "connected", "reqs": 5, "rsps": 5}, a["paths"][0]
assert a["paths"][1]["state"] == "reconnecting"
assert d["ibnbd0"]["access_mode"] is None and d["ibnbd0"]["size_bytes"] == 2048 * 512
e = d["ibnbd10"]
assert e["state"] is None and e["session"] is None and e["size_bytes"] is None and e["paths"] == []
print("5 devices, fields right")
PYEOF
	); then
		pass "list-json ($msg)"
	else
		fail list-json "$msg"
	fi
else
	fail list-json "$(cat "$T/err" "$T/jerr"; head -30 "$T/list.json")"
fi
"$IBNBD" list >"$T/list.txt" 2>"$T/err" && grep -q '^ibnbd1 .* s2 .*/dev/nullb1 .*open .*ro .*2.0 MiB' "$T/list.txt" &&
	grep -q '^  path 10.99.2.1:1234 state=reconnecting' "$T/list.txt" &&
	pass list-normal || fail list-normal "$(cat "$T/err" "$T/list.txt")"
rm -rf "$CTL/devices"/*
"$IBNBD" list -o json 2>"$T/err" | python3 -c 'import json,sys; assert json.load(sys.stdin) == {"devices": []}' &&
	pass list-json-empty || fail list-json-empty "$(cat "$T/err")"

# a write the "kernel" refuses: exit 1 with the errno
kill $FAKE 2>/dev/null
wait $FAKE 2>/dev/null
FAKE=
rm -f "$CTL/map_device"
ln -s /dev/full "$CTL/map_device"
"$IBNBD" map -s s -p 1.1.1.1 -d d >"$T/out" 2>"$T/err" && rc=0 || rc=$?
[ $rc = 1 ] && grep -q 'No space left on device' "$T/err" && grep -q dmesg "$T/err" && [ ! -s "$T/out" ] &&
	pass "map-refused ($(head -1 "$T/err"))" || fail map-refused "exit $rc: $(cat "$T/err")"
rm -f "$CTL/map_device"
"$IBNBD" map -s s -p 1.1.1.1 -d d >/dev/null 2>"$T/err" && rc=0 || rc=$?
[ $rc = 1 ] && grep -q 'is ibnbd-client loaded' "$T/err" &&
	pass map-no-module || fail map-no-module "exit $rc: $(cat "$T/err")"
[ $fails -eq 0 ]
