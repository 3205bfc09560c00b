# systems-paths.sh - E03-paths' systems: every multipath system over 1, 2
# or 4 paths under each of its policies (sourced by systems.sh, in the
# guest). Names are <system><N>_<policy>:
#   ibnbd<N>_{rr,mi,ml}    our kernel client against our kernel server,
#                          ibtrs-client's mp_policy round-robin,
#                          min-inflight, min-latency (session sysfs)
#   ibtrs<N>_{rr,mi,ml}    the fio engine against ibnbd-serverd, --mp_policy
#   nvme<N>_{numa,rr}      nvme-rdma native multipath: one controller per
#                          path (one nvmet port per server address, the
#                          same subsystem), the subsystem's iopolicy
#   rnbd<N>_{rr,mi,ml}     upstream rnbd, one session of N paths, rtrs's
#                          mpath_policy (sysfs)
# Only the system under test is connected during its cells: a cell's
# sys_<name>_pre hook ends the previous system's mapping or controllers and
# sets up its own when they differ (in by-system order once per system and
# run), so idle sessions' heartbeats never land in another system's window.
# Every system runs in its secure default (FRWR or a memory window per read
# buffer, remote invalidation).

# _ep_policy_name rr|mi|ml -> the policy's name in our sysfs, the engine's
# option and rtrs's sysfs (the same three names)
_ep_policy_name() {
	case $1 in
	rr) echo round-robin ;;
	mi) echo min-inflight ;;
	ml) echo min-latency ;;
	*) ex_die "unknown policy '$1'" ;;
	esac
}

# _ep_release KEEP: every E03 system's connections but KEEP's kind
# (ibnbd, nvme, rnbd) ended.
_ep_release() {
	if [ "$1" != ibnbd ] && [ -n "${EX_IBNBD1_DEV:-}" ]; then
		_kclt_unload
		EX_IBNBD_NPATHS=
	fi
	if [ "$1" != nvme ] && [ -n "${EX_NVME_NPATHS:-}" ]; then
		nvme disconnect -n $EX_NQN >/dev/null || ex_die "nvme disconnect failed"
		EX_NVME_DEV= EX_NVME_NPATHS=
	fi
	if [ "$1" != rnbd ] && [ -n "${EX_RNBDP_DEV:-}" ]; then
		echo normal >"/sys/block/$EX_RNBDP_DEV/rnbd/unmap_device" ||
			ex_die "rnbd unmap $EX_RNBDP_DEV failed"
		EX_RNBDP_DEV= EX_RNBDP_NPATHS=
	fi
}

# ---- our kernel client over N paths
# _ibnbd_paths N POLICY: /dev/$EX_IBNBD1_DEV over the first N paths (session
# tb-ibnbdpN), in the secure default mode, with mp_policy POLICY.
_ibnbd_paths() {
	local n=$1 kb=$TB_TOP/build/kmod ctl=/sys/class/ibnbd-client/ctl
	local before d t i paths=
	_ep_release ibnbd
	[ "$TB_PATHS" -ge "$n" ] || ex_die "ibnbd over $n paths: the testbed has $TB_PATHS"
	_ksrv_mode static
	if [ "${EX_IBNBD_NPATHS:-}" != "$n" ] || [ -z "${EX_IBNBD1_DEV:-}" ]; then
		_kclt_unload
		insmod "$kb/ibtrs-client.ko" || ex_die "insmod ibtrs-client failed"
		insmod "$kb/ibnbd-client.ko" port=$EX_KSRV_PORT || ex_die "insmod ibnbd-client failed"
		for ((i = 1; i <= n; i++)); do
			paths+="path=$(tb_nth $i "$TB_CLT_ADDRS")@$(tb_nth $i "$TB_SRV_ADDRS") "
		done
		before=$(ls "$ctl/devices" 2>/dev/null)
		echo "sessname=tb-ibnbdp$n ${paths}device_path=nullb1 access_mode=rw" \
			>"$ctl/map_device" || ex_die "ibnbd map over $n paths failed"
		for d in $(ls "$ctl/devices"); do
			echo "$before" | grep -qx "$d" || EX_IBNBD1_DEV=$d
		done
		for ((t = 0; t < 50; t++)); do [ -b "/dev/${EX_IBNBD1_DEV:-none}" ] && break; sleep 0.1; done
		[ -b "/dev/${EX_IBNBD1_DEV:-none}" ] || ex_die "ibnbd device over $n paths did not appear"
		EX_IBNBD_NPATHS=$n
	fi
	echo "$2" >"/sys/kernel/ibtrs-client/tb-ibnbdp$n/mp_policy" ||
		ex_die "ibnbd mp_policy $2 refused"
	[ "$(cat "/sys/kernel/ibtrs-client/tb-ibnbdp$n/mp_policy")" = "$2" ] ||
		ex_die "ibnbd mp_policy is $(cat "/sys/kernel/ibtrs-client/tb-ibnbdp$n/mp_policy"), not $2"
}

