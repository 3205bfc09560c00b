#!/usr/bin/env bash
# coverage.sh - source-based line and branch coverage of the code each
# harness fuzzes, reached by its committed seeds plus its working corpus
# (build/fuzz/corpus/<h>/, grown by make fuzz): the harnesses are rebuilt
# with -fprofile-instr-generate -fcoverage-mapping (make COV=1, into
# build/fuzz/cov/), replay the inputs once, and llvm-cov reports on the
# parser's source files (not the harness). Needs llvm-profdata and llvm-cov
# (Debian: llvm).
# Usage: tests/fuzz/coverage.sh [HARNESS...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
b=$top/build/fuzz/cov
for t in llvm-profdata llvm-cov; do
	command -v $t >/dev/null || { echo "coverage.sh: $t not installed (apt-get install llvm)" >&2; exit 1; }
done
all=$(make -s -C "$here" list)
harnesses=${*:-$all}
declare -A SRC=(
	[conn_req]=trs/common/proto.c [conn_rsp]=trs/common/proto.c
	[info_req]=trs/common/proto.c [info_rsp]=trs/common/proto.c
	[imm]=trs/common/proto.c [io_req]=trs/common/proto.c
	[io_rsp]=trs/common/proto.c
	[rx]="trs/common/rx.c trs/common/proto.c"
	[ibnbd]=trs/common/ibnbd_proto.c
	[map_device]="kmod/ibnbd-clt/ibnbd-clt-parse.c kmod/ibtrs-clt/ibtrs-clt-addr.c"
	[srv_opts]=server/src/srv_opts.c [srv_path]=server/src/srv_path.c
	[engine_opts]="fio-engine/ibtrs_opts.c fio-engine/ibnbd_clt.c trs/lib/clt_path.c"
)
# The functions each harness is about (proto.c serves several harnesses).
declare -A FN=(
	[conn_req]='trs_conn_req_decode|trs_negotiate_version'
	[conn_rsp]='trs_conn_rsp_decode|trs_conn_params_check'
	[info_req]='trs_info_req_decode' [info_rsp]='trs_info_rsp_decode'
	[imm]='trs_imm_decode_srv|trs_imm_decode_clt'
	[io_req]='trs_io_req_copy|trs_io_req_decode|trs_io_resp_check'
	[io_rsp]='trs_io_rsp_decode'
	[rx]='trs_rx_decode_srv|trs_rx_decode_clt'
	[ibnbd]='ibnbd_msg_type$|ibnbd_validate_|ibnbd_check_io_limits|ibnbd_access_check'
	[map_device]='ibnbd_clt_parse|ibtrs_clt_parse_path'
	[srv_opts]='srv_opts_parse|srv_parse_size|parse_uint'
	[srv_path]='srv_path_rel'
	[engine_opts]='fio_ibtrs_clt_params|fio_ibtrs_access_mode|fio_ibtrs_make_sessname|ibnbd_clt_split_paths|trs_clt_path_alloc|trs_parse_ip'
)
bins=()
for h in $harnesses; do
	bins+=("$b/fuzz_$h")
done
make -s -C "$here" COV=1 "${bins[@]}" >"$b.log" 2>&1 || { tail -20 "$b.log"; exit 1; }
printf "%-12s %-38s %15s %15s\n" harness function lines branches
for h in $harnesses; do
	rm -f "$b/$h".prof*
	mkdir -p "$b/empty" "$top/build/fuzz/corpus/$h"
	LLVM_PROFILE_FILE=$b/$h.profraw "$b/fuzz_$h" -runs=0 -close_fd_mask=3 \
		"$b/empty" "$here/corpus/$h" "$top/build/fuzz/corpus/$h" >/dev/null 2>&1
	llvm-profdata merge -sparse -o "$b/$h.profdata" "$b/$h.profraw"
	srcs=()
	for f in ${SRC[$h]}; do
		srcs+=("$top/$f")
	done
	# function, line and branch columns of llvm-cov's per-function report
	llvm-cov report -show-functions -instr-profile="$b/$h.profdata" \
		"$b/fuzz_$h" "${srcs[@]}" 2>/dev/null |
	awk -v h="$h" -v re="^([^ :]*:)?(${FN[$h]})" '
		$1 ~ re && NF >= 10 {
			printf "%-12s %-38s %7s %7s %7s %7s\n", h, $1, $5 - $6 "/" $5, $7, $8 - $9 "/" $8, $10
		}'
done
