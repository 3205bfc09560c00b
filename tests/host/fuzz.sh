#!/usr/bin/env bash
# fuzz - the libFuzzer harnesses of tests/fuzz/ in their bounded form: the
# seed corpus is gen_seeds' output, every regression input passes, and each
# harness fuzzes from its seeds for an equal share of FUZZ_CHECK_SECONDS
# (130) in all (tests/fuzz/README.md). One PASS/FAIL/SKIP line per harness.
exec "$(dirname "$0")/../fuzz/run.sh" --check
