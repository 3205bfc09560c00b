#!/bin/bash
# paths.sh - Soft-RoCE paths inside the testbed guest.
#
# Usage: paths.sh up N          create paths 1..N
#        paths.sh cut I [how]   cut path I; how = link (default: netdev down)
#                               or rxe (delete the rxe device: device removal)
#        paths.sh restore I     undo a cut
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

_wait_active() {	# port ACTIVE and both addresses in its GID table
	local i=$1 t g1 g2
	g1=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' 10 99 "$i" 1)
	g2=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' 10 99 "$i" 2)
	for ((t = 0; t < 100; t++)); do
		grep -qs ACTIVE "/sys/class/infiniband/rxe$i/ports/1/state" &&
			grep -qs "$g1" /sys/class/infiniband/rxe$i/ports/1/gids/* &&
			grep -qs "$g2" /sys/class/infiniband/rxe$i/ports/1/gids/* && return 0
		sleep 0.1
	done
	echo "paths: rxe$i port not ACTIVE" >&2
	return 1
}

_cut() {
	local i=$1 how=${2:-link}
	case $how in
	link) ip link set "tb$i" down ;;
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
_restore() {
	local i=$1 t
	ip link set "tb$i" up
	if [ -e "/sys/class/infiniband/rxe$i" ]; then
		rdma link delete "rxe$i"
		for ((t = 0; t < 100; t++)); do
			[ -e "/sys/class/infiniband/rxe$i" ] || break
			sleep 0.1
		done
	fi
	rdma link add "rxe$i" type rxe netdev "tb$i"
	_wait_active "$i"
}

case ${1:-} in
up) _up "${2:?path count}" ;;
cut) _cut "${2:?path index}" "${3:-link}" ;;
restore) _restore "${2:?path index}" ;;
show) rdma link show; ip -br addr ;;
*) sed -n '2,10p' "$0" >&2; exit 2 ;;
esac
