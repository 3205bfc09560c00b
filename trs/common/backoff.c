// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * backoff.c - reconnect delay with exponential growth and random jitter.
 *
 * Only 32-bit division: a 32-bit kernel has no __umoddi3/__udivdi3, and
 * every operand here fits in 32 bits once the base is capped.
 */
#include "trs_common.h"

__u32 trs_backoff_ms(__u32 attempt, __u32 min_ms, __u32 max_ms, __u32 rnd)
{
	__u32 base = min_ms ? min_ms : 1;
	__u32 jitter_max, i;

	if (max_ms < base)
		max_ms = base;
	/* base doubles up to max_ms; the test keeps the shift from overflowing */
	for (i = 0; i < attempt && base < max_ms; i++)
		base = base > max_ms / 2 ? max_ms : base << 1;
	if (base > max_ms)
		base = max_ms;
	/* uniform in [0, base/2]; saturate instead of wrapping at 2^32 */
	jitter_max = base / 2;
	if (jitter_max == 0xffffffffU)
		return 0xffffffffU;
	jitter_max = rnd % (jitter_max + 1);
	return base > 0xffffffffU - jitter_max ? 0xffffffffU : base + jitter_max;
}
