# meta.sh - host-side helpers for experiment runners (source it).

# ex_git: sha of HEAD, with "-dirty" when the tree has uncommitted changes.
ex_git() {
	local s
	s=$(git -C "$EX_TOP" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
	git -C "$EX_TOP" diff --quiet HEAD -- trs server fio-engine kmod experiments 2>/dev/null || s+=-dirty
	echo "$s"
}

# ex_meta_json FILE EXPERIMENT KEY=VALUE...: everything needed to redo a run.
ex_meta_json() {
	local f=$1 exp=$2
	shift 2
	{
		printf '{\n  "experiment": "%s",\n' "$exp"
		printf '  "git": "%s",\n' "$(ex_git)"
		printf '  "date": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		printf '  "host": "%s",\n' "$(hostname)"
		printf '  "host_cpus": %s,\n' "$(nproc)"
		printf '  "host_cpu": "%s",\n' "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1)"
		printf '  "guest_kernel": "%s",\n' "$("$EX_TOP/experiments/testbed/kver.sh")"
		printf '  "qemu": "%s",\n' "$(qemu-system-x86_64 --version | head -n1)"
		printf '  "fio": "%s",\n' "$(fio --version)"
		printf '  "perftest": "%s",\n' "$(dpkg-query -W -f='${Version}' perftest 2>/dev/null)"
		printf '  "rdma_core": "%s",\n' "$(dpkg-query -W -f='${Version}' rdma-core 2>/dev/null)"
		printf '  "nvme_cli": "%s",\n' "$(dpkg-query -W -f='${Version}' nvme-cli 2>/dev/null)"
		printf '  "testbed": "%s",\n' "${EX_TESTBED:-qemu}"
		printf '  "params": {'
		local first=1 kv
		for kv in "$@"; do
			[ $first = 1 ] || printf ','
			first=0
			printf '\n    "%s": "%s"' "${kv%%=*}" "${kv#*=}"
		done
		printf '\n  }\n}\n'
	} >"$f"
}