# ---- nvme-rdma native multipath over N paths
# _nvme_ports: an nvmet port per server address (ports 1..TB_PATHS), each
# exporting the subsystem (sys_nvme_rdma_up made port 1 and connected).
_nvme_ports() {
	local cfs=/sys/kernel/config/nvmet i port
	for ((i = 2; i <= TB_PATHS; i++)); do
		port=$cfs/ports/$i
		[ -d "$port" ] && continue
		mkdir -p "$port"
		echo rdma >"$port/addr_trtype"
		echo ipv4 >"$port/addr_adrfam"
		tb_nth $i "$TB_SRV_ADDRS" >"$port/addr_traddr"
		echo $EX_NVME_PORT >"$port/addr_trsvcid"
		ln -s "$cfs/subsystems/$EX_NQN" "$port/subsystems/$EX_NQN"
	done
}
# _nvme_subsys: the host's subsystem directory of EX_NQN.
_nvme_subsys() {
	local s
	for s in /sys/class/nvme-subsystem/*; do
		[ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$EX_NQN" ] && { echo "$s"; return 0; }
	done
	return 1
}
# _nvme_paths N IOPOLICY: the host connected over the first N paths (one
# controller each, one multipath head), the subsystem's iopolicy set.
_nvme_paths() {
	local n=$1 s i t live
	_ep_release nvme
	[ "$TB_PATHS" -ge "$n" ] || ex_die "nvme over $n paths: the testbed has $TB_PATHS"
	if [ "${EX_NVME_NPATHS:-}" != "$n" ]; then
		nvme disconnect -n $EX_NQN >/dev/null 2>&1
		EX_NVME_DEV=
		_nvme_ports
		_nvme_connect
		for ((i = 2; i <= n; i++)); do
			nvme connect -t rdma -a "$(tb_nth $i "$TB_SRV_ADDRS")" -s $EX_NVME_PORT -n $EX_NQN \
				>/dev/null || ex_die "nvme connect over path $i failed"
		done
		for ((t = 0; t < 100; t++)); do
			s=$(_nvme_subsys) || s=
			live=0
			[ -n "$s" ] && live=$(cat "$s"/nvme[0-9]*/state 2>/dev/null | grep -c '^live$')
			[ "$live" = "$n" ] && break
			sleep 0.1
		done
		[ "$live" = "$n" ] || ex_die "nvme: $live of $n controllers live"
		EX_NVME_NPATHS=$n
	fi
	s=$(_nvme_subsys) || ex_die "nvme: no subsystem $EX_NQN on the host"
	echo "$2" >"$s/iopolicy" || ex_die "nvme iopolicy $2 refused"
	[ "$(cat "$s/iopolicy")" = "$2" ] || ex_die "nvme iopolicy is $(cat "$s/iopolicy"), not $2"
}

