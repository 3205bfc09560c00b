# guest-lib.sh - helpers for scripts run by the testbed (source it).
#
# In the QEMU testbed everything runs in one guest; in real-hardware mode
# (run --hosts FILE) scripts run on the client host and tb_srv runs a
# command on the server host over ssh (TB_SRV_SSH set by the runner).

tb_log() { echo "[$(date +%T.%3N)] $*"; }

# Run a command on the server side: over ssh (real hardware), through the
# server guest's agent on the management link (two-host mode: prints the
# command's output when it ends, returns its status), or locally (one VM).
# A server process meant to outlive the call must redirect stdin, stdout
# and stderr (e.g. "setsid CMD </dev/null >LOG 2>&1 &").
tb_srv() {
	if [ -n "${TB_SRV_SSH:-}" ]; then
		# shellcheck disable=SC2029
		ssh $TB_SRV_SSH "cd '$TB_TOP' && $*"
	elif [ -n "${TB_SRV_AGENT:-}" ]; then
		local out rc
		# bash's /dev/tcp: the agent closes the connection after the answer
		out=$(exec 3<>"/dev/tcp/${TB_SRV_AGENT%:*}/${TB_SRV_AGENT##*:}" &&
			printf '%s\n' "$(printf '%s' "$*" | base64 -w0)" >&3 && cat <&3)
		rc=$(printf '%s\n' "$out" | sed -n 's/^__tb_rc=//p' | tail -n1)
		printf '%s\n' "$out" | grep -v '^__tb_rc=' || true
		return "${rc:-125}"
	else
		bash -c "$*"
	fi
}

# Ask the host runner for what only it can do (two-host mode; two-hosts.sh
# lists the requests: "link I up|down [srv|clt|both]", "kill srv",
# "start srv"). Prints the host's answer; status 0 when it was done.
tb_host() {
	local q=${TB_OUT:?}/hostreq n t rc
	[ "${TB_ROLE:-}" = clt ] || { echo "tb_host: only the client guest of --two-hosts" >&2; return 2; }
	mkdir -p "$q"
	n=$(date +%s%N)
	printf '%s\n' "$*" >"$q/$n.tmp" && mv "$q/$n.tmp" "$q/$n.req" || return 2
	for ((t = 0; t < 600; t++)); do
		if [ -s "$q/$n.rsp" ]; then
			rc=$(head -n1 "$q/$n.rsp")
			tail -n +2 "$q/$n.rsp"
			rm -f "$q/$n.rsp"
			return "$rc"
		fi
		sleep 0.1
	done
	echo "tb_host: no answer to '$*' in 60 s" >&2
	return 2
}

# Cut/restore path I. In the VM: netdev down (or "rxe": delete the rxe
# device); on real hosts: the client netdev of path I goes down/up.
tb_path_cut() {	# two-host mode: paths.sh cuts this guest's side (ethI)
	if [ "${TB_MODE:-}" = real ]; then
		ip link set "$(tb_nth "$1" "$TB_NETDEVS")" down
	else
		"$TB_TOP/experiments/testbed/paths.sh" cut "$@"
	fi
}
# A restore that meets the kernel defect of paths.sh's _restore (exit 3)
# ends the calling script with exit 75 and a "TB_DEFECT:" line: the path
# cannot come back in this boot, so what the script claims after the
# restore cannot be checked; tests/run-vm runs it once more in a fresh
# guest. The script's EXIT trap is dropped first: its cleanup (unmap,
# rmmod) can block on the stuck device, and the guest is not used again.
TB_EXIT_DEFECT=75
tb_path_restore() {
	local rc=0
	if [ "${TB_MODE:-}" = real ]; then
		ip link set "$(tb_nth "$1" "$TB_NETDEVS")" up
	else
		"$TB_TOP/experiments/testbed/paths.sh" restore "$@" || rc=$?
		if [ $rc = 3 ]; then
			echo "TB_DEFECT: path $1 could not be restored (rxe device stuck in its removal, trs/PROTOCOL.md section 9)"
			trap - EXIT
			exit $TB_EXIT_DEFECT
		fi
		return $rc
	fi
}

tb_wait_port_active() {
	local dev t
	dev=$(echo "$TB_RXE_DEVS" | cut -d' ' -f"$1")
	for ((t = 0; t < 100; t++)); do
		grep -qs ACTIVE "/sys/class/infiniband/$dev/ports/1/state" && return 0
		sleep 0.1
	done
	return 1
}

# Wait (<= 10 s) until an RDMA CM listener exists on PORT; 1 if none came.
tb_wait_cm_listener() {
	local t
	for ((t = 0; t < 100; t++)); do
		rdma res show cm_id 2>/dev/null | grep -qE "LISTEN.*:$1( |$)" && return 0
		sleep 0.1
	done
	return 1
}

# Nth word of a list: tb_nth 2 "$TB_SRV_ADDRS"
tb_nth() { echo "$2" | cut -d' ' -f"$1"; }

# Skip (exit 77) with a reason unless a command exists.
tb_require_cmd() { command -v "$1" >/dev/null || { echo "SKIP: needs $1"; exit 77; }; }
