#!/bin/bash
# 026-kclient-percpu: one connection per CPU per path. nullb0 mapped over 2
# paths on a guest with N >= 2 CPUs: ibtrs-client opens N connections per
# path (the server's sysfs shows cons=N for both paths, the device's paths
# file cons=N), ibnbd-client has N hardware queues; a verified randrw fio
# job with one process pinned on each CPU (cpus_allowed_policy=split), each
# on its own 4 MiB, makes every connection of every path carry requests
# (con_reqs of each path: cid 0..N-1 each > 50), and verifies; unmap,
# rmmod, clean log.
# TIMEOUT=120
. "$TB_TOP/kmod/tests/vm/klib.sh"
kmod_need
kclt_need
need_paths 2
setup_nullb
N=$(nproc)
[ "$N" -ge 2 ] || skip "guest has $N CPU (need 2)"
kmod_load
kclt_load

c1=$(tb_nth 1 "$TB_CLT_ADDRS") s1=$(tb_nth 1 "$TB_SRV_ADDRS")
c2=$(tb_nth 2 "$TB_CLT_ADDRS") s2=$(tb_nth 2 "$TB_SRV_ADDRS")
kclt_map "sessname=kpc$(kclt_paths 2) device_path=nullb0"
S=/sys/kernel/ibtrs-client/kpc

hwq=$(ls -d /sys/block/$KCLT_DEV/mq/*/ | wc -l)
[ "$hwq" = "$N" ] || die "$hwq hardware queues, want $N"
log "$KCLT_DEV: $hwq hardware queues"
n=$(grep -c "cons=$N\$" "$KCLT_CTL/devices/$KCLT_DEV/paths")
[ "$n" = 2 ] || die "client paths without cons=$N: $(cat "$KCLT_CTL/devices/$KCLT_DEV/paths")"
n=$(grep -c "cons=$N " /sys/kernel/ibtrs-server/sessions)
[ "$n" = 2 ] || die "server paths without cons=$N: $(cat /sys/kernel/ibtrs-server/sessions)"

kfio pcpu --rw=randrw --bsrange=4k-16k --bs_unaligned=0 --iodepth=8 \
	--numjobs="$N" --cpus_allowed="0-$((N - 1))" \
	--cpus_allowed_policy=split --size=4m --offset_increment=4m \
	--verify=crc32c \
	--verify_fatal=1 --group_reporting

for p in "$S/paths/$c1@$s1" "$S/paths/$c2@$s2"; do
	log "$(basename "$p") con_reqs: $(tr '\n' ' ' <"$p/con_reqs")"
	[ "$(wc -l <"$p/con_reqs")" = "$N" ] || die "$p: not $N connections"
	while read -r cid reqs; do
		[ "$reqs" -gt 50 ] ||
			die "$(basename "$p") connection $cid carried $reqs requests"
	done <"$p/con_reqs"
done
grep -q 'proto_errors=0 ' "$KCLT_CTL/devices/$KCLT_DEV/paths" ||
	die "protocol errors: $(cat "$KCLT_CTL/devices/$KCLT_DEV/paths")"
kclt_finish
log "PASS"
