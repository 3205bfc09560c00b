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
	struct trs_mp_path paths[3] = { { true, 0, 300 << TRS_MP_LAT_FRAC },
					{ true, 0, 100 << TRS_MP_LAT_FRAC },
					{ true, 0, 200 << TRS_MP_LAT_FRAC } };
	__u32 cur = 0;

	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 0), 1);
	paths[1].usable = false;
	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 0), 2);
	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 1u << 2), 0);
	/* 200 us x 2 in flight is worse than 300 us x 1 */
	paths[2].inflight = 1;
	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 0), 0);
	/* a path without a sample is tried first */
	paths[1].usable = true;
	paths[1].lat_ewma = 0;
	paths[1].inflight = 5;
	UCHECK_EQ(trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 0), 1);
	return 0;
}

/* Scores within 1/8 of the best take turns. */
static int mp_min_latency_band(void)
{
	struct trs_mp_path paths[3] = { { true, 0, 1000 }, { true, 0, 1100 },
					{ true, 0, 1200 } };
	int count[3] = { 0 }, i;
	__u32 cur = 0;

	for (i = 0; i < 10; i++)
		count[trs_mp_select(TRS_MP_MIN_LATENCY, paths, 3, &cur, 0)]++;
	UCHECK_EQ(count[0], 5);
	UCHECK_EQ(count[1], 5);
	UCHECK_EQ(count[2], 0);	/* 20% worse: outside the band */
	return 0;
}

static int mp_lat_ewma(void)
{
	__u64 e = 0;
	int i;

	trs_mp_lat_sample(&e, 800);
	UCHECK_EQ(trs_mp_lat_us(e), 800);	/* first sample taken as is */
	trs_mp_lat_sample(&e, 1600);
	UCHECK_EQ(trs_mp_lat_us(e), 900);	/* 7/8 * 800 + 1/8 * 1600 */
	for (i = 0; i < 100; i++)
		trs_mp_lat_sample(&e, 1600);
	UCHECK(trs_mp_lat_us(e) >= 1590 && trs_mp_lat_us(e) <= 1600);
	/* one outlier moves it by 1/8 of the difference only */
	trs_mp_lat_sample(&e, 30000 + 1600);
	UCHECK(trs_mp_lat_us(e) >= 1590 + 3700 && trs_mp_lat_us(e) <= 1600 + 3760);
	/* sub-microsecond samples do not make it "unmeasured" */
	e = 0;
	trs_mp_lat_sample(&e, 0);
	UCHECK(e != 0);
	/* huge samples are clamped, no overflow */
	trs_mp_lat_sample(&e, ~0ULL);
	trs_mp_lat_sample(&e, ~0ULL);
	UCHECK(trs_mp_lat_us(e) <= 1ULL << 32);
	/* ageing decays towards 1, never to 0 */
	e = 5000 << TRS_MP_LAT_FRAC;
	trs_mp_lat_age(&e);
	UCHECK_EQ(e, (5000 << TRS_MP_LAT_FRAC) - (5000 << TRS_MP_LAT_FRAC) / 64);
	for (i = 0; i < 10000; i++)
		trs_mp_lat_age(&e);
	UCHECK_EQ(e, 1);
	return 0;
}

/*
 * Closed-loop model of the client: @depth IOs always outstanding; path p
 * completes an IO after lat[p] * (1 + its inflight / 8) time units plus
 * +-@noise_pct % of deterministic noise (queueing + jitter), each
 * completion feeds the average and ages the idle paths (as the client
 * does), and the slot is re-issued at once. Returns
 * per-path IO counts over @nios IOs.
 */
#define SIM_MAX 16
static void mp_sim(int npaths, const unsigned int *lat, int depth, int noise_pct,
		   int nios, int *count)
{
	struct trs_mp_path mp[4] = { { 0 } };
	__u64 done_at[SIM_MAX], posted_at[SIM_MAX], t = 0, rnd = 12345;
	int path_of[SIM_MAX], i, k;
	__u32 cur = 0;

	for (i = 0; i < npaths; i++) {
		mp[i].usable = true;
		count[i] = 0;
	}
	for (k = 0; k < nios + depth; k++) {
		int slot = -1, p;
		__u64 l;

		if (k >= depth) {	/* complete the earliest IO */
			for (i = 0; i < depth; i++)
				if (slot < 0 || done_at[i] < done_at[slot])
					slot = i;
			t = done_at[slot];
			p = path_of[slot];
			mp[p].inflight--;
			trs_mp_lat_sample(&mp[p].lat_ewma, t - posted_at[slot]);
			for (i = 0; i < npaths; i++)
				if (i != p && mp[i].usable && !mp[i].inflight)
					trs_mp_lat_age(&mp[i].lat_ewma);
		} else {
			slot = k;
		}
		if (k >= nios)
			continue;
		p = trs_mp_select(TRS_MP_MIN_LATENCY, mp, npaths, &cur, 0);
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		l = lat[p] + lat[p] * mp[p].inflight / 8;
		l = l * (100 - noise_pct + (rnd >> 33) % (2 * noise_pct + 1)) / 100;
		mp[p].inflight++;
		count[p]++;
		path_of[slot] = p;
		posted_at[slot] = t;
		done_at[slot] = t + l;
	}
}
static int mp_min_latency_equal_share(void)
{
	static const unsigned int lat[4] = { 1000, 1000, 1000, 1000 };
	static const int depths[] = { 1, 4, 16 };
	int count[4], d, i;

	for (d = 0; d < 3; d++) {
		/* 2 and 4 equal paths, 30% noise: each within 10% of fair */
		mp_sim(2, lat, depths[d], 30, 10000, count);
		for (i = 0; i < 2; i++)
			if (count[i] < 4500 || count[i] > 5500)
				UFAIL("depth %d, 2 paths: %d / %d IOs", depths[d],
				      count[0], count[1]);
		mp_sim(4, lat, depths[d], 30, 10000, count);
		for (i = 0; i < 4; i++)
			if (count[i] < 2250 || count[i] > 2750)
				UFAIL("depth %d, 4 paths: %d/%d/%d/%d IOs", depths[d],
				      count[0], count[1], count[2], count[3]);
	}
	return 0;
}

static int mp_min_latency_slow_path_less(void)
{
	static const unsigned int lat[2] = { 1000, 3000 };
	static const int depths[] = { 1, 4, 16 };
	int count[2], d;

	for (d = 0; d < 3; d++) {
		mp_sim(2, lat, depths[d], 30, 10000, count);
		/* 3x slower: at most a third of the IOs, but not starved */
		if (count[1] * 3 > count[0] || count[1] == 0)
			UFAIL("depth %d: fast %d, slow %d IOs", depths[d],
			      count[0], count[1]);
	}
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
	URUN(mp_min_latency_band);
	URUN(mp_lat_ewma);
	URUN(mp_min_latency_equal_share);
	URUN(mp_min_latency_slow_path_less);
	URUN(mp_no_path);
	URUN(backoff_grows_and_caps);
	return unit_failed ? 1 : 0;
}
