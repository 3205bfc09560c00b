#!/bin/bash
# link-probe.sh BACKEND - boot two guests joined by one virtio-net link on the
# given QEMU netdev backend (socket|stream-inet|stream-unix|dgram) and measure
# ib_send_lat / ib_write_bw over rxe on that link (1 vCPU each, single-
# threaded TCG, MTU 1500). An investigation for
# issue 10 (two-host testbed): the per-link latency of QEMU netdev backends.
# Results: results/testbed-link-probe/.
set -u
top=$(cd "$(dirname "$0")/../../.." && pwd)
be=$1
b=${OUT:-$top/build/twohost}/$be
rm -rf "$b"; mkdir -p "$b/srv" "$b/clt"
kver=$($top/experiments/testbed/kver.sh)
for r in srv clt; do
	cat >"$b/$r/env" <<EOT
TB_TOP=$top
TB_MODE=mttcg
TB_PATHS=1
TB_TIMEOUT=120
TB_MTU=1500
TB_PCLMUL=0
TB_KVER=$kver
export TB_TOP TB_MODE TB_TIMEOUT TB_MTU TB_PCLMUL TB_KVER
EOT
done
cat >"$b/srv/cmd" <<'EOT'
modprobe virtio_net; sleep 1
ip addr add 10.98.1.1/24 dev eth0; ip link set eth0 up
rdma link add rxe_e type rxe netdev eth0
ib_send_lat -d rxe_e -n 2000 -s 2 > /tb-out/lat.txt 2>&1
ib_write_bw -d rxe_e -s 65536 -D 3 > /tb-out/bw.txt 2>&1
EOT
cat >"$b/clt/cmd" <<'EOT'
modprobe virtio_net; sleep 1
ip addr add 10.98.1.2/24 dev eth0; ip link set eth0 up
rdma link add rxe_e type rxe netdev eth0
sleep 3

ib_send_lat -d rxe_e -n 2000 -s 2 10.98.1.1 > /tb-out/lat.txt 2>&1
sleep 2
ib_write_bw -d rxe_e -s 65536 -D 3 10.98.1.1 > /tb-out/bw.txt 2>&1
EOT
for r in srv clt; do printf 'cd /\n. /tb-out/cmd\n' >"$b/$r/cmd.wrap"; mv "$b/$r/cmd" "$b/$r/cmd.body"; printf '. /tb-out/cmd.body\n' >"$b/$r/cmd"; done
case $be in
socket) nsrv="socket,id=n1,listen=127.0.0.1:19001"; nclt="socket,id=n1,connect=127.0.0.1:19001" ;;
stream-inet) nsrv="stream,id=n1,server=on,addr.type=inet,addr.host=127.0.0.1,addr.port=19021"; nclt="stream,id=n1,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=19021" ;;
stream-unix) nsrv="stream,id=n1,server=on,addr.type=unix,addr.path=$b/link.sock"; nclt="stream,id=n1,server=off,addr.type=unix,addr.path=$b/link.sock" ;;
dgram) nsrv="dgram,id=n1,local.type=inet,local.host=127.0.0.1,local.port=19011,remote.type=inet,remote.host=127.0.0.1,remote.port=19012"
       nclt="dgram,id=n1,local.type=inet,local.host=127.0.0.1,local.port=19012,remote.type=inet,remote.host=127.0.0.1,remote.port=19011" ;;
esac
initrd=$top/build/testbed/initrd-$kver.gz
q() {	# ROLE NETDEV MAC
	qemu-system-x86_64 -accel tcg,thread=single -smp 1 -cpu qemu64 -m 2048 \
		-nographic -no-reboot -nodefaults -serial stdio -net none \
		-kernel /boot/vmlinuz-$kver -initrd "$initrd" \
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
		-fsdev "local,id=out,path=$b/$1,security_model=none" \
		-device virtio-9p-pci,fsdev=out,mount_tag=tbout \
		-netdev "$2" -device virtio-net-pci,netdev=n1,mac=$3 \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic tb_main=$top/experiments/testbed/guest-main.sh" \
		</dev/null >"$b/$1/console.log" 2>&1
}
q srv "$nsrv" 52:54:00:00:01:01 & s=$!
sleep 1
q clt "$nclt" 52:54:00:00:01:02 & c=$!
( sleep 200; kill $s $c 2>/dev/null ) & w=$!
wait $c; wait $s; kill $w 2>/dev/null
echo "== $be"
tail -3 "$b/clt/ping.txt"; grep -A3 "#bytes" "$b/clt/lat.txt" | tail -2; grep -A2 "#bytes" "$b/clt/bw.txt" | tail -1
