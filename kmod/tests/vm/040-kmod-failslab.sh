#!/bin/bash
# 040-kmod-failslab: allocation failures injected into our modules' own
# allocations must unwind cleanly. Needs the debug kernel (run --kernel
# debug: failslab and fail_page_alloc with the stacktrace filter and the
# "count" file of experiments/testbed/debug-kernel-patches/); skips
# elsewhere.
#
# Selection: an allocation is ours when a frame of its stack lies in the
# module's memory (require-start/require-end = base and base + size of the
# module in /proc/modules): that covers the allocations made by ib_core or
# the block layer on our behalf, and those of the CM handlers, which run in
# kworkers (a task filter would miss them). The Nth selected allocation
# fails: count=0, interval=N, times=1, probability=100 (the patched kernel
# counts only the selected calls). First the operation runs once with
# interval = 10^9 (nothing fails) and "count" gives the number K of its
# allocations; then it runs for N in a spread of 1..K (every N when K <=
# FS_MAX, default 2, else FS_MAX values spread from 1 to below K: the last
# ones often do not happen in another run; FS_ALL=1: all). Each injection
# is logged with a stack (verbose=2) unless the allocation had __GFP_NOWARN
# (the kernel then dumps nothing: it has a fallback); the failed site is the
# first reliable frame of the module in it, "<-" the innermost frame that
# is not the allocator's.
#
# Operations, each for failslab and fail_page_alloc (min-order 0; neither
# skips GFP_KERNEL):
#  a. the kernel server's session set-up: the userspace fio engine connects
#     over 2 paths and writes + verifies 64 KiB (targets ibtrs_server,
#     ibnbd_server);
#  b. the kernel client's map over 2 paths (targets ibtrs_client,
#     ibnbd_client; a successful map is checked with a verified 64 KiB
#     write and unmapped again);
#  c. IO: a verified 1 MiB fio job (4k and 64k) on a mapped /dev/ibnbdN
#     (all four modules).
# After each injection: the operation ended (an error or success; no hang:
# fio within 60 s, the map within 90 s, both times TB_TIMEOUT_SCALE); when
# it did not succeed, the same operation without injection succeeds (and
# verifies): the failure was unwound; and the kernel log of the round, the
# injection's own stack dumps and allocation-failure reports left out, has
# no error report (klib's KLOG_ERRORS). After each operation kmemleak is
# scanned (objects of our modules only); at the end the modules unload and
# klib's final kmemleak check runs. Every problem is listed with its round
# in $LOGDIR/failslab-report.txt; any problem fails the test.
# TIMEOUT=3000
. "$TB_TOP/kmod/tests/vm/klib.sh"
FI=/sys/kernel/debug
[ -d $FI/failslab ] || skip "no $FI/failslab (not the debug kernel: run --kernel debug)"
[ -e $FI/failslab/require-start ] || skip "no stacktrace filter (FAULT_INJECTION_STACKTRACE_FILTER)"
[ -e $FI/failslab/count ] || skip "no $FI/failslab/count (debug kernel without debug-kernel-patches/0002)"
kmod_need
kclt_need
need_paths 2
FS_MAX=${FS_MAX:-2}
FS_SCALE=${TB_TIMEOUT_SCALE:-1}	# the waits below, like klib's timeout
[[ $FS_SCALE =~ ^[1-9][0-9]*$ ]] || FS_SCALE=1
FS_ALL=${FS_ALL:-0}
FS_OPS=${FS_OPS:-a b c}
FS_ATTRS=${FS_ATTRS:-failslab fail_page_alloc}
REPORT=$LOGDIR/failslab-report.txt
: >"$REPORT"
PROBLEMS=0
# The log check of this test: klib's list without "slab", which the
# injection's own stack dumps (should_failslab, kmem_cache_alloc) and
# Mem-Info ("slab_reclaimable") are full of; slab reports proper still
# match "BUG" (SLUB: "BUG kmalloc-64 ...") or "KASAN".
FS_ERRORS=$(echo "$KLOG_ERRORS" | sed 's/|slab|/|/')

