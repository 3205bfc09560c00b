// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * permit.c - permit (server chunk) allocator: a bitmap the caller owns.
 *
 * NOT thread-safe: plain loads and stores, no atomics, no lock. The
 * userspace library calls it from the one thread that polls the session
 * handle. The kernel client gets and puts permits from many CPUs at once
 * (blk-mq queue_rq and completion context) and must wrap it: either a
 * spinlock around trs_permit_get()/trs_permit_put(), or, as RTRS does, a
 * concurrent allocator (sbitmap_queue, or test_and_set_bit()/clear_bit()
 * on the same bitmap layout) with this file as the reference semantics
 * (ids 0..depth-1, -EAGAIN when all are held, double put is -EALREADY).
 */
#include "trs_common.h"

int trs_permit_pool_init(struct trs_permit_pool *p, __u64 *map, __u32 nwords,
			 __u32 depth)
{
	__u32 i;

	if (!depth || depth > TRS_MAX_QUEUE_DEPTH || nwords < TRS_BITMAP_WORDS(depth))
		return -EINVAL;
	for (i = 0; i < nwords; i++)
		map[i] = 0;
	p->map = map;
	p->depth = depth;
	p->used = 0;
	p->hint = 0;
	return 0;
}

int trs_permit_get(struct trs_permit_pool *p)
{
	__u32 nwords = TRS_BITMAP_WORDS(p->depth), n, w;

	if (p->used >= p->depth)
		return -EAGAIN;
	for (n = 0; n < nwords; n++) {
		__u64 free_bits;
		__u32 bit, id;

		w = (p->hint + n) % nwords;
		free_bits = ~p->map[w];
		if (!free_bits)
			continue;
		bit = (__u32)__builtin_ctzll(free_bits);
		id = w * 64 + bit;
		if (id >= p->depth)
			continue;	/* tail bits of the last word */
		p->map[w] |= 1ULL << bit;
		p->used++;
		p->hint = w;
		return (int)id;
	}
	return -EAGAIN;
}

int trs_permit_put(struct trs_permit_pool *p, __u32 id)
{
	__u64 bit;

	if (id >= p->depth)
		return -EINVAL;
	bit = 1ULL << (id % 64);
	if (!(p->map[id / 64] & bit))
		return -EALREADY;
	p->map[id / 64] &= ~bit;
	p->used--;
	return 0;
}

bool trs_permit_is_held(const struct trs_permit_pool *p, __u32 id)
{
	return id < p->depth && (p->map[id / 64] >> (id % 64)) & 1;
}
