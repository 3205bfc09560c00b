# systems.sh - set up the storage systems under test inside the testbed guest
# (source it). Every system serves the same null_blk device, /dev/nullb0, so
# they differ only in the path from fio to it. A system is a name plus:
#   sys_<name>_up     set it up (once per boot); prints nothing on success
#   sys_<name>_fio    prints the fio arguments that drive it
# Names use '_' in functions and '-' in results (nvme_rdma -> nvme-rdma).

EX_NQN=nqn.2026-11.io.ibtrs:tb
EX_NVME_PORT=4420

ex_die() { echo "experiment: $*" >&2; exit 1; }

sys_nullblk_up() {
	[ -b /dev/nullb0 ] && return 0
	# No backing memory, completions inline: the cheapest possible disk.
	# nullb1, its twin, is for our kernel server, which holds its rw
	# device exclusively (as the userspace daemon does nullb0 per cell).
	modprobe null_blk nr_devices=2 queue_mode=2 irqmode=0 gb=16 bs=512 ||
		ex_die "cannot load null_blk"
	[ -b /dev/nullb0 ] || ex_die "/dev/nullb0 missing"
}
sys_nullblk_fio() { echo "--ioengine=libaio --direct=1 --filename=/dev/nullb0"; }
sys_nullblk_iosrc() { echo blk:nullb0; }
sys_nullblk_desc() { echo "nullblk - - - -"; }

# nvmet-rdma target (configfs) exporting /dev/nullb0 on path 1, and the
# kernel nvme-rdma host connected to it.
sys_nvme_rdma_up() {
	local cfs=/sys/kernel/config/nvmet addr sub port
	[ -n "${EX_NVME_DEV:-}" ] && return 0
	sys_nullblk_up
	modprobe nvmet-rdma && modprobe nvme-rdma || ex_die "cannot load nvme rdma modules"
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
	addr=$(tb_nth 1 "$TB_SRV_ADDRS")
	sub=$cfs/subsystems/$EX_NQN
	mkdir -p "$sub/namespaces/1"
	echo 1 >"$sub/attr_allow_any_host"
	echo /dev/nullb0 >"$sub/namespaces/1/device_path"
	echo 1 >"$sub/namespaces/1/enable"
	port=$cfs/ports/1
	mkdir -p "$port"
	echo rdma >"$port/addr_trtype"
	echo ipv4 >"$port/addr_adrfam"
	echo "$addr" >"$port/addr_traddr"
	echo $EX_NVME_PORT >"$port/addr_trsvcid"
	ln -s "$sub" "$port/subsystems/$EX_NQN"
	_nvme_connect
}
_nvme_connect() {	# the host side: connect, find the namespace (EX_NVME_DEV)
	local dev t
	EX_NVME_DEV=
	nvme connect -t rdma -a "$(tb_nth 1 "$TB_SRV_ADDRS")" -s $EX_NVME_PORT -n $EX_NQN >/dev/null ||
		ex_die "nvme connect failed"
	for ((t = 0; t < 100; t++)); do
		dev=$(grep -l "$EX_NQN" /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -n1)
		if [ -n "$dev" ]; then
			dev=$(basename "$(dirname "$dev")")
			# Native multipath: the disk is nvmeXnY in /sys/block.
			EX_NVME_DEV=$(ls /sys/block | grep -m1 "^${dev%%[0-9]*}[0-9]*n1$" || true)
			[ -n "$EX_NVME_DEV" ] && [ -b "/dev/$EX_NVME_DEV" ] && break
		fi
		sleep 0.1
	done
	[ -b "/dev/${EX_NVME_DEV:-none}" ] || ex_die "nvme namespace did not appear"
}
# _nvme_register_always Y|N: the host's nvme_rdma module parameter (read
# only once loaded: the host disconnects, the module is loaded again with
# the value, the host reconnects). Y (the default) registers every IO's
# pages with FRWR and the target invalidates them remotely; N sends a
# single-segment IO with the PD's global rkey (IB_PD_UNSAFE_GLOBAL_RKEY),
# never invalidated.
_nvme_register_always() {
	local f=/sys/module/nvme_rdma/parameters/register_always
	[ "$(cat $f 2>/dev/null)" = "$1" ] && return 0
	nvme disconnect -n $EX_NQN >/dev/null || ex_die "nvme disconnect failed"
	modprobe -r nvme_rdma || ex_die "cannot unload nvme_rdma"
	modprobe nvme_rdma register_always="$1" || ex_die "cannot load nvme_rdma register_always=$1"
	[ "$(cat $f)" = "$1" ] || ex_die "nvme_rdma register_always is $(cat $f), not $1"
	_nvme_connect
}
sys_nvme_rdma_fio() { echo "--ioengine=libaio --direct=1 --filename=/dev/$EX_NVME_DEV"; }
# The multipath head (nvmeXnY) of Linux 6.1 keeps no IO statistics; its
# path device (nvmeXcYnZ, one per controller) does.
sys_nvme_rdma_iosrc() {
	local d out=""
	for d in $(ls /sys/block | grep -E "^${EX_NVME_DEV%n*}c[0-9]+n${EX_NVME_DEV##*n}$"); do
		out+="blk:$d "
	done
	echo "${out:-blk:$EX_NVME_DEV}"
}
# nvme-rdma registers every IO's pages with FRWR and the target invalidates
# them remotely (SEND_WITH_INVALIDATE).
sys_nvme_rdma_desc() { echo "nvme-rdma 1 - frwr remote"; }