fi_disarm() {
	local a
	for a in failslab fail_page_alloc; do
		echo 0 >"$FI/$a/probability" 2>/dev/null
		echo 0 >"$FI/$a/times" 2>/dev/null
	done
}
KMOD_EXTRA_CLEANUP='fi_disarm'

# fi_arm ATTR MODULE INTERVAL: the INTERVAL-th allocation MODULE makes fails
# (the first ones of a large INTERVAL: none); counting starts at 0.
fi_arm() {
	local a=$FI/$1 base size
	read -r base size <<<"$(awk -v m="$2" '$1 == m { print $6, $2 }' /proc/modules)"
	[ -n "$base" ] && [ "$base" != 0x0000000000000000 ] ||
		die "no address of module $2 in /proc/modules"
	echo 0 >"$a/probability"
	echo 1 >"$a/times"
	echo N >"$a/task-filter"
	echo N >"$a/ignore-gfp-wait"
	[ -e "$a/ignore-gfp-highmem" ] && echo N >"$a/ignore-gfp-highmem"
	[ -e "$a/min-order" ] && echo 0 >"$a/min-order"
	echo 0 >"$a/space"
	echo 32 >"$a/stacktrace-depth"
	echo 0 >"$a/reject-start"
	echo 0 >"$a/reject-end"
	echo "$base" >"$a/require-start"
	printf '0x%x\n' $((base + size)) >"$a/require-end"
	echo 2 >"$a/verbose"
	echo "$3" >"$a/interval"
	echo 0 >"$a/count"
	echo 100 >"$a/probability"
}

# fi_done ATTR: disarms; prints "injected" or "none" and the count.
fi_done() {
	local a=$FI/$1
	echo 0 >"$a/probability"
	if [ "$(cat "$a/times")" = 0 ]; then echo "injected $(cat "$a/count")"; else echo "none $(cat "$a/count")"; fi
	echo 0 >"$a/times"
}

# A marker in the kernel log per round; rmsgs: the lines since it.
round_mark() {
	_rmark="failslab: round $1 ($$.$RANDOM)"
	echo "$_rmark" >/dev/kmsg
}
rmsgs() {
	dmesg | awk -v m="$_rmark" '{ l[NR] = $0 } index($0, m) { s = NR }
		END { for (i = s + 1; i <= NR; i++) print l[i] }'
}

# strip_injected: drops the stack dumps of the injections and of the
# allocation-failure reports they cause (warn_alloc's "page allocation
# failure" and "vmalloc error", up to the dump's "</TASK>", at most 200
# lines each) from a kernel log: their "? frame" lines name anything
# (lockdep_init_map_type matched "lockdep"). (The Mem-Info after a page
# allocation failure matches nothing of FS_ERRORS.)
#
# Also dropped: rxe's reports from its own error path after an injected
# failure inside rxe_create_qp() (Debian's 6.1: rxe_qp_do_cleanup() runs
# timer_delete_sync() on QP timers rxe had not set up yet; lockdep "trying
# to register non-static key", "ODEBUG: assert_init not available ...
# timer_list"). A report of that kind is dropped only when its own stack
# has both rxe_qp_do_cleanup and rxe_create_qp; a line says it was.
strip_injected() {
	awk '
	/FAULT_INJECTION: forcing a failure|page allocation failure: order:|: vmalloc error: size/ { skip = 200; next }
	skip && /<\/TASK>/ { skip = 0; next }
	skip { skip--; next }
	/INFO: trying to register non-static key|ODEBUG: assert_init not available .*timer_list/ {
		hold = $0; held = 1; next
	}
	held {
		hold = hold "\n" $0
		if ($0 !~ /<\/TASK>/ && held++ < 300) next
		if (hold ~ /rxe_qp_do_cleanup/ && hold ~ /rxe_create_qp/)
			print "(strip_injected: rxe error-path report after a failed rxe_create_qp() dropped)"
		else
			print hold
		held = 0; hold = ""
		next
	}
	{ print }
	END { if (held) print hold }
	'
}

