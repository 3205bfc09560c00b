// SPDX-License-Identifier: GPL-2.0
/*
 * callsplit.c - a window of known callers for the caller-attribution test
 * (tests/host/profiler-vm.sh).
 *
 * Usage: callsplit NIC_ITERS SW_ITERS LEN CONF_CMD MAPS_CMD
 *
 * Runs CONF_CMD with "%d" replaced by its pid (tbnic --pid: the NIC
 * ranges are this process's mapping of libcallsplit-nic.so), marks START,
 * calls nic_entry() (in the "NIC" library), which calls helper_spin(
 * NIC_ITERS) and memcpy(LEN); then sw_entry() (here, not NIC), which calls
 * helper_spin(SW_ITERS) and memcpy(LEN); marks STOP and runs MAPS_CMD.
 * helper_spin runs 4 instructions per iteration in one TB, so the window
 * holds 4 x NIC_ITERS NIC-called and 4 x SW_ITERS other instructions of
 * helper_spin, and two equal memcpy calls, one of each kind. Prints
 *   callsplit: nic_iters=<n> sw_iters=<n> len=<n> insns_per_iter=4
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbmark.h"

uint64_t nic_entry(uint64_t (*helper)(uint64_t), uint64_t n, void *dst, const void *src,
		   size_t len);

__attribute__((noinline)) uint64_t helper_spin(uint64_t n)
{
	uint64_t acc = 0;

	__asm__ __volatile__(
		"1:\n\t"
		"add %%rcx, %0\n\t"
		"xor $0x5a, %0\n\t"
		"dec %%rcx\n\t"
		"jnz 1b\n\t"
		: "+r"(acc), "+c"(n) : : "cc");
	return acc;
}

__attribute__((noinline)) uint64_t sw_entry(uint64_t (*helper)(uint64_t), uint64_t n, void *dst,
					    const void *src, size_t len)
{
	uint64_t r = helper(n);

	memcpy(dst, src, len);
	return r + ((unsigned char *)dst)[len - 1];
}

int main(int argc, char **argv)
{
	uint64_t ni, si, r;
	size_t len;
	char cmd[4096];
	char *src, *dst;

	if (argc != 6 || !(ni = strtoull(argv[1], NULL, 0)) || !(si = strtoull(argv[2], NULL, 0)) ||
	    !(len = strtoull(argv[3], NULL, 0))) {
		fprintf(stderr, "usage: callsplit NIC_ITERS SW_ITERS LEN CONF_CMD MAPS_CMD\n");
		return 2;
	}
	src = malloc(len);
	dst = malloc(len);
	if (!src || !dst)
		return 1;
	memset(src, 0x5a, len);
	memset(dst, 0, len);
	/* warm up: lazy binding, page faults of dst */
	nic_entry(helper_spin, 1, dst, src, len);
	sw_entry(helper_spin, 1, dst, src, len);
	snprintf(cmd, sizeof(cmd), argv[4], (int)getpid());
	if (system(cmd) != 0) {
		fprintf(stderr, "callsplit: '%s' failed\n", cmd);
		return 1;
	}
	tbmark_start();
	r = nic_entry(helper_spin, ni, dst, src, len);
	r += sw_entry(helper_spin, si, dst, src, len);
	tbmark_stop();
	printf("callsplit: nic_iters=%llu sw_iters=%llu len=%zu insns_per_iter=4 r=%llu\n",
	       (unsigned long long)ni, (unsigned long long)si, len, (unsigned long long)r);
	fflush(stdout);
	if (system(argv[5]) != 0) {
		fprintf(stderr, "callsplit: '%s' failed\n", argv[5]);
		return 1;
	}
	return 0;
}