# E02: nvme-rdma with register_always=Y (its default: secure) and =N
# (unsafe), switched before each cell (experiments in by-system order
# switch once per system and run).
sys_nvme_reg_up() { sys_nvme_rdma_up; }
sys_nvme_reg_pre() { _nvme_register_always Y; }
sys_nvme_reg_fio() { sys_nvme_rdma_fio; }
sys_nvme_reg_iosrc() { sys_nvme_rdma_iosrc; }
sys_nvme_reg_desc() { echo "nvme-rdma 1 - frwr remote"; }
sys_nvme_noreg_up() { sys_nvme_rdma_up; }
sys_nvme_noreg_pre() { _nvme_register_always N; }
sys_nvme_noreg_fio() { sys_nvme_rdma_fio; }
sys_nvme_noreg_iosrc() { sys_nvme_rdma_iosrc; }
sys_nvme_noreg_desc() { echo "nvme-rdma 1 - global none"; }

# Upstream RNBD/RTRS built by experiments/baselines/rnbd-build.sh (the path
# is passed in EX_RNBD_DIR). rnbd1: one path; rnbd2: two paths, its own
# session, access_mode=migration so it may share the device.
_rnbd_loaded=0
_rnbd_load() {
	[ $_rnbd_loaded = 1 ] && return 0
	[ -d "${EX_RNBD_DIR:-}" ] || ex_die "EX_RNBD_DIR not set (rnbd baseline not built)"
	modprobe rdma_cm
	local m
	for m in rtrs/rtrs-core rtrs/rtrs-server rtrs/rtrs-client rnbd/rnbd-server rnbd/rnbd-client; do
		insmod "$EX_RNBD_DIR/$m.ko" 2>/dev/null || ex_die "insmod $m failed"
	done
	_rnbd_loaded=1
}
# _rnbd_always_invalidate Y|N [SESS]: rtrs-server's module parameter (read
# only): Y (its default) invalidates a chunk's MR after each IO and the
# client gets a new key with the answer; N leaves the chunks' keys valid for
# the session. SESS's device (EX_RNBD_DEV) is unmapped, the server modules
# loaded again with the value, and the device mapped again.
_rnbd_always_invalidate() {
	local f=/sys/module/rtrs_server/parameters/always_invalidate sess=${2:-tb-rnbd}
	[ "$(cat $f 2>/dev/null)" = "$1" ] && return 0
	if [ -n "${EX_RNBD_DEV:-}" ]; then
		echo normal >"/sys/block/$EX_RNBD_DEV/rnbd/unmap_device" ||
			ex_die "rnbd unmap $EX_RNBD_DEV failed"
		EX_RNBD_DEV=
	fi
	rmmod rnbd_server && rmmod rtrs_server || ex_die "cannot unload rnbd/rtrs server"
	insmod "$EX_RNBD_DIR/rtrs/rtrs-server.ko" always_invalidate="$1" &&
		insmod "$EX_RNBD_DIR/rnbd/rnbd-server.ko" || ex_die "cannot load rtrs-server always_invalidate=$1"
	[ "$(cat $f)" = "$1" ] || ex_die "rtrs-server always_invalidate is $(cat $f), not $1"
	_rnbd_map "$sess" 1 rw
}
_rnbd_map() {	# _rnbd_map SESSNAME NPATHS MODE -> sets EX_RNBD_DEV
	local sess=$1 n=$2 mode=$3 paths="" i before t
	sys_nullblk_up
	_rnbd_load
	for ((i = 1; i <= n; i++)); do paths+="path=ip:$(tb_nth $i "$TB_SRV_ADDRS") "; done
	before=$(ls /sys/block | grep -c '^rnbd' || true)
	echo "sessname=$sess ${paths}device_path=/dev/nullb0 access_mode=$mode" \
		>/sys/class/rnbd-client/ctl/map_device || ex_die "rnbd map $sess failed"
	for ((t = 0; t < 100; t++)); do
		EX_RNBD_DEV=$(ls -t /sys/block | grep -m1 '^rnbd' || true)
		[ "$(ls /sys/block | grep -c '^rnbd')" -gt "$before" ] && [ -b "/dev/$EX_RNBD_DEV" ] && return 0
		sleep 0.1
	done
	ex_die "rnbd device for $sess did not appear"
}
sys_rnbd1_up() { _rnbd_map tb-rnbd1 1 rw; EX_RNBD1_DEV=$EX_RNBD_DEV; }
sys_rnbd1_fio() { echo "--ioengine=libaio --direct=1 --filename=/dev/$EX_RNBD1_DEV"; }
sys_rnbd1_iosrc() { echo "blk:$EX_RNBD1_DEV"; }
# rtrs-client: FRWR per IO, always invalidated; min-inflight is its default.
sys_rnbd1_desc() { echo "rnbd 1 min-inflight frwr always"; }
sys_rnbd2_up() {
	[ "$TB_PATHS" -ge 2 ] || ex_die "rnbd2 needs 2 paths"
	_rnbd_map tb-rnbd2 2 migration; EX_RNBD2_DEV=$EX_RNBD_DEV
}
sys_rnbd2_fio() { echo "--ioengine=libaio --direct=1 --filename=/dev/$EX_RNBD2_DEV"; }
sys_rnbd2_iosrc() { echo "blk:$EX_RNBD2_DEV"; }
# Not changed by this run: rtrs-client's default (guest-info.txt records
# the session's mpath_policy as read from sysfs).
sys_rnbd2_desc() { echo "rnbd 2 min-inflight frwr always"; }

