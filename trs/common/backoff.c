// SPDX-License-Identifier: GPL-2.0-or-later
/* backoff.c - reconnect delay with exponential growth and random jitter. */
#include "trs_common.h"

__u32 trs_backoff_ms(__u32 attempt, __u32 min_ms, __u32 max_ms, __u32 rnd)
{
	__u64 base = min_ms ? min_ms : 1;
	__u32 i;

	if (max_ms < base)
		max_ms = (__u32)base;
	for (i = 0; i < attempt && base < max_ms; i++)
		base <<= 1;
	if (base > max_ms)
		base = max_ms;
	/* uniform in [0, base/2] */
	return (__u32)(base + (__u64)rnd % (base / 2 + 1));
}
