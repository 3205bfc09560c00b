// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mp.c - multipath path selection. The caller describes its paths in an
 * array; this file only decides.
 *
 * Not thread-safe, on purpose: the userspace library is single-threaded
 * (one event loop per session), so the caller passes plain counters and one
 * round-robin cursor. The kernel module will call the same functions from
 * any CPU and must wrap them: per-CPU round-robin cursors (as RTRS keeps
 * them), inflight counts read from per-CPU or atomic counters, and the
 * latency average updated under the path's lock or with a cmpxchg loop. A
 * racy read of the inputs only makes one choice slightly worse.
 *
 * min-latency keeps an exponentially weighted moving average of each
 * path's IO completion latency (post to completion, measured by the
 * caller) in fixed point, integer only (this file is built into kernel
 * modules too).
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

/* Fewest IOs in flight wins; ties go to the path after the cursor. */
static int trs_mp_min_inflight(const struct trs_mp_path *paths, int n,
			       __u32 *cursor, __u64 skip)
{
	int best = -ENOTCONN, k;

	for (k = 1; k <= n; k++) {
		int i = (int)((*cursor + (__u32)k) % (__u32)n);

		if (!trs_mp_ok(paths, i, skip))
			continue;
		if (best < 0 || paths[i].inflight < paths[best].inflight)
			best = i;
	}
	if (best >= 0)
		*cursor = (__u32)best;
	return best;
}

/*
 * Expected wait of one more IO on the path: average latency times the IOs
 * that would be ahead of it and itself. A path with no sample yet scores 0,
 * so it is tried (and measured) first.
 */
static __u64 trs_mp_lat_score(const struct trs_mp_path *p)
{
	return p->lat_ewma * ((__u64)p->inflight + 1);
}

/*
 * Smallest score wins, but every path within TRS_MP_LAT_BAND of the
 * smallest counts as tied and the ties take turns from the cursor: equal
 * paths share the load even at queue depth 1, where inflight is always 0
 * and noise alone would otherwise decide.
 */
static int trs_mp_min_latency(const struct trs_mp_path *paths, int n,
			      __u32 *cursor, __u64 skip)
{
	__u64 min = 0, limit;
	bool found = false;
	int i, k;

	for (i = 0; i < n; i++) {
		__u64 s;

		if (!trs_mp_ok(paths, i, skip))
			continue;
		s = trs_mp_lat_score(&paths[i]);
		if (!found || s < min)
			min = s;
		found = true;
	}
	if (!found)
		return -ENOTCONN;
	limit = min + (min >> TRS_MP_LAT_BAND_SHIFT);
	for (k = 1; k <= n; k++) {
		i = (int)((*cursor + (__u32)k) % (__u32)n);
		if (trs_mp_ok(paths, i, skip) &&
		    trs_mp_lat_score(&paths[i]) <= limit) {
			*cursor = (__u32)i;
			return i;
		}
	}
	return -ENOTCONN;	/* not reached */
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
		return trs_mp_min_inflight(paths, n, rr_cursor, skip);
	case TRS_MP_MIN_LATENCY:
		return trs_mp_min_latency(paths, n, rr_cursor, skip);
	}
	return -EINVAL;
}

/* Samples above ~71 minutes are clamped; keeps the fixed point in range. */
#define TRS_MP_LAT_MAX_US	(1ULL << 32)

void trs_mp_lat_sample(__u64 *ewma, __u64 sample_us)
{
	__u64 v;

	if (sample_us > TRS_MP_LAT_MAX_US)
		sample_us = TRS_MP_LAT_MAX_US;
	v = sample_us << TRS_MP_LAT_FRAC;
	if (!*ewma)
		*ewma = v;		/* the first sample is the average */
	else
		*ewma = *ewma - (*ewma >> TRS_MP_LAT_WEIGHT) +
			(v >> TRS_MP_LAT_WEIGHT);
	if (!*ewma)
		*ewma = 1;		/* 0 means "not measured" */
}

void trs_mp_lat_age(__u64 *ewma)
{
	if (*ewma > 1)
		*ewma -= (*ewma >> TRS_MP_LAT_AGE_SHIFT) ? : 1;
}