# fault_site LOG MODULE: the injected allocation's site: "caller [module]
# <- allocator" from the first dump in LOG.
fault_site() {
	awk -v m="[$2]" '
	/FAULT_INJECTION: forcing a failure/ { on = 1; dump = 1; next }
	on && /<\/TASK>/ { exit }
	on && /\+0x[0-9a-f]+\/0x[0-9a-f]+/ {
		f = $0; sub(/^\[[ 0-9.]+\] +/, "", f)
		if (f ~ /^\? /) next	# not a reliable frame
		if (alloc == "" && f !~ /^(dump_stack|should_fail|__should_fail|should_failslab|slab_pre_alloc|slab_alloc|kmem_cache_alloc|__kmem_cache_alloc|kmalloc|__kmalloc|kmalloc_|kzalloc|kcalloc|krealloc|__alloc_pages|alloc_pages|__get_free_pages|get_free_pages|new_slab|allocate_slab|___slab_alloc|__slab_alloc|prepare_alloc_pages|__folio_alloc|folio_alloc|alloc_slab_page|kvmalloc|__kvmalloc|vmalloc|__vmalloc|kmalloc_large|kmalloc_order|mempool_alloc|__alloc_skb|__kmalloc_node|kmalloc_node|___kmalloc|fail_dump|kasan_|alloc_vmap_area|__get_vm_area|get_vm_area|__vmalloc|vmalloc_|dma_alloc|dma_direct_alloc)/)
			alloc = f
		if (index(f, m)) { print f (alloc != "" && alloc != f ? " <- " alloc : ""); found = 1; exit }
	}
	END {
		if (!dump) print "(no dump: a __GFP_NOWARN allocation)"
		else if (!found) print "?"
	}' "$1" | sed 's/+0x[0-9a-f]*\/0x[0-9a-f]*//g'
}

problem() {	# problem ROUND TEXT
	PROBLEMS=$((PROBLEMS + 1))
	echo "PROBLEM $1: $2" | tee -a "$REPORT"
}

# points K: the values of N to try for K allocations.
points() {
	local k=$1 i
	if [ "$k" -le 0 ]; then return; fi
	if [ "$FS_ALL" = 1 ] || [ "$k" -le "$FS_MAX" ]; then seq 1 "$k"; return; fi
	for ((i = 0; i < FS_MAX; i++)); do
		echo $((1 + i * (k - 1) / FS_MAX))
	done | uniq
}

# ---- the operations: op_X NAME -> status 0 ok, 1 failed, 124 hung (after
# the bound); their output in $LOGDIR/op-NAME.txt

FS_FIO_ARGS=(--paths="$(fio_paths 2)" --devpath=nullb0 --rw=randwrite --bs=4k
	--size=64k --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1
	--ctrl_loss_tmo=5)
op_a() {
	local rc
	FIO_TIMEOUT=60 run_fio "$1" "${FS_FIO_ARGS[@]}" && rc=0 || rc=$?
	cp "$LOGDIR/fio-$1.log" "$LOGDIR/op-$1.txt"
	case $rc in 0) return 0 ;; 124|137) return 124 ;; *) return 1 ;; esac
}

