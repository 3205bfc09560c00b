#!/usr/bin/env bash
# fuzz - the libFuzzer harnesses of tests/fuzz/ in their bounded form: the
# seed corpus is gen_seeds' output, every regression input passes, and each
# harness fuzzes from its seeds for its share of FUZZ_CHECK_SECONDS
# (60) in all, by weight (tests/fuzz/budget.sh). One line per harness.
exec "$(dirname "$0")/../fuzz/run.sh" --check
