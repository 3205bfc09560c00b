#!/bin/bash
# 031-kclient-map-unmap: the ibnbd tool (kmod/cli) driving the kernel
# client against the kernel server (same guest, null_blk):
#  1. bad maps refused with EINVAL, through the tool (addresses the kernel
#     cannot parse; the tool names the errno and shows the kernel's line)
#     and by raw writes to map_device (unknown field, no sessname); no
#     device is left;
#  2. map/unmap x100 over 2 paths (a new session each time: connect, open,
#     close): each map prints /dev/ibnbdN, the device has nullb0's size and
#     one 4k O_DIRECT read of it succeeds;
#  3. a second rw mapping of a device mapped rw is refused with the
#     server's reason (shown by the tool from the kernel log), a ro mapping
#     of it is admitted and reads;
#  4. ibnbd list -o json parses and lists both devices with their session,
#     device path and state; unmap through the tool; rmmod; clean log.
# TIMEOUT=120
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
kclt_cli_need
setup_nullb
kmod_load
kclt_load
ROUNDS=${ROUNDS:-100}
PA=$(kclt_paths_args 2)
DEV=${DEV:-nullb0}

# 1. bad maps
kclt_cli_map_fails EINVAL --sessname bad --path 10.0.0.300 --device nullb0
grep -q "kernel: ibnbd_client: map_device: bad path '10.0.0.300'" "$LOGDIR/cli-err.txt" ||
	die "the tool did not show the kernel's reason: $(cat "$LOGDIR/cli-err.txt")"
kclt_cli_map_fails EINVAL --sessname bad --path nohost@10.99.1.1 --device nullb0
kclt_map_fails "sessname=bad$(kclt_paths 1) device_path=nullb0 colour=blue"
kclt_map_fails "$(kclt_paths 1) device_path=nullb0"
"$IBNBD" map --sessname bad $PA --device nullb0 --access-mode rx >/dev/null 2>&1
[ $? = 2 ] || die "bad access mode: not a usage error"
[ -z "$(ls $KCLT_CTL/devices)" ] || die "a refused map left a device"
log "bad maps refused (EINVAL from the kernel, usage error from the tool)"

# 2. map/unmap x ROUNDS
size=$(blockdev --getsize64 /dev/nullb0)
t0=$(date +%s%N)
for i in $(seq 1 "$ROUNDS"); do
	# shellcheck disable=SC2086
	kclt_cli_map --sessname mu$i $PA --device "$DEV"
	read -r sectors <"/sys/block/$KCLT_DEV/size"
	[ $((sectors * 512)) = "$size" ] ||
		die "round $i: /dev/$KCLT_DEV size differs from nullb0's"
	dd if="/dev/$KCLT_DEV" of=/dev/null bs=4k count=1 skip=$((i * 7)) iflag=direct \
		status=none || die "round $i: 4k O_DIRECT read of /dev/$KCLT_DEV failed"
	"$IBNBD" unmap "/dev/$KCLT_DEV" || die "round $i: ibnbd unmap $KCLT_DEV failed"
	[ -e "$KCLT_CTL/devices/$KCLT_DEV" ] && die "round $i: $KCLT_DEV still in sysfs"
	# ~13 kernel lines a round (~1.5 KiB): check the log well before the
	# 128 KiB ring buffer drops them
	[ $((i % 20)) = 0 ] && kmod_log_check_now
	[ $((i % 25)) = 0 ] && log "round $i: mapped, read, unmapped /dev/$KCLT_DEV"
done
ms=$((($(date +%s%N) - t0) / 1000000))
log "$ROUNDS map/read/unmap rounds in $ms ms ($((ms / ROUNDS)) ms each)"

# 3. a second writer refused with the server's reason, a reader admitted
# shellcheck disable=SC2086
kclt_cli_map --sessname w1 $PA --device nullb0
d1=$KCLT_DEV
# shellcheck disable=SC2086
kclt_cli_map_fails EBUSY --sessname w2 $PA --device nullb0 --access-mode rw
cat "$LOGDIR/cli-err.txt"
grep -q 'kernel: ibnbd_client: server refused to open nullb0 (rw): device already opened for writing' "$LOGDIR/cli-err.txt" ||
	die "no server reason shown for the second writer"
[ "$(ls $KCLT_CTL/devices)" = "$d1" ] || die "the refused map left a device"
# shellcheck disable=SC2086
kclt_cli_map --sessname r1 $PA --device nullb0 --access-mode ro
d2=$KCLT_DEV
[ "$(blockdev --getro "/dev/$d2")" = 1 ] || die "the ro mapping is writable"
dd if="/dev/$d2" of=/dev/null bs=4k count=1 iflag=direct status=none ||
	die "read of the ro mapping failed"

# 4. list -o json
"$IBNBD" list -o json >"$LOGDIR/list.json" || die "ibnbd list -o json failed"
"$IBNBD" list | tee "$LOGDIR/list.txt"
python3 - "$LOGDIR/list.json" "$d1" "$d2" "$size" <<'PYEOF' || die "list -o json: wrong"
import json, sys
j = json.load(open(sys.argv[1]))
d = {x["name"]: x for x in j["devices"]}
assert sorted(d) == sorted(sys.argv[2:4]), d.keys()
for name, sess in ((sys.argv[2], "w1"), (sys.argv[3], "r1")):
    x = d[name]
    assert x["device"] == "/dev/" + name and x["session"] == sess, x
    assert x["mapping_path"] == "nullb0" and x["state"] == "open", x
    assert x["size_bytes"] == int(sys.argv[4]), x
    assert len(x["paths"]) == 2 and all(p["state"] == "connected" for p in x["paths"]), x
print("list -o json: 2 devices, fields right")
PYEOF
"$IBNBD" unmap "$d2" || die "ibnbd unmap $d2"
"$IBNBD" unmap "$d1" --force || die "ibnbd unmap $d1 --force"
[ -z "$(ls $KCLT_CTL/devices)" ] || die "devices left after unmap"
kclt_unload
kmod_unload
kmod_log_check 6
log "PASS"
