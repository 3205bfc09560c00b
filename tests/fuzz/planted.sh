#!/usr/bin/env bash
# planted.sh - shows that each harness fails when the code it fuzzes has a
# bug: per case, one check of a parser is broken (a bound off by one, a
# check dropped) in a scratch copy of the sources (build/fuzz/planted/,
# the checkout is never touched), the harness is built from that copy and
# fuzzed from its seeds; the case passes when the fuzzer reports a crash
# (sanitizer or invariant) within the time given.
#
# Usage: tests/fuzz/planted.sh [--seconds N] [--no-seeds] [CASE...]
#   N: default the harness's share in make check (budget.sh); --no-seeds: start
#   from an empty corpus instead of corpus/<h>/ (the seeds hold many edge
#   cases, so most plants fall at once; this shows what mutation alone
#   finds); CASE: see --list.
# Prints PASS: planted/<case> (caught after N execs, S s: <summary>) or
# FAIL: planted/<case>: not caught in N s. Not part of make check.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
secs=
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) secs=$2; shift ;;
	--no-seeds) noseeds=1 ;;
	--list) list=1 ;;
	-*) echo "planted.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done

# A case: its name, the harness, the file, the text, what it becomes.
declare -a NAMES
declare -A H F OLD NEW
add() {
	NAMES+=("$1")
	H[$1]=$2
	F[$1]=$3
	OLD[$1]=$4
	NEW[$1]=$5
}
add conn_req-cid-bound conn_req trs/common/proto.c \
	'if (out->cid >= out->cid_num)' 'if (out->cid > out->cid_num)'
add conn_rsp-newer-minor conn_rsp trs/common/proto.c \
	'if (m->ver_minor > TRS_PROTO_VER_MINOR)' \
	'if (m->ver_minor > TRS_PROTO_VER_MINOR + 1)'
add info_req-name-loop info_req trs/common/proto.c \
	'for (i = 0; i < TRS_SESSNAME_MAX; i++) {' \
	'for (i = 0; i <= TRS_SESSNAME_MAX; i++) {'
add info_rsp-pool-wrap info_rsp trs/common/proto.c \
	'if (out->pool_addr + span < out->pool_addr)' \
	'if (0 && out->pool_addr + span < out->pool_addr)'
add imm-srv-id-bound imm trs/common/proto.c \
	'		if (id >= queue_depth)
			return trs_fail(why, "chunk id >= queue depth", -ERANGE);
		fallthrough;' \
	'		if (id > queue_depth)
			return trs_fail(why, "chunk id >= queue depth", -ERANGE);
		fallthrough;'
add rx-srv-runt rx trs/common/rx.c \
	'	if (wc->byte_len < 2)
		return trs_rx_fail(why, "runt message", -EPROTO);
	out->kind = TRS_RX_MSG;' \
	'	if (wc->byte_len < 1)
		return trs_rx_fail(why, "runt message", -EPROTO);
	out->kind = TRS_RX_MSG;'
add io_req-copy-clamp io_req trs/common/proto.c \
	'	if (ulen > area_len - n)' '	if (0 && ulen > area_len - n)'
add io_req-read-wrap io_req trs/common/proto.c \
	'if (out->raddr + out->rlen < out->raddr)' \
	'if (0 && out->raddr + out->rlen < out->raddr)'
add io_rsp-id-bound io_rsp trs/common/proto.c \
	'if (out->chunk_id >= queue_depth)' 'if (out->chunk_id > queue_depth)'
add ibnbd-open-path-loop ibnbd trs/common/ibnbd_proto.c \
	'for (i = 0; i < IBNBD_DEV_PATH_MAX; i++) {' \
	'for (i = 0; i <= IBNBD_DEV_PATH_MAX; i++) {'
add ibnbd-io-range ibnbd trs/common/ibnbd_proto.c \
	'if (sector > lim->nsectors || nsect > lim->nsectors - sector)' \
	'if (sector > lim->nsectors)'
add map_device-max-paths map_device kmod/ibnbd-clt/ibnbd-clt-parse.c \
	'if (o->npaths == IBNBD_CLT_MAX_PATHS) {' \
	'if (o->npaths == IBNBD_CLT_MAX_PATHS + 1) {'
add map_device-addr-family map_device kmod/ibtrs-clt/ibtrs-clt-addr.c \
	'if (at && addr->src.ss_family != addr->dst.ss_family)' 'if (0)'
