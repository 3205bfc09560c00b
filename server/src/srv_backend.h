/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef IBNBD_SRV_BACKEND_H
#define IBNBD_SRV_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trs/ibnbd_proto.h"

/**
 * struct srv_geom - what OPEN_RSP advertises for one backing device.
 * @nsectors: size in 512-byte sectors (rounded down to @lbs).
 * @lbs/@pbs: logical/physical block size in bytes.
 * @max_io_bytes: largest READ/WRITE (the IBTRS chunk size).
 * @max_discard_sectors/@max_write_zeroes_sectors: 0 if unsupported.
 * @discard_granularity: bytes.
 * @flags: IBNBD_DEV_*.
 */
struct srv_geom {
	uint64_t nsectors;
	uint32_t lbs, pbs;
	uint32_t max_io_bytes;
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
	uint32_t discard_granularity;
	uint32_t flags;
};

int srv_backend_probe(int fd, bool is_blk, bool buffered, dev_t rdev,
		      uint32_t chunk_size, struct srv_geom *g);

#endif