# E02: rnbd over 1 path with rtrs-server's always_invalidate=Y (default:
# secure) and =N (unsafe), switched before each cell. The client always
# registers its read buffers per IO (FRWR) and they are invalidated by the
# answer; the parameter is the server's chunk exposure.
sys_rnbd_inv_up() { _rnbd_load; [ -n "${EX_RNBD_DEV:-}" ] || _rnbd_map tb-rnbd 1 rw; }
sys_rnbd_inv_pre() { _rnbd_always_invalidate Y; }
sys_rnbd_inv_fio() { echo "--ioengine=libaio --direct=1 --filename=/dev/$EX_RNBD_DEV"; }
sys_rnbd_inv_iosrc() { echo "blk:$EX_RNBD_DEV"; }
sys_rnbd_inv_desc() { echo "rnbd 1 - frwr remote+rekey"; }
sys_rnbd_noinv_up() { sys_rnbd_inv_up; }
sys_rnbd_noinv_pre() { _rnbd_always_invalidate N; }
sys_rnbd_noinv_fio() { sys_rnbd_inv_fio; }
sys_rnbd_noinv_iosrc() { sys_rnbd_inv_iosrc; }
sys_rnbd_noinv_desc() { echo "rnbd 1 - frwr remote"; }

# The ibtrs fio engine (fio-engine/build/ibtrs.so) against ibnbd-serverd
# (server/build/ibnbd-serverd) serving /dev/nullb0 on every path address.
# ibtrs1: one path; ibtrs2: two paths. The policy, registration and
# invalidation are passed explicitly (EX_IBTRS_POLICY/_MR/_INVAL; defaults:
# min-inflight as rnbd, and the library's secure defaults: a memory window
# per read buffer, remote invalidation).
EX_IBTRS_PORT=12345	# not 1234: upstream rtrs-server listens there in the same guest
_ibtrs_srv_pid=
# _ibtrs_daemon PORT LOG [ARGS...]: ibnbd-serverd on every server address;
# its pid in $_ibtrs_daemon_pid.
_ibtrs_daemon() {
	local port=$1 log=$2 srvd=$TB_TOP/server/build/ibnbd-serverd a args=() t
	shift 2
	[ -x "$srvd" ] || ex_die "$srvd not built (run make)"
	[ -e "$TB_TOP/fio-engine/build/ibtrs.so" ] || ex_die "fio engine not built (run make)"
	sys_nullblk_up
	for a in $TB_SRV_ADDRS; do args+=(--addr "$a"); done
	"$srvd" "${args[@]}" --port "$port" "$@" >"$log" 2>&1 &
	_ibtrs_daemon_pid=$!
	for ((t = 0; t < 100; t++)); do
		grep -q 'listening on' "$log" && return 0
		kill -0 $_ibtrs_daemon_pid 2>/dev/null || break
		sleep 0.1
	done
	ex_die "ibnbd-serverd did not start: $(tail -3 "$log")"
}
_ibtrs_srv_up() {
	[ -n "$_ibtrs_srv_pid" ] && return 0
	_ibtrs_daemon $EX_IBTRS_PORT "$EX_RAW/ibnbd-serverd.log"
	_ibtrs_srv_pid=$_ibtrs_daemon_pid
}
# A second daemon with chunk_mode rekey (a key per chunk, replaced after
# every IO), for E02's ibtrs1r_ systems.
EX_IBTRS_REKEY_PORT=12348
_ibtrs_rekey_srv_pid=
_ibtrs_rekey_srv_up() {
	[ -n "$_ibtrs_rekey_srv_pid" ] && return 0
	_ibtrs_daemon $EX_IBTRS_REKEY_PORT "$EX_RAW/ibnbd-serverd-rekey.log" --chunk-mode rekey
	_ibtrs_rekey_srv_pid=$_ibtrs_daemon_pid
}
_ibtrs_paths() {	# _ibtrs_paths N -> clt1@srv1,clt2@srv2
	local n=$1 i out=""
	for ((i = 1; i <= n; i++)); do
		out+="${out:+,}$(tb_nth $i "$TB_CLT_ADDRS")@$(tb_nth $i "$TB_SRV_ADDRS")"
	done
	echo "$out"
}
EX_IBTRS_POLICY=${EX_IBTRS_POLICY:-min-inflight}
EX_IBTRS_MR=${EX_IBTRS_MR:-mw}
EX_IBTRS_INVAL=${EX_IBTRS_INVAL:-remote}
_ibtrs_fio() {	# _ibtrs_fio NPATHS
	echo "--ioengine=external:$TB_TOP/fio-engine/build/ibtrs.so --paths=$(_ibtrs_paths $1)" \
		"--port=$EX_IBTRS_PORT --devpath=/dev/nullb0 --access_mode=rw --size=1g" \
		"--mp_policy=$EX_IBTRS_POLICY --mr_mode=$EX_IBTRS_MR --inval_mode=$EX_IBTRS_INVAL"
}
# The engine counts completed IOs in a shared file (its ios_file option).
_ibtrs_iosrc() { echo "u64:/dev/shm/tb-ios-$1"; }
sys_ibtrs1_iosrc() { _ibtrs_iosrc "$1"; }
sys_ibtrs2_iosrc() { _ibtrs_iosrc "$1"; }
sys_ibtrs1_desc() { echo "ibtrs-fio 1 - $EX_IBTRS_MR $EX_IBTRS_INVAL"; }
sys_ibtrs2_desc() { echo "ibtrs-fio 2 $EX_IBTRS_POLICY $EX_IBTRS_MR $EX_IBTRS_INVAL"; }
sys_ibtrs1_up() { _ibtrs_srv_up; }
sys_ibtrs1_fio() { _ibtrs_fio 1; }
sys_ibtrs2_up() {
	[ "$TB_PATHS" -ge 2 ] || ex_die "ibtrs2 needs 2 paths"
	_ibtrs_srv_up
}
sys_ibtrs2_fio() { _ibtrs_fio 2; }

