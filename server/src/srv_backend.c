// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_backend.c - geometry and capabilities of a backing block device or
 * file, as advertised in OPEN_RSP.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "srv_backend.h"

static int read_sysfs(dev_t rdev, const char *attr, char *buf, size_t len)
{
	char p[128];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/%s", major(rdev),
		 minor(rdev), attr);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static unsigned long long sysfs_ull(dev_t rdev, const char *attr,
				    unsigned long long def)
{
	char buf[64];

	if (read_sysfs(rdev, attr, buf, sizeof(buf)))
		return def;
	return strtoull(buf, NULL, 10);
}

/* Largest DISCARD/WRITE_ZEROES: bi_size is 32 bits of bytes. */
static uint32_t cap_sectors(unsigned long long bytes, uint32_t lbs)
{
	unsigned long long max = (0xffffffffULL & ~(unsigned long long)(lbs - 1));

	if (bytes > max)
		bytes = max;
	bytes &= ~(unsigned long long)(lbs - 1);
	return bytes >> 9;
}

/* Which alignment does O_DIRECT need on this file? 512 or 4096. */
static uint32_t file_dio_align(int fd, bool buffered)
{
	void *buf;
	uint32_t lbs = 4096;

	if (buffered)
		return 512;
	if (posix_memalign(&buf, 4096, 4096))
		return 4096;
	if (pread(fd, buf, 512, 0) >= 0)
		lbs = 512;
	free(buf);
	return lbs;
}

int srv_backend_probe(int fd, bool is_blk, bool buffered, dev_t rdev,
		      uint32_t chunk_size, struct srv_geom *g)
{
	struct stat st;
	char buf[64];

	memset(g, 0, sizeof(*g));
	g->max_io_bytes = chunk_size;
	if (is_blk) {
		unsigned long long size;
		int lbs = 512;
		unsigned int pbs = 512;

		if (ioctl(fd, BLKGETSIZE64, &size))
			return -errno;
		if (ioctl(fd, BLKSSZGET, &lbs) || lbs < 512)
			lbs = 512;
		if (ioctl(fd, BLKPBSZGET, &pbs) || pbs < (unsigned int)lbs)
			pbs = lbs;
		g->lbs = lbs;
		g->pbs = pbs;
		g->nsectors = (size & ~(unsigned long long)(lbs - 1)) >> 9;
		if (sysfs_ull(rdev, "rotational", 0))
			g->flags |= IBNBD_DEV_ROTATIONAL;
		if (!read_sysfs(rdev, "write_cache", buf, sizeof(buf)) &&
		    !strcmp(buf, "write back"))
			g->flags |= IBNBD_DEV_FLUSH;
		/* FUA is honoured either natively or via RWF_DSYNC. */
		g->flags |= IBNBD_DEV_FUA;
		g->discard_granularity = sysfs_ull(rdev, "discard_granularity", 0);
		g->max_discard_sectors =
			cap_sectors(sysfs_ull(rdev, "discard_max_bytes", 0), lbs);
		if (g->max_discard_sectors)
			g->flags |= IBNBD_DEV_DISCARD;
		/* blkdev fallocate(ZERO_RANGE) falls back to writing zeroes. */
		g->max_write_zeroes_sectors = cap_sectors(1ULL << 30, lbs);
		g->flags |= IBNBD_DEV_WRITE_ZEROES;
	} else {
		if (fstat(fd, &st))
			return -errno;
		g->lbs = file_dio_align(fd, buffered);
		g->pbs = st.st_blksize >= g->lbs ? st.st_blksize : g->lbs;
		if (g->pbs > 65535 / 2 + 1)
			g->pbs = g->lbs;
		g->nsectors = ((unsigned long long)st.st_size &
			       ~(unsigned long long)(g->lbs - 1)) >> 9;
		g->flags |= IBNBD_DEV_FLUSH | IBNBD_DEV_FUA | IBNBD_DEV_FILE |
			    IBNBD_DEV_DISCARD | IBNBD_DEV_WRITE_ZEROES;
		g->discard_granularity = g->pbs;
		g->max_discard_sectors = cap_sectors(1ULL << 30, g->lbs);
		g->max_write_zeroes_sectors = g->max_discard_sectors;
	}
	if (g->max_io_bytes < g->lbs)
		return -EINVAL;
	return 0;
}