# op_b NAME: a map over 2 paths, bounded by 90 s; a successful one is
# checked (one small verified write) and unmapped.
OP_DEV=
op_b() {
	local before after d pid i rc
	before=$(ls "$KCLT_CTL/devices")
	(echo "sessname=$1$(kclt_paths 2) device_path=nullb0" >"$KCLT_CTL/map_device") \
		>"$LOGDIR/op-$1.txt" 2>&1 &
	pid=$!
	for i in $(seq 1 $((900 * FS_SCALE))); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		echo "map_device did not return within $((90 * FS_SCALE)) s" >>"$LOGDIR/op-$1.txt"
		return 124
	fi
	wait $pid && rc=0 || rc=$?
	after=$(ls "$KCLT_CTL/devices")
	OP_DEV=
	for d in $after; do echo "$before" | grep -qx "$d" || OP_DEV=$d; done
	if [ $rc != 0 ]; then
		[ -z "$OP_DEV" ] || { echo "map failed but left device $OP_DEV" >>"$LOGDIR/op-$1.txt"; return 2; }
		[ -e "/sys/kernel/ibtrs-client/$1" ] &&
			{ echo "map failed but left session $1 in /sys/kernel/ibtrs-client" >>"$LOGDIR/op-$1.txt"; return 2; }
		return 1
	fi
	[ -n "$OP_DEV" ] || { echo "map succeeded without a new device" >>"$LOGDIR/op-$1.txt"; return 2; }
	for i in $(seq 1 50); do [ -b "/dev/$OP_DEV" ] && break; sleep 0.1; done
	cat "$KCLT_CTL/devices/$OP_DEV/paths" >>"$LOGDIR/op-$1.txt" 2>&1
	rc=0
	timeout -k 5 60 fio --name="$1" --filename="/dev/$OP_DEV" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --size=64k --iodepth=4 --verify=crc32c \
		--do_verify=1 --verify_fatal=1 >>"$LOGDIR/op-$1.txt" 2>&1 || rc=3
	( echo normal >"$KCLT_CTL/devices/$OP_DEV/unmap_device" ) >>"$LOGDIR/op-$1.txt" 2>&1 &
	pid=$!
	for i in $(seq 1 $((300 * FS_SCALE))); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		echo "unmap of $OP_DEV did not return within $((30 * FS_SCALE)) s" >>"$LOGDIR/op-$1.txt"
		return 124
	fi
	wait $pid || { echo "unmap of $OP_DEV failed" >>"$LOGDIR/op-$1.txt"; return 2; }
	[ $rc = 0 ] || { echo "IO on the new mapping failed" >>"$LOGDIR/op-$1.txt"; return 1; }
	return 0
}

# op_c NAME: a verified job on the mapped $IO_DEV, bounded by 90 s.
op_c() {
	local rc
	timeout -k 5 90 fio --name="$1" --filename="/dev/$IO_DEV" --ioengine=libaio --direct=1 \
		--rw=randrw --bssplit=4k/50:64k/50 --size=1m --iodepth=16 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 >"$LOGDIR/op-$1.txt" 2>&1 && rc=0 || rc=$?
	case $rc in 0) return 0 ;; 124|137) return 124 ;; *) return 1 ;; esac
}

outcome() {	# status -> word
	case $1 in 0) echo ok ;; 1) echo failed ;; 124) echo HUNG ;; *) echo "BROKEN($1)" ;; esac
}

# run_target OP ATTR MODULE: count, then inject at the chosen N.
run_target() {
	local op=$1 attr=$2 mod=$3 k st inj n site r rc out tag ab retry
	tag="$op/$attr/$mod"
	ab=${attr/failslab/s}
	ab=${ab/fail_page_alloc/p}
	round_mark "$tag count"
	fi_arm "$attr" "$mod" 1000000000
	"op_$op" "c$op${ab}0" && rc=0 || rc=$?
	read -r st k <<<"$(fi_done "$attr")"
	log "$tag: $k allocations in one operation (it: $(outcome $rc))"
	[ $rc = 0 ] || problem "$tag count" "the operation failed without injection ($(outcome $rc)): $(tail -3 "$LOGDIR/op-c$op${ab}0.txt" | tr '\n' ' ')"
	echo "$tag: K=$k" >>"$REPORT"
	for n in $(points "$k"); do
		r="$tag N=$n"
		round_mark "$r"
		fi_arm "$attr" "$mod" "$n"
		"op_$op" "f$op${ab}$n" && rc=0 || rc=$?
		read -r inj st <<<"$(fi_done "$attr")"
		rmsgs >"$LOGDIR/round.log"
		if [ "$inj" = injected ]; then site=$(fault_site "$LOGDIR/round.log" "$mod"); else site="(none: fewer allocations this time)"; fi
		out=$(outcome $rc)
		# the same operation without injection, when the injected one
		# did not succeed (a success shows the state sound already)
		if [ $rc != 0 ]; then
			"op_$op" "r$op${ab}$n" && rc=0 || rc=$?
			retry=$(outcome $rc)
			rmsgs >"$LOGDIR/round.log"
		else
			retry=-
		fi
		cp "$LOGDIR/round.log" "$LOGDIR/round-${op}-${attr}-${mod}-$n.log"
		printf '%-34s %-9s -> %-8s retry %-6s site %s\n' "$r" "$inj" "$out" "$retry" "$site" | tee -a "$REPORT"
		case $out in
		HUNG|BROKEN*) problem "$r" "injection at $site: operation $out: $(tail -4 "$LOGDIR/op-f$op${ab}$n.txt" | tr '\n' ' ')" ;;
		esac
		[ $rc = 0 ] || problem "$r" "after the injection at $site the operation without injection $(outcome $rc): $(tail -4 "$LOGDIR/op-r$op${ab}$n.txt" | tr '\n' ' ')"
		if strip_injected <"$LOGDIR/round.log" | grep -nE "$FS_ERRORS" >"$LOGDIR/round-errors.txt"; then
			problem "$r" "kernel log errors after the injection at $site (round-${op}-${attr}-${mod}-$n.log):"
			head -5 "$LOGDIR/round-errors.txt" | sed 's/^/    /' | tee -a "$REPORT"
		fi
	done
}