add srv_opts-max-addrs srv_opts server/src/srv_opts.c \
	'if (o->naddrs >= SRV_MAX_ADDRS)' 'if (o->naddrs > SRV_MAX_ADDRS)'
add srv_opts-hb-missed srv_opts server/src/srv_opts.c \
	'if (parse_uint(optarg, 1000, &v))' 'if (parse_uint(optarg, 10000, &v))'
add srv_path-rellen srv_path server/src/srv_path.c \
	'if (strlen(p) >= rellen) {' 'if (strlen(p) > rellen) {'
add engine_opts-split engine_opts fio-engine/ibnbd_clt.c \
	'if (c->npaths >= IBTRS_MAX_PATHS)' 'if (c->npaths > IBTRS_MAX_PATHS)'
add engine_opts-lib-src engine_opts trs/lib/clt_path.c \
	'path->has_src = true;' 'path->has_src = false;'

if [ "${list:-0}" = 1 ]; then
	for name in "${NAMES[@]}"; do
		echo "$name (${H[$name]}: ${F[$name]})"
	done
	exit 0
fi

# shellcheck source=tests/fuzz/budget.sh
. "$here/budget.sh"
all=$(make -s -C "$here" list)
s=$top/build/fuzz/planted
rc=0
for name in "${NAMES[@]}"; do
	h=${H[$name]}
	file=${F[$name]}
	old=${OLD[$name]}
	new=${NEW[$name]}
	if [ $# -gt 0 ] && ! grep -qw -- "$name" <<<"$*"; then
		continue
	fi
	# A scratch copy of the sources the harnesses build from.
	rm -rf "$s"
	mkdir -p "$s/build"
	tar -C "$top" --exclude=build -cf - trs kmod server fio-engine \
		tests/fuzz | tar -C "$s" -xf -
	ln -s "$top/fio-engine/build" "$s/fio-engine/build"
	if ! OLD=$old NEW=$new python3 - "$s/$file" <<-'EOF'
	import os, sys
	p = sys.argv[1]
	t = open(p).read()
	old, new = os.environ["OLD"], os.environ["NEW"]
	if t.count(old) != 1:
	    sys.exit("planted.sh: %r found %d times in %s" % (old, t.count(old), p))
	open(p, "w").write(t.replace(old, new))
	EOF
	then
		echo "FAIL: planted/$name: the text to break is not in $file (any more)"
		rc=1
		continue
	fi
	if ! make -s -C "$s/tests/fuzz" "$s/build/fuzz/fuzz_$h" >"$s/build.log" 2>&1; then
		echo "FAIL: planted/$name: build failed ($s/build.log)"
		rc=1
		continue
	fi
	mkdir -p "$s/work" "$s/art"
	dict=()
	[ -f "$here/dict/$h.dict" ] && dict=(-dict="$here/dict/$h.dict")
	t0=$(date +%s)
	# shellcheck disable=SC2086
	hs=${secs:-$(fuzz_check_secs "$h" $all)}
	seeds=("$here/corpus/$h")
	[ "${noseeds:-0}" = 1 ] && seeds=()
	nice -n "${FUZZ_NICE:-10}" "$s/build/fuzz/fuzz_$h" -max_total_time="$hs" \
		-print_final_stats=1 -close_fd_mask=1 -timeout=10 \
		-artifact_prefix="$s/art/" "${dict[@]}" "$s/work" "${seeds[@]}" \
		>"$s/fuzz.log" 2>&1
	t=$(( $(date +%s) - t0 ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$s/fuzz.log" | tail -1)
	why=$(grep -m1 -E '^SUMMARY:|FUZZ INVARIANT FAILED' "$s/fuzz.log")
	if [ -n "$why" ]; then
		at=a-seed
		grep -q 'INITED' "$s/fuzz.log" && at=mutation
		echo "PASS: planted/$name (caught by $at after ${execs:-?} execs, $t s: $why)"
	else
		echo "FAIL: planted/$name: not caught in $hs s (${execs:-?} execs)"
		rc=1
	fi
	mkdir -p "$top/build/fuzz/planted-logs"
	cp "$s/fuzz.log" "$top/build/fuzz/planted-logs/$name.log"
done
rm -rf "$s"
exit $rc
