// SPDX-License-Identifier: GPL-2.0-or-later
/* test_backoff.c - reconnect backoff: edges the library relies on. */
#include "trs_common.h"
#include "unit.h"

/* Every jitter value 0..base/2 is reachable, nothing beyond. */
static int backoff_jitter_range(void)
{
	__u32 r, seen_max = 0;

	for (r = 0; r < 2000; r++) {
		__u32 d = trs_backoff_ms(2, 100, 5000, r);

		UCHECK(d >= 400 && d <= 600);
		UCHECK_EQ(d, 400 + r % 201);
		if (d > seen_max)
			seen_max = d;
	}
	UCHECK_EQ(seen_max, 600);
	return 0;
}

/* min 0 means 1 ms; max below min is raised to min. */
static int backoff_degenerate_limits(void)
{
	UCHECK_EQ(trs_backoff_ms(0, 0, 0, 0), 1);
	UCHECK_EQ(trs_backoff_ms(5, 0, 0, 7), 1);
	UCHECK_EQ(trs_backoff_ms(0, 300, 100, 0), 300);
	UCHECK_EQ(trs_backoff_ms(9, 300, 100, 0), 300);
	return 0;
}

/* Limits near 2^32: no overflow of the doubling or of base + jitter. */
static int backoff_no_wrap(void)
{
	UCHECK_EQ(trs_backoff_ms(40, 1, 0xffffffffU, 0), 0xffffffffU);
	UCHECK_EQ(trs_backoff_ms(40, 1, 0xffffffffU, 0xffffffffU), 0xffffffffU);
	UCHECK_EQ(trs_backoff_ms(1, 0x80000000U, 0xffffffffU, 0), 0xffffffffU);
	UCHECK_EQ(trs_backoff_ms(31, 1, 0xfffffffeU, 0), 0x80000000U);
	UCHECK_EQ(trs_backoff_ms(32, 1, 0xfffffffeU, 0), 0xfffffffeU);
	UCHECK_EQ(trs_backoff_ms(0, 0xc0000000U, 0xc0000000U, 0x60000000U),
		  0xffffffffU);
	return 0;
}

int main(void)
{
	URUN(backoff_jitter_range);
	URUN(backoff_degenerate_limits);
	URUN(backoff_no_wrap);
	return unit_failed ? 1 : 0;
}