# srv_sessions_gone WHAT: within 20 s the kernel server has no session
# left (everything was closed or unmapped).
srv_sessions_gone() {
	local i f=/sys/kernel/ibtrs-server/sessions
	for i in $(seq 1 200); do
		grep -q '^sess ' "$f" 2>/dev/null || return 0
		sleep 0.1
	done
	problem "$1" "the kernel server still has sessions 20 s after the operations: $(tr '\n' ' ' <"$f")"
}

# leak_check WHAT: kmemleak now (modules still loaded), then cleared.
leak_check() {
	if ! kml_check >"$LOGDIR/kml-$1.txt"; then
		problem "$1" "kmemleak: objects of our modules unreferenced (kml-$1.txt, kmemleak-$1.txt):"
		grep -A12 '^unreferenced object' "$LOGDIR/kmemleak.txt" | head -40 | sed 's/^/    /' | tee -a "$REPORT"
		cp "$LOGDIR/kmemleak.txt" "$LOGDIR/kmemleak-$1.txt"
	fi
	[ -w "$KMEMLEAK" ] && echo clear >"$KMEMLEAK"
}

setup_nullb
kmod_load
kclt_load reconnect_min_ms=500 reconnect_max_ms=2000 ctrl_loss_tmo_ms=5000
log "ops '$FS_OPS', attrs '$FS_ATTRS', at most $FS_MAX points per target (FS_ALL=$FS_ALL)"

for op in $FS_OPS; do
	case $op in
	a) mods="ibtrs_server ibnbd_server" ;;
	b) mods="ibtrs_client ibnbd_client" ;;
	c)
		mods="ibtrs_client ibnbd_client ibtrs_server ibnbd_server"
		kclt_map "sessname=fsio$(kclt_paths 2) device_path=nullb0"
		IO_DEV=$KCLT_DEV
		;;
	*) die "unknown operation '$op' in FS_OPS" ;;
	esac
	for attr in $FS_ATTRS; do
		for m in $mods; do run_target "$op" "$attr" "$m"; done
	done
	[ "$op" = c ] && kclt_unmap "$IO_DEV"
	srv_sessions_gone "op-$op"
	leak_check "op-$op"
done

# The modules unload; the whole log (the injections' dumps left out) clean.
kclt_unload
kmod_unload
kmsgs | strip_injected >"$KLOG.stripped"
if grep -nE "$FS_ERRORS" "$KLOG.stripped" >"$LOGDIR/final-errors.txt"; then
	problem final "kernel log errors (dmesg.log.stripped):"
	head -10 "$LOGDIR/final-errors.txt" | sed 's/^/    /' | tee -a "$REPORT"
fi
echo "--- report ($REPORT)"
cat "$REPORT"
[ $PROBLEMS = 0 ] || die "$PROBLEMS problem(s) (above)"
log "PASS"
