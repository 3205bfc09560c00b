#!/bin/bash
# check-load.sh - host tests of the fio "ibtrs" engine that need no RDMA:
# loading by bare name and by external: path, the option table, and the
# error messages of the paths that fail before any IO (missing/bad options,
# server unreachable). Prints PASS:/FAIL:/SKIP: lines (docs/CONVENTIONS.md).
set -u
SO=$(readlink -f "${1:-build/ibtrs.so}")
DIR=$(dirname "$SO")
FIO=${FIO:-fio}
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; failed=1; }

# 1. Bare name: fio dlopen()s "ibtrs", found through LD_LIBRARY_PATH.
if LD_LIBRARY_PATH=$DIR $FIO --enghelp=ibtrs >"$out" 2>&1 && grep -q '^paths' "$out"; then
	pass bare_name_loads
else
	fail bare_name_loads "$(head -3 "$out" | tr '\n' ' ')"
fi

# 2. Without the search path the bare name must not resolve (proves 1 used it),
#    unless `make install` put it on the system path.
if ! $FIO --enghelp=ibtrs >"$out" 2>&1; then
	pass bare_name_needs_path
elif [ -e /usr/lib/$(gcc -print-multiarch)/ibtrs ]; then
	echo "SKIP: bare_name_needs_path: engine installed system-wide"
else
	fail bare_name_needs_path "loaded without LD_LIBRARY_PATH"
fi

# 3. Every documented option is in the engine's table.
LD_LIBRARY_PATH=$DIR $FIO --enghelp=ibtrs >"$out" 2>&1
missing=""
for o in paths port devpath access_mode sessname mp_policy cons_per_path \
	 queue_depth ctrl_loss_tmo mr_mode inval_mode poll hb_interval \
	 connect_timeout fua; do
	grep -q "^$o " "$out" || missing="$missing $o"
done
[ -z "$missing" ] && pass options_listed || fail options_listed "missing:$missing"

run_fio() {	# args...; output in $out, status returned
	timeout 60 $FIO --name=t --ioengine=external:$SO --size=1m --bs=4k "$@" >"$out" 2>&1
}

# 4. external:<path> loads and reaches our init. Not "ibtrs" anywhere: fio's
#    own load failure names the path ("engine external:/x/ibtrs.so not
#    loadable"). The job line carries the loaded engine's .name, the
#    "ibtrs: " lines and fio's "func=ibtrs connect" come from our init.
run_fio --rw=read --paths=192.0.2.1 --devpath=nullb0 --connect_timeout=500
if grep -q 'ioengine=ibtrs, ' "$out" && grep -q '^ibtrs: ' "$out" &&
   grep -q 'func=ibtrs connect' "$out" &&
   ! grep -qE 'not loadable|failed parsing ioengine|not found' "$out"; then
	pass external_path_loads
else
	fail external_path_loads "$(head -3 "$out" | tr '\n' ' ')"
fi

# 5. Unreachable server (the host has no RDMA at all): clear error, fio fails.
if ! run_fio --rw=read --paths=192.0.2.1 --devpath=nullb0 --connect_timeout=500 &&
   grep -q 'cannot connect to the server at 192.0.2.1 port 1234' "$out"; then
	pass unreachable_clear_error
else
	fail unreachable_clear_error "$(grep -i ibtrs "$out" | head -2 | tr '\n' ' ')"
fi

# 6. paths= is required.
if ! run_fio --rw=read --devpath=nullb0 && grep -q "'paths' option" "$out"; then
	pass missing_paths_error
else
	fail missing_paths_error "$(grep -i ibtrs "$out" | head -2 | tr '\n' ' ')"
fi

# 7. Bad access mode.
if ! run_fio --rw=read --paths=192.0.2.1 --access_mode=bogus && grep -q 'access_mode must be' "$out"; then
	pass bad_access_mode_error
else
	fail bad_access_mode_error "$(grep -i ibtrs "$out" | head -2 | tr '\n' ' ')"
fi

# 8. Too many paths.
if ! run_fio --rw=read --paths=1.1.1.1,2,3,4,5,6,7,8,9 --devpath=x && grep -q 'bad paths' "$out"; then
	pass too_many_paths_error
else
	fail too_many_paths_error "$(grep -i ibtrs "$out" | head -2 | tr '\n' ' ')"
fi

# 9. Without size= the parent queries the size in a child; failure is clear.
if ! timeout 60 $FIO --name=t --ioengine=external:$SO --rw=read --paths=192.0.2.1 \
	--devpath=nullb0 --connect_timeout=500 >"$out" 2>&1 &&
   grep -q 'cannot find the device size' "$out"; then
	pass size_query_error
else
	fail size_query_error "$(grep -i ibtrs "$out" | head -2 | tr '\n' ' ')"
fi

# 10. make install into a DESTDIR lays out the bare-name symlink.
d=$(mktemp -d)
if make -s -C "$(dirname "$0")/../.." install DESTDIR="$d" >/dev/null 2>&1 &&
   [ -L "$d/usr/lib/$(gcc -print-multiarch)/ibtrs" ] &&
   [ -x "$d/usr/lib/$(gcc -print-multiarch)/fio/ibtrs.so" ] &&
   LD_LIBRARY_PATH="$d/usr/lib/$(gcc -print-multiarch)" $FIO --enghelp=ibtrs 2>&1 | grep -q '^devpath'; then
	pass install_layout
else
	fail install_layout "see make install DESTDIR=$d"
fi
rm -rf "$d"

exit $failed
