#!/usr/bin/env bash
# report-e02 - E02's report on a synthetic run: each system's secure default
# and fully secure mode over its own unsafe mode, side by side, with the
# range from the runs' extremes; the per-system tables take the fully secure
# mode as their reference when the run has it, else the secure default; a
# system without its unsafe mode gets no side-by-side row.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=$tmp/E02-mr-inval/run1
mkdir -p "$run/icount/raw"
echo '{"git": "abc1234"}' >"$run/meta.json"
cat >"$run/icount/raw/systems.txt" <<'EOT'
ibnbd1_frwr_remote ibnbd 1 - frwr remote
ibnbd1r_frwr_remote ibnbd 1 - frwr remote+rekey
ibnbd1_global_none ibnbd 1 - global none
ibtrs1_mw_remote ibtrs-fio 1 - mw remote
ibtrs1_global_none ibtrs-fio 1 - global none
ibtrsk1_mw_remote ibtrs-fio/kernel-srv 1 - mw remote
EOT
row() {	# SYSTEM MEDIAN MIN MAX
	echo "$1,randread,4k,1,3,$2,$3,$4,$(($2 * 2)),$(($3 * 2)),$(($4 * 2))"
}
{
	echo "system,workload,bs,iodepth,runs,sw_instr_per_io_median,sw_instr_per_io_min,sw_instr_per_io_max,instr_per_io_median,instr_per_io_min,instr_per_io_max"
	row ibnbd1_frwr_remote 10100 10090 10110
	row ibnbd1r_frwr_remote 10400 10300 10500
	row ibnbd1_global_none 10000 9900 10100
	row ibtrs1_mw_remote 20600 20600 20600
	row ibtrs1_global_none 20000 20000 20000
	row ibtrsk1_mw_remote 30000 30000 30000
} >"$run/icount/aggregate.csv"

fails=0
ok() { echo "PASS: host/report-e02: $1"; }
bad() { echo "FAIL: host/report-e02: $1"; fails=$((fails + 1)); }
/usr/bin/python3 "$top/experiments/lib/report_e02.py" "$run" >"$tmp/out" 2>"$tmp/err" ||
	{ bad "report_e02.py failed: $(tail -3 "$tmp/err")"; exit 1; }
[ -s "$run/report.md" ] && ok "report.md written" || bad "no report.md"
have() {	# WHAT LINE
	if grep -qF -- "$2" "$tmp/out"; then ok "$1"; else bad "$1: no line '$2'"; fi
}
# ibnbd: 10100/10000 = 1.010, range 10090/10100 .. 10110/9900; rekey
# 10400/10000 = 1.040, 10300/10100 .. 10500/9900
have "ibnbd default and fully secure over unsafe" \
	"| randread 4k QD1 | ibnbd | frwr/remote | frwr/remote+rekey | global/none | 1.010 (0.999..1.021) | 1.040 (1.020..1.061) |"
have "ibtrs-fio without a rekey cell: default only" \
	"| randread 4k QD1 | ibtrs-fio | mw/remote |  | global/none | 1.030 (1.030..1.030) |  |"
if grep -q "| ibtrs-fio/kernel-srv |" <(sed -n '/side by side/,/^## Software/p' "$tmp/out"); then
	bad "a system without its unsafe mode got a side-by-side row"
else
	ok "no side-by-side row without the unsafe mode"
fi
have "ibnbd's table refers to its fully secure mode" "### ibnbd (reference: frwr/remote+rekey; secure default frwr/remote)"
# 10400/10100 = 1.030 (10300/10110 .. 10500/10090)
have "the static default against the reference" \
	"| randread 4k QD1 | frwr/remote | 10100 (10090..10110) | 1.030 (1.019..1.041) |"
have "ibtrs-fio's table falls back to its default" "### ibtrs-fio (reference: mw/remote; secure default mw/remote)"
# total instructions are twice the software ones here: same ratios
have "total instructions table" "## Total instructions per IO (NIC included)"
[ $fails -eq 0 ]