# ---- upstream rnbd over N paths
# _rnbd_paths N POLICY: /dev/$EX_RNBDP_DEV over the first N paths (session
# tb-rnbdpN, access_mode migration: E01's rnbd devices may hold nullb0),
# rtrs-client's mpath_policy POLICY.
_rnbd_paths() {
	local n=$1 f
	_ep_release rnbd
	[ "$TB_PATHS" -ge "$n" ] || ex_die "rnbd over $n paths: the testbed has $TB_PATHS"
	if [ "${EX_RNBDP_NPATHS:-}" != "$n" ]; then
		if [ -n "${EX_RNBDP_DEV:-}" ]; then
			echo normal >"/sys/block/$EX_RNBDP_DEV/rnbd/unmap_device" ||
				ex_die "rnbd unmap $EX_RNBDP_DEV failed"
		fi
		_rnbd_map "tb-rnbdp$n" "$n" migration
		EX_RNBDP_DEV=$EX_RNBD_DEV EX_RNBDP_NPATHS=$n
	fi
	f=/sys/class/rtrs-client/tb-rnbdp$n/mpath_policy
	echo "$2" >"$f" || ex_die "rnbd mpath_policy $2 refused"
	grep -q "^$2 " "$f" || ex_die "rnbd mpath_policy is $(cat "$f"), not $2"
}

# The systems. _up: what every cell needs and no connection (the pre hook
# connects); _fio and _iosrc: the connected device, after _pre.
for _n in 1 2 4; do
	for _p in rr mi ml; do
		_pn=$(_ep_policy_name $_p)
		eval "sys_ibnbd${_n}_${_p}_up() { _ksrv_load; }
sys_ibnbd${_n}_${_p}_pre() { _ibnbd_paths $_n $_pn; }
sys_ibnbd${_n}_${_p}_fio() { sys_ibnbd1_fio; }
sys_ibnbd${_n}_${_p}_iosrc() { sys_ibnbd1_iosrc; }
sys_ibnbd${_n}_${_p}_desc() { echo 'ibnbd $_n $_pn frwr remote'; }
sys_ibtrs${_n}_${_p}_up() { _ibtrs_srv_up; }
sys_ibtrs${_n}_${_p}_pre() { _ep_release none; [ \"\$TB_PATHS\" -ge $_n ] || ex_die 'ibtrs over $_n paths: the testbed has '\$TB_PATHS; }
sys_ibtrs${_n}_${_p}_fio() { EX_IBTRS_POLICY=$_pn _ibtrs_fio $_n; }
sys_ibtrs${_n}_${_p}_iosrc() { _ibtrs_iosrc \"\$1\"; }
sys_ibtrs${_n}_${_p}_desc() { echo 'ibtrs-fio $_n $_pn mw remote'; }
sys_rnbd${_n}_${_p}_up() { sys_nullblk_up; _rnbd_load; }
sys_rnbd${_n}_${_p}_pre() { _rnbd_paths $_n $_pn; }
sys_rnbd${_n}_${_p}_fio() { echo \"--ioengine=libaio --direct=1 --filename=/dev/\$EX_RNBDP_DEV\"; }
sys_rnbd${_n}_${_p}_iosrc() { echo \"blk:\$EX_RNBDP_DEV\"; }
sys_rnbd${_n}_${_p}_desc() { echo 'rnbd $_n $_pn frwr always'; }"
	done
	for _p in numa rr; do
		_pn=$_p
		[ $_p = rr ] && _pn=round-robin
		eval "sys_nvme${_n}_${_p}_up() { sys_nvme_rdma_up; EX_NVME_NPATHS=\${EX_NVME_NPATHS:-1}; }
sys_nvme${_n}_${_p}_pre() { _nvme_paths $_n $_pn; }
sys_nvme${_n}_${_p}_fio() { sys_nvme_rdma_fio; }
sys_nvme${_n}_${_p}_iosrc() { sys_nvme_rdma_iosrc; }
sys_nvme${_n}_${_p}_desc() { echo 'nvme-rdma $_n $_pn frwr remote'; }"
	done
done
unset _n _p _pn
