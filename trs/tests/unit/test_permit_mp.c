// SPDX-License-Identifier: GPL-2.0-or-later
/* test_permit_mp.c - permit allocator, path selection, reconnect backoff. */
#include "trs_common.h"
#include "unit.h"

static int permit_exhaustion(void)
{
	__u64 map[TRS_BITMAP_WORDS(130)];
	struct trs_permit_pool p;
	int i, seen[130] = { 0 };

	UCHECK_EQ(trs_permit_pool_init(&p, map, TRS_BITMAP_WORDS(130), 130), 0);
	for (i = 0; i < 130; i++) {
		int id = trs_permit_get(&p);

		UCHECK(id >= 0 && id < 130);
		UCHECK(!seen[id]);
		seen[id] = 1;
	}
	UCHECK_EQ(trs_permit_get(&p), -EAGAIN);
	UCHECK_EQ(p.used, 130);
	return 0;
}

static int permit_double_free(void)
{
	__u64 map[1];
	struct trs_permit_pool p;
	int id;

	UCHECK_EQ(trs_permit_pool_init(&p, map, 1, 4), 0);
	id = trs_permit_get(&p);
	UCHECK(id >= 0);
	UCHECK_EQ(trs_permit_put(&p, id), 0);
	UCHECK_EQ(trs_permit_put(&p, id), -EALREADY);
	UCHECK_EQ(trs_permit_put(&p, 3), -EALREADY);	/* never taken */
	UCHECK_EQ(trs_permit_put(&p, 4), -EINVAL);	/* id == depth */
	UCHECK_EQ(trs_permit_put(&p, 1000), -EINVAL);
	UCHECK_EQ(p.used, 0);
	return 0;
}

static int permit_reuse(void)
{
	__u64 map[2];
	struct trs_permit_pool p;
	int a, b, i;

	UCHECK_EQ(trs_permit_pool_init(&p, map, 2, 65), 0);
	for (i = 0; i < 65; i++)
		UCHECK(trs_permit_get(&p) >= 0);
	UCHECK_EQ(trs_permit_put(&p, 64), 0);
	UCHECK_EQ(trs_permit_put(&p, 7), 0);
	UCHECK(!trs_permit_is_held(&p, 7));
	a = trs_permit_get(&p);
	b = trs_permit_get(&p);
	UCHECK((a == 7 && b == 64) || (a == 64 && b == 7));
	UCHECK_EQ(trs_permit_get(&p), -EAGAIN);
	UCHECK(trs_permit_is_held(&p, 7));
	return 0;
}

static int permit_bad_init(void)
{
	__u64 map[1];
	struct trs_permit_pool p;

	UCHECK_EQ(trs_permit_pool_init(&p, map, 1, 0), -EINVAL);
	UCHECK_EQ(trs_permit_pool_init(&p, map, 1, 65), -EINVAL);
	return 0;
}

static int mp_round_robin_fair(void)
{
	struct trs_mp_path paths[4] = { { true, 0, 0 }, { true, 0, 0 },
					{ true, 0, 0 }, { true, 0, 0 } };
	int count[4] = { 0 }, i;
	__u32 cur = 0;

	for (i = 0; i < 400; i++) {
		int p = trs_mp_select(TRS_MP_ROUND_ROBIN, paths, 4, &cur, 0);

		UCHECK(p >= 0 && p < 4);
		count[p]++;
	}
	for (i = 0; i < 4; i++)
		UCHECK_EQ(count[i], 100);
	return 0;
}

static int mp_round_robin_skips_failed(void)
{
	struct trs_mp_path paths[3] = { { true, 0, 0 }, { false, 0, 0 },
					{ true, 0, 0 } };
	__u32 cur = 0;
	int i;

	for (i = 0; i < 10; i++)
		UCHECK(trs_mp_select(TRS_MP_ROUND_ROBIN, paths, 3, &cur, 0) != 1);
	/* skip mask excludes path 2 too */
	for (i = 0; i < 5; i++)
		UCHECK_EQ(trs_mp_select(TRS_MP_ROUND_ROBIN, paths, 3, &cur, 1u << 2), 0);
	return 0;
}

static int mp_min_inflight(void)
{
	struct trs_mp_path paths[3] = { { true, 5, 0 }, { true, 2, 0 },
					{ true, 9, 0 } };
	__u32 cur = 0;

	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_INFLIGHT, paths, 3, &cur, 0), 1);
	paths[1].usable = false;
	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_INFLIGHT, paths, 3, &cur, 0), 0);
	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_INFLIGHT, paths, 3, &cur, 1), 2);
	return 0;
}

static int mp_min_inflight_ties_spread(void)
{
	struct trs_mp_path paths[2] = { { true, 0, 0 }, { true, 0, 0 } };
	int count[2] = { 0 }, i;
	__u32 cur = 0;

	for (i = 0; i < 10; i++)
		count[trs_mp_select(TRS_MP_MIN_INFLIGHT, paths, 2, &cur, 0)]++;
	UCHECK_EQ(count[0], 5);
	UCHECK_EQ(count[1], 5);
	return 0;
}

static int mp_min_latency(void)
{
	struct trs_mp_path paths[3] = { { true, 0, 300 }, { true, 0, 100 },
					{ true, 0, 200 } };
	__u32 cur = 0;

	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 0), 1);
	paths[1].usable = false;
	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 0), 2);
	return 0;
}

static int mp_no_path(void)
{
	struct trs_mp_path paths[2] = { { false, 0, 0 }, { false, 0, 0 } };
	__u32 cur = 0;
	int pol;

	for (pol = 0; pol < TRS_MP_MAX; pol++) {
		UCHECK_EQ(trs_mp_select(pol, paths, 2, &cur, 0), -ENOTCONN);
		UCHECK_EQ(trs_mp_select(pol, paths, 0, &cur, 0), -ENOTCONN);
	}
	paths[0].usable = true;
	UCHECK_EQ(trs_mp_select(TRS_MP_ROUND_ROBIN, paths, 2, &cur, 1), -ENOTCONN);
	UCHECK_EQ(trs_mp_select(99, paths, 2, &cur, 0), -EINVAL);
	return 0;
}

static int backoff_grows_and_caps(void)
{
	UCHECK_EQ(trs_backoff_ms(0, 250, 5000, 0), 250);
	UCHECK_EQ(trs_backoff_ms(1, 250, 5000, 0), 500);
	UCHECK_EQ(trs_backoff_ms(3, 250, 5000, 0), 2000);
	UCHECK_EQ(trs_backoff_ms(10, 250, 5000, 0), 5000);
	UCHECK_EQ(trs_backoff_ms(1000, 250, 5000, 0), 5000);
	/* jitter within [0, 50%] */
	UCHECK_EQ(trs_backoff_ms(0, 250, 5000, 125), 375);
	UCHECK_EQ(trs_backoff_ms(0, 250, 5000, 126), 250);
	UCHECK(trs_backoff_ms(10, 250, 5000, 0xffffffff) <= 7500);
	return 0;
}

int main(void)
{
	URUN(permit_exhaustion);
	URUN(permit_double_free);
	URUN(permit_reuse);
	URUN(permit_bad_init);
	URUN(mp_round_robin_fair);
	URUN(mp_round_robin_skips_failed);
	URUN(mp_min_inflight);
	URUN(mp_min_inflight_ties_spread);
	URUN(mp_min_latency);
	URUN(mp_no_path);
	URUN(backoff_grows_and_caps);
	return unit_failed ? 1 : 0;
}
