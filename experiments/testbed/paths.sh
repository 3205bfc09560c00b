#!/bin/bash
# paths.sh - Soft-RoCE paths inside the testbed guest.
#
# Usage: paths.sh up N          create paths 1..N
#        paths.sh up-nic N ROLE two-host mode: address this guest's side
#                               (srv|clt) of N virtio-net links (below)
#        paths.sh cut I [how]   cut path I; how = link (default: netdev down)
#                               or rxe (delete the rxe device: device removal)
#        paths.sh restore I     undo a cut (exit 3: a kernel defect keeps
#                               the old rxe device, see _restore)
#        paths.sh shape I RATE  tbf qdisc on path I's netdev (RATE e.g.
#                               100mbit, or off); in two-host mode a real hop
#        paths.sh show
#
# Path I is one dummy netdev tbI carrying the server address 10.99.I.1 and
# the client address 10.99.I.2, and one rxe device rxeI on it, so each path
# has its own RDMA device, GIDs and subnet. Client and server share the guest:
# RDMA CM resolves each address to the rxe device of the netdev owning it.
# All of this exists only inside the guest, which has no network card.
# Environment: TB_MTU (netdev MTU, default 1500), TB_PCLMUL=1 (load
# crc32-pclmul before rdma_rxe; needs the pclmul CPU flags from the runner).
set -euo pipefail
env_file=/run/tb-paths.env

_srv_addr() { echo "10.99.$1.1"; }
_clt_addr() { echo "10.99.$1.2"; }

_up() {
	local n=$1 i srv="" clt="" devs="" nets=""
	[[ $n =~ ^[1-8]$ ]] || { echo "paths: bad path count '$n'" >&2; exit 2; }
	[ "${TB_PCLMUL:-0}" = 1 ] && modprobe crc32-pclmul
	modprobe rdma_rxe
	modprobe rdma_ucm
	modprobe ib_uverbs
	ip link set lo up
	for ((i = 1; i <= n; i++)); do
		ip link add "tb$i" type dummy
		ip link set "tb$i" mtu "${TB_MTU:-1500}"
		ip addr add "$(_srv_addr $i)/24" dev "tb$i"
		ip addr add "$(_clt_addr $i)/24" dev "tb$i"
		ip link set "tb$i" up
		rdma link add "rxe$i" type rxe netdev "tb$i"
		srv+="$(_srv_addr $i) " clt+="$(_clt_addr $i) "
		devs+="rxe$i " nets+="tb$i "
	done
	for ((i = 1; i <= n; i++)); do _wait_active "$i"; done
	cat >"$env_file" <<EOT
TB_PATHS=$n
TB_SRV_ADDRS="${srv% }"
TB_CLT_ADDRS="${clt% }"
TB_RXE_DEVS="${devs% }"
TB_NETDEVS="${nets% }"
EOT
	echo "tb: paths up: ${srv% } (rxe: ${devs% }, mtu ${TB_MTU:-1500})"
}

# Two-host mode (run --two-hosts): this guest is one side (TB_ROLE srv|clt)
# of a management link and N path links, virtio-net NICs that the runner
# gives the MAC 52:54:00:10:LL:0S (LL: 00 management, else the path; S: 0
# server, 1 client). PCI probe order does not follow the command line, so
# they are found by MAC and renamed: tbm (10.98.0.1 server / .2 client) and
# tbI (path I: 10.99.I.0/24, server .1, client .2), one rxe device per path.
_nic_by_mac() {	# MAC -> netdev name
	local d
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}

_up_nic() {
	local n=$1 role=$2 me side i srv="" clt="" devs="" nets="" t dev
	[[ $n =~ ^[1-8]$ ]] || { echo "paths: bad path count '$n'" >&2; exit 2; }
	case $role in srv) me=1 side=0 ;; clt) me=2 side=1 ;; *) echo "paths: bad role '$role'" >&2; exit 2 ;; esac
	[ "${TB_PCLMUL:-0}" = 1 ] && modprobe crc32-pclmul
	modprobe virtio_net
	modprobe rdma_rxe
	modprobe rdma_ucm
	modprobe ib_uverbs
	ip link set lo up
	for ((i = 0; i <= n; i++)); do
		for ((t = 0; t < 100; t++)); do
			dev=$(_nic_by_mac "$(printf '52:54:00:10:%02x:%02x' "$i" "$side")") && break
			sleep 0.1
		done
		[ -n "$dev" ] || { echo "paths: no NIC for link $i" >&2; exit 1; }
		if [ "$i" = 0 ]; then
			ip link set "$dev" name tbm
			ip link set tbm up
			ip addr add "10.98.0.$me/24" dev tbm
			continue
		fi
		ip link set "$dev" name "tb$i"
		ip link set "tb$i" mtu "${TB_MTU:-1500}"
		ip addr add "10.99.$i.$me/24" dev "tb$i"
		ip link set "tb$i" up
		rdma link add "rxe$i" type rxe netdev "tb$i"
		srv+="$(_srv_addr $i) " clt+="$(_clt_addr $i) "
		devs+="rxe$i " nets+="tb$i "
	done
	for ((i = 1; i <= n; i++)); do _wait_active "$i" "10.99.$i.$me"; done
	cat >"$env_file" <<EOT