# E02: the fio engine in each registration/invalidation mode, against the
# daemon (ibtrs1_<mr>_<inval>) and the kernel server (ibtrsk1_<mr>_<inval>):
# mw_remote (the default: a memory window per read buffer, invalidated by the
# server's SEND_WITH_INV), mw_local (the client invalidates it), reg_local (a
# registration per read, dropped before the IO completes), bounce_remote
# (every IO copied through the library's bounce buffer, a window over the
# slot), bounce_none (the bounce buffer's long-lived key: user memory never
# exposed), global_none (unsafe: the region's long-lived rkey, never
# invalidated).
_ex_def_ibtrs_mode() {	# NAME BASE MR INVAL
	eval "sys_$1_up() { sys_$2_up; }
sys_$1_fio() { EX_IBTRS_MR=$3 EX_IBTRS_INVAL=$4 sys_$2_fio \"\$@\"; }
sys_$1_iosrc() { _ibtrs_iosrc \"\$1\"; }
sys_$1_desc() { EX_IBTRS_MR=$3 EX_IBTRS_INVAL=$4 sys_$2_desc; }"
}
for _m in mw_remote mw_local reg_local bounce_remote bounce_none global_none; do
	_ex_def_ibtrs_mode "ibtrs1_$_m" ibtrs1 "${_m%_*}" "${_m#*_}"
	_ex_def_ibtrs_mode "ibtrsk1_$_m" ibtrsk1 "${_m%_*}" "${_m#*_}"
done
# ibtrs1r_<mr>_<inval>: the engine against the chunk_mode rekey daemon; the
# mode is reported as <inval>+rekey (as rnbd's always_invalidate=Y).
_ex_def_ibtrs_rekey_mode() {	# NAME MR INVAL
	eval "sys_$1_up() { _ibtrs_rekey_srv_up; }
sys_$1_fio() { EX_IBTRS_PORT=$EX_IBTRS_REKEY_PORT EX_IBTRS_MR=$2 EX_IBTRS_INVAL=$3 _ibtrs_fio 1; }
sys_$1_iosrc() { _ibtrs_iosrc \"\$1\"; }
sys_$1_desc() { echo \"ibtrs-fio 1 - $2 $3+rekey\"; }"
}
for _m in mw_remote global_none; do
	_ex_def_ibtrs_rekey_mode "ibtrs1r_$_m" "${_m%_*}" "${_m#*_}"
done
# ibtrs1pull_<mr>_<inval>: the engine in write_mode pull against the daemon
# (the client exposes a write's buffer for remote reading and the server
# RDMA-READs it, as nvme-rdma does); the mode is reported as <inval>+pull.
_ex_def_ibtrs_pull_mode() {	# NAME MR INVAL
	eval "sys_$1_up() { sys_ibtrs1_up; }
sys_$1_fio() { echo \"\$(EX_IBTRS_MR=$2 EX_IBTRS_INVAL=$3 _ibtrs_fio 1) --write_mode=pull\"; }
sys_$1_iosrc() { _ibtrs_iosrc \"\$1\"; }
sys_$1_desc() { echo \"ibtrs-fio 1 - $2 $3+pull\"; }"
}
for _m in mw_remote global_none; do
	_ex_def_ibtrs_pull_mode "ibtrs1pull_$_m" "${_m%_*}" "${_m#*_}"
done
unset _m

# Our kernel modules (build/kmod/, make builds them): ibtrs-server +
# ibnbd-server export /dev/nullb1 (nullb0's twin) on EX_KSRV_PORT (not 1234: upstream
# rtrs-server listens there). ibnbd1: the kernel client (ibtrs-client +
# ibnbd-client, a blk-mq /dev/ibnbdN) over 1 path, driven by fio libaio;
# reads are exposed with FRWR and remotely invalidated (the secure
# default). ibtrsk1: the userspace fio engine against the kernel server.
EX_KSRV_PORT=12346
_ksrv_loaded=0
_ksrv_load() {
	[ $_ksrv_loaded = 1 ] && return 0
	local kb=$TB_TOP/build/kmod
	[ -f "$kb/ibtrs-server.ko" ] || ex_die "$kb/ibtrs-server.ko not built (make)"
	sys_nullblk_up
	modprobe rdma_cm
	insmod "$kb/ibtrs-server.ko" port=$EX_KSRV_PORT ${EX_KSRV_PARAMS:-} ||
		ex_die "insmod ibtrs-server ${EX_KSRV_PARAMS:-} failed"
	insmod "$kb/ibnbd-server.ko" dev_search_path=/dev || ex_die "insmod ibnbd-server failed"
	_ksrv_loaded=1
}
# _rmmod_loaded MODULE...: each that is loaded unloaded, in order.
_rmmod_loaded() {
	local m
	for m in "$@"; do
		[ -d "/sys/module/$m" ] || continue
		rmmod "$m" || ex_die "cannot unload $m"
	done
}
# _kclt_unload: the kernel client's device unmapped, its modules unloaded
# (those that are loaded).
_kclt_unload() {
	if [ -n "${EX_IBNBD1_DEV:-}" ]; then
		echo normal >"/sys/class/ibnbd-client/ctl/devices/$EX_IBNBD1_DEV/unmap_device" ||
			ex_die "ibnbd unmap $EX_IBNBD1_DEV failed"
		EX_IBNBD1_DEV=
	fi
	_rmmod_loaded ibnbd_client ibtrs_client
}
# _ksrv_mode CHUNK_MODE: the kernel server in chunk_mode static or rekey.
# ibtrs-server's chunk_mode is a load-time parameter: when the loaded one
# differs, the kernel client (whose device holds a session) and both server
# modules are unloaded and the servers loaded again with it; the next
# sys_ibnbd1_up maps the device again.
_ksrv_mode() {	# CHUNK_MODE
	local p=/sys/module/ibtrs_server/parameters/chunk_mode
	[ $_ksrv_loaded = 1 ] && [ "$(cat $p 2>/dev/null)" = "$1" ] && return 0
	_kclt_unload
	_rmmod_loaded ibnbd_server ibtrs_server
	_ksrv_loaded=0
	EX_KSRV_PARAMS="chunk_mode=$1" _ksrv_load
	[ "$(cat $p)" = "$1" ] || ex_die "ibtrs-server is in chunk_mode $(cat $p), not $1"
}
sys_ibnbd1_up() {
	local kb=$TB_TOP/build/kmod ctl=/sys/class/ibnbd-client/ctl before d t
	[ -n "${EX_IBNBD1_DEV:-}" ] && return 0
	_ksrv_load
	insmod "$kb/ibtrs-client.ko" ${EX_KCLT_PARAMS:-} || ex_die "insmod ibtrs-client ${EX_KCLT_PARAMS:-} failed"
	insmod "$kb/ibnbd-client.ko" port=$EX_KSRV_PORT || ex_die "insmod ibnbd-client failed"
	before=$(ls "$ctl/devices" 2>/dev/null)
	echo "sessname=tb-ibnbd1 path=$(tb_nth 1 "$TB_CLT_ADDRS")@$(tb_nth 1 "$TB_SRV_ADDRS") device_path=nullb1 access_mode=rw" \
		>"$ctl/map_device" || ex_die "ibnbd map failed"
	for d in $(ls "$ctl/devices"); do
		echo "$before" | grep -qx "$d" || EX_IBNBD1_DEV=$d
	done
	for ((t = 0; t < 50; t++)); do [ -b "/dev/${EX_IBNBD1_DEV:-none}" ] && return 0; sleep 0.1; done
	ex_die "ibnbd device did not appear"
}
sys_ibnbd1_fio() { echo "--ioengine=libaio --direct=1 --filename=/dev/$EX_IBNBD1_DEV"; }
# IOs of the block device; the kernel client's per-path counters (messages,
# registration WRs, LOCAL_INVs) sampled with them (tb-snap kv:).
sys_ibnbd1_iosrc() {
	local kv=/sys/class/ibnbd-client/ctl/devices/$EX_IBNBD1_DEV/paths
	echo "blk:$EX_IBNBD1_DEV$([ -r "$kv" ] && echo " kv:$kv")"
}
sys_ibnbd1_desc() { echo "ibnbd 1 - frwr remote"; }
# E02: the kernel client in each of its modes (ibtrs-client's module
# parameters mr_mode, inval_mode and write_mode, read only: before a cell
# whose mode is not the loaded one, the device is unmapped, the client
# modules loaded again with the mode, and the device mapped again).
# ibnbd1_<mr>_<inval> (writes pushed), ibnbd1pull_<mr>_<inval> (writes
# pulled by the kernel server, reported as <inval>+pull).
_ibnbd_mode() {	# MR INVAL [WRITE_MODE]
	local p=/sys/module/ibtrs_client/parameters wm=${3:-push}
	[ "$(cat $p/mr_mode 2>/dev/null)" = "$1" ] &&
		[ "$(cat $p/inval_mode 2>/dev/null)" = "$2" ] &&
		[ "$(cat $p/write_mode 2>/dev/null)" = "$wm" ] && return 0
	_kclt_unload
	EX_KCLT_PARAMS="mr_mode=$1 inval_mode=$2 write_mode=$wm" sys_ibnbd1_up
	[ "$(cat $p/mr_mode)/$(cat $p/inval_mode)/$(cat $p/write_mode)" = "$1/$2/$wm" ] ||
		ex_die "ibtrs-client is in $(cat $p/mr_mode)/$(cat $p/inval_mode)/$(cat $p/write_mode), not $1/$2/$wm"
}
_ex_def_ibnbd_mode() {	# NAME MR INVAL [WRITE_MODE [CHUNK_MODE]]
	local sfx= cm=${5:-static}
	[ "${4:-push}" = pull ] && sfx=+pull
	[ "$cm" = rekey ] && sfx=$sfx+rekey
	eval "sys_$1_up() { sys_ibnbd1_up; }
sys_$1_pre() { _ksrv_mode $cm && _ibnbd_mode $2 $3 ${4:-push}; }
sys_$1_fio() { sys_ibnbd1_fio; }
sys_$1_iosrc() { sys_ibnbd1_iosrc; }
sys_$1_desc() { echo \"ibnbd 1 - $2 $3$sfx\"; }"
}
for _m in frwr_remote frwr_local frwr_none bounce_remote bounce_none \
	global_remote global_none; do
	_ex_def_ibnbd_mode "ibnbd1_$_m" "${_m%_*}" "${_m#*_}"
	_ex_def_ibnbd_mode "ibnbd1pull_$_m" "${_m%_*}" "${_m#*_}" pull
	# ibnbd1r_<mr>_<inval>: against the kernel server in chunk_mode rekey
	# (reported as <inval>+rekey, as rnbd's always_invalidate=Y)
	_ex_def_ibnbd_mode "ibnbd1r_$_m" "${_m%_*}" "${_m#*_}" push rekey
done
unset _m
sys_ibtrsk1_up() { _ksrv_load; [ -e "$TB_TOP/fio-engine/build/ibtrs.so" ] || ex_die "fio engine not built"; }
sys_ibtrsk1_fio() {
	echo "--ioengine=external:$TB_TOP/fio-engine/build/ibtrs.so --paths=$(_ibtrs_paths 1)" \
		"--port=$EX_KSRV_PORT --devpath=nullb1 --access_mode=migration --size=1g" \
		"--mp_policy=$EX_IBTRS_POLICY --mr_mode=$EX_IBTRS_MR --inval_mode=$EX_IBTRS_INVAL"
}
sys_ibtrsk1_iosrc() { _ibtrs_iosrc "$1"; }
sys_ibtrsk1_desc() { echo "ibtrs-fio/kernel-srv 1 - $EX_IBTRS_MR $EX_IBTRS_INVAL"; }
# E02: the engine's modes against the kernel server in chunk_mode static
# (ibtrsk1_<mr>_<inval>) and rekey (ibtrsk1r_<mr>_<inval>, reported as
# <inval>+rekey); the server reloads when the loaded chunk_mode differs.
for _m in mw_remote mw_local reg_local bounce_remote bounce_none global_none; do
	eval "sys_ibtrsk1_${_m}_pre() { _ksrv_mode static; }"
	_ex_def_ibtrs_mode "ibtrsk1r_$_m" ibtrsk1 "${_m%_*}" "${_m#*_}"
	eval "sys_ibtrsk1r_${_m}_pre() { _ksrv_mode rekey; }
sys_ibtrsk1r_${_m}_desc() { echo \"ibtrs-fio/kernel-srv 1 - ${_m%_*} ${_m#*_}+rekey\"; }"
done
unset _m

# The same two with the engine's busy-poll mode (--poll=1): ibtrs1p against
# ibnbd-serverd, ibtrsk1p against the kernel server.
sys_ibtrs1p_up() { sys_ibtrs1_up; }
sys_ibtrs1p_fio() { echo "$(sys_ibtrs1_fio) --poll=1"; }
sys_ibtrs1p_iosrc() { _ibtrs_iosrc "$1"; }
sys_ibtrs1p_desc() { echo "ibtrs-fio-poll 1 - $EX_IBTRS_MR $EX_IBTRS_INVAL"; }
sys_ibtrsk1p_up() { sys_ibtrsk1_up; }
sys_ibtrsk1p_fio() { echo "$(sys_ibtrsk1_fio) --poll=1"; }
sys_ibtrsk1p_iosrc() { _ibtrs_iosrc "$1"; }
sys_ibtrsk1p_desc() { echo "ibtrs-fio-poll/kernel-srv 1 - $EX_IBTRS_MR $EX_IBTRS_INVAL"; }
# Busy poll that yields the CPU when a sweep found nothing (--poll_yield=1):
# on one vCPU the server side needs the CPU the spinning client holds.
sys_ibtrs1py_up() { sys_ibtrs1_up; }
sys_ibtrs1py_fio() { echo "$(sys_ibtrs1_fio) --poll=1 --poll_yield=1"; }
sys_ibtrs1py_iosrc() { _ibtrs_iosrc "$1"; }
sys_ibtrs1py_desc() { echo "ibtrs-fio-pollyield 1 - $EX_IBTRS_MR $EX_IBTRS_INVAL"; }
sys_ibtrsk1py_up() { sys_ibtrsk1_up; }
sys_ibtrsk1py_fio() { echo "$(sys_ibtrsk1_fio) --poll=1 --poll_yield=1"; }
sys_ibtrsk1py_iosrc() { _ibtrs_iosrc "$1"; }
sys_ibtrsk1py_desc() { echo "ibtrs-fio-pollyield/kernel-srv 1 - $EX_IBTRS_MR $EX_IBTRS_INVAL"; }

# fio's built-in rdma engine: raw RDMA READ/WRITE between two fio processes
# on path 1, no storage and no block protocol (the transport floor). A fio
# server process is started per cell. Reads are RDMA READs by the client,
# writes RDMA WRITEs; fio's rdma client must be a "write" job.
EX_FIO_RDMA_PORT=18700
_fio_rdma_srv_pid=
sys_fio_rdma_up() { sys_nullblk_up; modprobe rdma_ucm; }	# null_blk: the snapshots read its counters
sys_fio_rdma_rw() { echo write; }
sys_fio_rdma_pre() {	# RW BS QD
	local t
	EX_FIO_RDMA_PORT=$((EX_FIO_RDMA_PORT + 1))
	# No --bindname: fio 3.33's rdma server parses it wrongly (it takes the
	# first character as the address), so it listens on any address.
	fio --name=srv --ioengine=rdma \
		--port=$EX_FIO_RDMA_PORT --rw=read --bs="$2" --iodepth="$3" --size=64g \
		>"$EX_RAW/fio-rdma-server.log" 2>&1 &
	_fio_rdma_srv_pid=$!
	tb_wait_cm_listener $EX_FIO_RDMA_PORT ||
		ex_die "fio rdma server did not listen: $(tail -3 "$EX_RAW/fio-rdma-server.log")"
}
sys_fio_rdma_fio() {	# RW BS QD
	local verb=write
	case $1 in *read) verb=read ;; esac
	echo "--ioengine=rdma --hostname=$(tb_nth 1 "$TB_SRV_ADDRS") --port=$EX_FIO_RDMA_PORT --verb=$verb --size=64g"
}
sys_fio_rdma_iosrc() { echo time; }	# no counter: fio's rate (inexact)
sys_fio_rdma_desc() { echo "fio-rdma 1 - global none"; }
sys_fio_rdma_post() {
	local t
	for ((t = 0; t < 100; t++)); do
		kill -0 $_fio_rdma_srv_pid 2>/dev/null || break
		sleep 0.1
	done
	kill $_fio_rdma_srv_pid 2>/dev/null
	wait $_fio_rdma_srv_pid 2>/dev/null
	return 0
}


# E03-paths: every multipath system over 1, 2 and 4 paths, per policy
. "$(dirname "${BASH_SOURCE[0]}")/systems-paths.sh"
