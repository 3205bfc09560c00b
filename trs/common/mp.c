// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mp.c - multipath path selection. The caller describes its paths in an
 * array; this file only decides.
 */
#include "trs_common.h"

static bool trs_mp_ok(const struct trs_mp_path *paths, int i, __u64 skip)
{
	return paths[i].usable && !(i < 64 && (skip >> i) & 1);
}

static int trs_mp_rr(const struct trs_mp_path *paths, int n, __u32 *cursor,
		     __u64 skip)
{
	int k;

	for (k = 1; k <= n; k++) {
		int i = (int)((*cursor + (__u32)k) % (__u32)n);

		if (trs_mp_ok(paths, i, skip)) {
			*cursor = (__u32)i;
			return i;
		}
	}
	return -ENOTCONN;
}

/* Smallest key wins; ties go to the path after the cursor (spreads load). */
static int trs_mp_min(const struct trs_mp_path *paths, int n, __u32 *cursor,
		      __u64 skip, bool latency)
{
	int best = -ENOTCONN, k;

	for (k = 1; k <= n; k++) {
		int i = (int)((*cursor + (__u32)k) % (__u32)n);

		if (!trs_mp_ok(paths, i, skip))
			continue;
		if (best < 0) {
			best = i;
			continue;
		}
		if (latency) {
			if (paths[i].latency_us < paths[best].latency_us ||
			    (paths[i].latency_us == paths[best].latency_us &&
			     paths[i].inflight < paths[best].inflight))
				best = i;
		} else if (paths[i].inflight < paths[best].inflight) {
			best = i;
		}
	}
	if (best >= 0)
		*cursor = (__u32)best;
	return best;
}

int trs_mp_select(int policy, const struct trs_mp_path *paths, int n,
		  __u32 *rr_cursor, __u64 skip)
{
	if (n <= 0 || n > TRS_MP_MAX_PATHS)
		return -ENOTCONN;
	switch (policy) {
	case TRS_MP_ROUND_ROBIN:
		return trs_mp_rr(paths, n, rr_cursor, skip);
	case TRS_MP_MIN_INFLIGHT:
		return trs_mp_min(paths, n, rr_cursor, skip, false);
	case TRS_MP_MIN_LATENCY:
		return trs_mp_min(paths, n, rr_cursor, skip, true);
	}
	return -EINVAL;
}
