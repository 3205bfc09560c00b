#!/bin/bash
# 034-kclient-queue-props: /dev/ibnbdN takes its properties from the
# server's device. A null_blk made through configfs (memory backed,
# 4096-byte blocks, discard, a 64 MiB volatile write cache; 6.1's null_blk
# has no rotational attribute, so the queue's rotational file is set to 1
# on the server device) is exported by the kernel server and mapped:
#  1. logical/physical block size, rotational, discard_max_bytes (the
#     server's, capped at 4 GiB - one block: bi_size is 32 bits),
#     discard_granularity, write_zeroes_max_bytes (same cap), write_cache
#     and the size equal the server device's;
#  2. blkdiscard of 4 MiB written with random data through /dev/ibnbdN: the
#     range reads zeroes from the server device; blkdiscard -z (BLKZEROOUT)
#     of another such range: zeroes too;
#  3. a ro mapping: blockdev --getro = 1, an O_DIRECT write fails, a read
#     works;
#  4. fio with --fsync=1 (an fsync after every 4k write) ends without an
#     error and verifies, and the server counts FLUSHes (its "closed" line);
#  5. unmap, rmmod, clean kernel log.
# TIMEOUT=120
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 1
command -v blkdiscard >/dev/null || skip "no blkdiscard"
nullb_cfs kqp memory_backed=1 blocksize=4096 discard=1 cache_size=64 size=256
SDEV=$NULLB_DEV
SQ=/sys/block/$(basename "$SDEV")/queue
echo 1 >"$SQ/rotational" || die "cannot make $SDEV rotational"
kmod_load
kclt_load
kclt_map "sessname=kqp$(kclt_paths 1) device_path=$(basename "$SDEV")"
D=$KCLT_DEV
CQ=/sys/block/$D/queue

# 1. properties
cap() {	# BYTES LBS: the server's cap of DISCARD/WRITE_ZEROES sizes
	local b=$1 m=$((0xffffffff & ~($2 - 1)))
	[ "$b" -gt "$m" ] && b=$m
	echo $((b & ~($2 - 1)))
}
lbs=$(cat "$SQ/logical_block_size")
[ "$lbs" = 4096 ] || die "server device's logical block size is $lbs, not 4096"
bad=
chk() {	# ATTR EXPECTED
	local got
	got=$(cat "$CQ/$1")
	log "$1: $D=$got server=$(cat "$SQ/$1") expected=$2"
	[ "$got" = "$2" ] || bad="$bad $1"
}
chk logical_block_size "$(cat "$SQ/logical_block_size")"
chk physical_block_size "$(cat "$SQ/physical_block_size")"
chk rotational "$(cat "$SQ/rotational")"
chk discard_max_bytes "$(cap "$(cat "$SQ/discard_max_bytes")" "$lbs")"
chk discard_granularity "$(cat "$SQ/discard_granularity")"
chk write_zeroes_max_bytes "$(cap "$(cat "$SQ/write_zeroes_max_bytes")" "$lbs")"
chk write_cache "$(cat "$SQ/write_cache")"
[ "$(cat "$SQ/rotational")" = 1 ] || die "server device not rotational"
[ "$(cat "$SQ/write_cache")" = "write back" ] || die "server device has no write cache"
[ "$(cat "$SQ/discard_max_bytes")" != 0 ] || die "server device has no discard"
ssz=$(blockdev --getsize64 "$SDEV")
csz=$(blockdev --getsize64 "/dev/$D")
log "size: $D=$csz server=$ssz"
[ "$csz" = "$ssz" ] || bad="$bad size"
[ "$(blockdev --getro "/dev/$D")" = 0 ] || bad="$bad ro(rw mapping)"
[ -z "$bad" ] || die "properties not taken from the server device:$bad"

# 2. discard and write zeroes: the range reads zeroes on the server device
fill_check() {	# OFF_MIB: 4 MiB of random data through $D, seen on the server
	dd if=/dev/urandom of="/dev/$D" bs=1M count=4 seek="$1" oflag=direct \
		status=none || die "write at $1 MiB failed"
	[ "$(dd if="$SDEV" bs=1M count=4 skip="$1" iflag=direct status=none |
		tr -d '\0' | head -c 1 | wc -c)" = 1 ] ||
		die "random data at $1 MiB not on the server device"
}
zero_check() {	# OFF_MIB WHAT
	dd if="$SDEV" bs=1M count=4 skip="$1" iflag=direct status=none |
		cmp -n $((4 << 20)) - /dev/zero ||
		die "$2 at $1 MiB: the server device does not read zeroes"
	log "$2 at $1 MiB: zeroes on the server device"
}
fill_check 16
blkdiscard -o $((16 << 20)) -l $((4 << 20)) "/dev/$D" || die "blkdiscard failed"
zero_check 16 blkdiscard
fill_check 32
blkdiscard -z -o $((32 << 20)) -l $((4 << 20)) "/dev/$D" || die "blkdiscard -z failed"
zero_check 32 "blkdiscard -z"

# 3. a ro mapping
kclt_map "sessname=kqpro$(kclt_paths 1) device_path=$(basename "$SDEV") access_mode=ro"
R=$KCLT_DEV
[ "$(blockdev --getro "/dev/$R")" = 1 ] || die "ro mapping: blockdev --getro is not 1"
dd if=/dev/zero of="/dev/$R" bs=4k count=1 oflag=direct status=none 2>"$LOGDIR/ro-write.txt" &&
	die "a write to the ro mapping succeeded"
log "ro mapping: write refused: $(cat "$LOGDIR/ro-write.txt")"
dd if="/dev/$R" bs=1M count=4 skip=16 iflag=direct status=none |
	cmp -n $((4 << 20)) - /dev/zero || die "ro mapping: read differs"
kclt_unmap "$R"
KCLT_DEV=$D

# 4. FLUSH: fio with an fsync after every write
if ! (kfio fsync --rw=write --bs=4k --size=4m --offset=64m --fsync=1 \
	--verify=crc32c --do_verify=1 --verify_fatal=1); then
	kmsgs | grep -E 'rejected IO|I/O error' | head -4
	die "fio --fsync=1 failed: FLUSH through /dev/$D does not work"
fi
kclt_finish 10
line=$(kmsgs | grep "ibnbd_server: .*closed .*$(basename "$SDEV")" | grep 'flushes=' | tail -1)
log "server: $line"
echo "$line" | grep -q 'flushes=[1-9]' || die "the server counted no FLUSH"
echo "$line" | grep -q 'discards=[1-9]' || die "the server counted no DISCARD"
log "PASS"