TB_PATHS=$n
TB_SRV_ADDRS="${srv% }"
TB_CLT_ADDRS="${clt% }"
TB_RXE_DEVS="${devs% }"
TB_NETDEVS="${nets% }"
TB_ROLE=$role
EOT
	echo "tb: two-host $role, paths up: ${srv% } (rxe: ${devs% }, mtu ${TB_MTU:-1500})"
}

_gid() {	# IPv4 -> its IPv4-mapped GID as rxe lists it
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}

_wait_active() {	# I [ADDR]: port ACTIVE, ADDR (default: both ends) in its GID table
	local i=$1 t g1 g2
	g1=$(_gid "${2:-10.99.$i.1}")
	g2=$(_gid "${2:-10.99.$i.2}")
	for ((t = 0; t < 100; t++)); do
		grep -qs ACTIVE "/sys/class/infiniband/rxe$i/ports/1/state" &&
			grep -qs "$g1" /sys/class/infiniband/rxe$i/ports/1/gids/* &&
			grep -qs "$g2" /sys/class/infiniband/rxe$i/ports/1/gids/* && return 0
		sleep 0.1
	done
	echo "paths: rxe$i port not ACTIVE" >&2
	return 1
}

_netdev() {	# path I's netdev (both modes name it tbI)
	echo "tb$1"
}

_cut() {
	local i=$1 how=${2:-link}
	case $how in
	link) ip link set "$(_netdev "$i")" down ;;
	rxe) rdma link delete "rxe$i" ;;
	*) echo "paths: unknown cut mode '$how'" >&2; exit 2 ;;
	esac
}

# Restore always gives the path a fresh rxe device. Measured with Debian's
# 6.1 rxe: after a link cut while connections on the device were reconnecting,
# link up brings the port back ACTIVE with its GIDs, and the device sends
# (sent_pkts grows) but never receives again (rcvd_pkts frozen; new RDMA CM
# connections time out) until it is deleted and re-added. QPs still open on
# the old device get a device-removal event, which a failed path must handle
# anyway.
#
# The removal can block for good on a defect of Linux 6.1 (trs/PROTOCOL.md
# section 9): a CM message posted on the device's QP1 after a send there
# failed with the link down may never complete (rxe flushes one work
# request of an errored QP per run of its send task, and two posts can share
# a run), so ib_cm keeps that id ("cm_destroy_id_wait_timeout" in dmesg
# every 10 s) and cma_remove_one() waits for it. The removal is therefore
# run in the background and waited for: still pending after 30 s with that
# message in the kernel log, the path cannot come back in this boot and
# the restore exits 3 ("testbed defect"); still pending after 120 s
# without it (a process or module that keeps the device) it exits 1. Both
# times scale with TB_TIMEOUT_SCALE.
_restore() {
	local i=$1 t me="" lim
	[ "${TB_ROLE:-}" = srv ] && me=10.99.$i.1
	[ "${TB_ROLE:-}" = clt ] && me=10.99.$i.2
	ip link set "$(_netdev "$i")" up
	if [ -e "/sys/class/infiniband/rxe$i" ]; then
		rdma link delete "rxe$i" &
		lim=$((1200 * ${TB_TIMEOUT_SCALE:-1}))
		for ((t = 0; t < lim; t++)); do
			[ -e "/sys/class/infiniband/rxe$i" ] || break
			# 30 s with the stuck CM id in the log: the defect (not
			# grep -q: under pipefail, dmesg's SIGPIPE fails the test)
			if [ $((t % 50)) = 49 ] && [ $t -ge $((300 * ${TB_TIMEOUT_SCALE:-1})) ] &&
				dmesg | grep 'cm_destroy_id_wait_timeout' >/dev/null; then
				echo "paths: testbed defect: rxe$i stuck in its removal for $((t / 10)) s behind a CM message that never completed (Linux 6.1 rxe/ib_cm, trs/PROTOCOL.md section 9): path $i cannot be restored in this boot" >&2
				exit 3
			fi
			sleep 0.1
		done
		if [ -e "/sys/class/infiniband/rxe$i" ]; then
			echo "paths: rxe$i still not removed after $((lim / 10)) s (something keeps the device)" >&2
			exit 1
		fi
		wait
	fi
	rdma link add "rxe$i" type rxe netdev "$(_netdev "$i")"
	_wait_active "$i" $me
}

# Shape path I's outgoing traffic on this side: a tbf qdisc on its NIC
# (RATE in tc's units, e.g. 100mbit; "off" removes it). In two-host mode
# the NIC is a real hop, so shaping both sides bounds the path both ways.
_shape() {
	local dev i=$1 rate=$2
	dev=$(_netdev "$i")
	tc qdisc del dev "$dev" root 2>/dev/null || true	# none yet
	[ "$rate" = off ] && return 0
	tc qdisc add dev "$dev" root tbf rate "$rate" burst 64kb latency 100ms
}

case ${1:-} in
up) _up "${2:?path count}" ;;
up-nic) _up_nic "${2:?path count}" "${3:?role srv|clt}" ;;
cut) _cut "${2:?path index}" "${3:-link}" ;;
restore) _restore "${2:?path index}" ;;
shape) _shape "${2:?path index}" "${3:?rate (e.g. 100mbit) or off}" ;;
show) rdma link show; ip -br addr ;;
*) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
