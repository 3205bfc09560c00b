# IBTRS/IBNBD - top-level build.
#   make              build everything that exists (library, daemon, fio engine,
#                     the kernel modules when the guest kernel's headers are installed)
#   make deps         install the Debian packages (idempotent; root)
#   make check        deps + build + host unit tests + VM integration tests
#   make check-host   host unit tests only (no RDMA, no VM)
#   make check-vm     VM integration tests only (VM_TESTS='glob ...' to pick)
#   make check-debug  the kernel-module VM tests on the debug kernel (KASAN,
#                     lockdep, kmemleak; built once, cached; not in `check`)
#   make fuzz         the libFuzzer harnesses of tests/fuzz/, FUZZ_SECONDS (60)
#                     each (FUZZ_HARNESSES='rx ibnbd' to pick); `check` runs
#                     them for 60 s in all
#   make experiments  deps + build + the benchmark suite in the testbed
#   make plots        regenerate plots/ from results/summary.csv
#   make install      install the fio engine, the daemon, the ibnbd tool
#                     (/usr/local/sbin) and the kernel modules when built
SHELL := /bin/bash
COMPONENTS := $(foreach d,trs server fio-engine kmod/cli,$(if $(wildcard $(d)/Makefile),$(d)))

# The testbed's instruction profiler (QEMU plugin); skipped with a warning
# when QEMU's plugin header cannot be fetched.
PROFILER := $(if $(wildcard experiments/profiler/Makefile),profiler)

# Kernel modules (kmod/): built against the guest kernel's headers
# (experiments/testbed/kver.sh; KDIR= overrides), skipped with a note
# without them.
KMOD_KDIR = $(or $(KDIR),/lib/modules/$(shell experiments/testbed/kver.sh 2>/dev/null)/build)

.PHONY: all deps build check check-host check-vm check-debug fuzz experiments plots install clean $(COMPONENTS) $(PROFILER) kmod

all: build

build: $(COMPONENTS) $(PROFILER) kmod

kmod:
	@if [ -d "$(KMOD_KDIR)" ]; then $(MAKE) -C kmod KDIR=$(KMOD_KDIR); \
	else echo "kmod: no kernel headers at $(KMOD_KDIR) (make deps): modules not built"; fi

profiler:
	$(MAKE) -C experiments/profiler

trs:
	$(MAKE) -C trs
server fio-engine: trs
	$(MAKE) -C $@
kmod/cli:
	$(MAKE) -C $@

deps:
	@experiments/testbed/deps.sh

check: deps
	@tests/check

check-host: build
	@tests/run-host

check-vm: build
	@tests/run-vm $(VM_TESTS)

check-debug:
	@tests/check-debug

FUZZ_SECONDS ?= 60
fuzz:
	@tests/fuzz/run.sh --seconds $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

experiments: deps build
	@experiments/run-all

plots:
	@$(MAKE) -C plots

install: build
	@for d in $(COMPONENTS); do grep -q '^install:' $$d/Makefile || continue; \
		$(MAKE) -C $$d install || exit 1; done
	@if ls build/kmod/*.ko >/dev/null 2>&1; then $(MAKE) -C kmod install; \
	else echo "kmod: modules not built: not installed"; fi

clean:
	@for d in $(COMPONENTS); do $(MAKE) -C $$d clean; done
	rm -rf build
