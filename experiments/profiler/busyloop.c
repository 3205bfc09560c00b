// SPDX-License-Identifier: GPL-2.0
/*
 * busyloop.c - a measurement window of known content for the profiler test.
 *
 * Usage: busyloop ITERATIONS [COMMAND]
 *
 * Reads CLOCK_MONOTONIC, marks START, runs spin(): ITERATIONS passes of a
 * 4-instruction loop, marks STOP, reads the clock again, then runs COMMAND
 * (if given) with system() while this process still exists, so that a maps
 * dump taken by COMMAND sees it. Prints
 *   busyloop: iterations=<n> insns_per_iter=4 clock_ns=<delta>
 * Under icount with shift=0 one guest nanosecond is one instruction, so the
 * profiler's window total must equal clock_ns up to the clock reads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tbmark.h"

#define INSNS_PER_ITER 4

/*
 * The loop body is one translation block of exactly four instructions, so
 * the profiler must attribute INSNS_PER_ITER * n to this function.
 */
__attribute__((noinline)) static uint64_t spin(uint64_t n)
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t n, t0, t1, acc;

	if (argc < 2 || (n = strtoull(argv[1], NULL, 0)) == 0) {
		fprintf(stderr, "usage: busyloop ITERATIONS [COMMAND]\n");
		return 2;
	}
	t0 = now_ns();
	tbmark_start();
	acc = spin(n);
	tbmark_stop();
	t1 = now_ns();
	printf("busyloop: iterations=%llu insns_per_iter=%d clock_ns=%llu acc=%llu\n",
	       (unsigned long long)n, INSNS_PER_ITER,
	       (unsigned long long)(t1 - t0), (unsigned long long)acc);
	fflush(stdout);
	if (argc > 2 && system(argv[2]) != 0) {
		fprintf(stderr, "busyloop: '%s' failed\n", argv[2]);
		return 1;
	}
	return 0;
}
