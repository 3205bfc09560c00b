/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_common.h - the test programs' user header and data pattern. */
#ifndef TRS_TEST_COMMON_H
#define TRS_TEST_COMMON_H
#include <stdint.h>

#define TT_MAGIC	0x54455354u	/* "TEST" */
#define TT_SECTOR	512

/* The opaque user header the test client sends with every IO. */
struct tt_hdr {
	uint32_t magic;
	uint32_t len;
	uint64_t offset;
};

/* Word i of sector s written with generation g. */
static inline uint64_t tt_word(uint64_t s, uint32_t g, unsigned int i)
{
	return (s * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)g << 40) ^ i;
}
#endif
