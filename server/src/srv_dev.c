// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_dev.c - registry of backing devices across sessions, for access mode
 * arbitration: any number of "ro" openers, one "rw" opener, or up to two
 * writers when "migration" is used (see ibnbd_access_check()). A writer
 * closed with IO in flight keeps its claim until that IO is done
 * (srv_dev_drain_begin/end), and a block device with writers is held
 * O_EXCL (srv_dev_claim_excl) so local mounts cannot write to it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "srv.h"
#include "trs/ibnbd_proto.h"

static bool srv_dev_match(const struct srv_dev *d, bool is_blk, dev_t dev,
			  ino_t ino)
{
	if (d->is_blk != is_blk)
		return false;
	return is_blk ? d->dev == dev : (d->dev == dev && d->ino == ino);
}

int srv_dev_get(struct srv_dev_reg *reg, bool is_blk, dev_t dev, ino_t ino,
		const char *path, unsigned int mode, struct srv_dev **out,
		const char **reason)
{
	struct srv_dev *d;
	int ret;

	*reason = NULL;
	for (d = reg->head; d; d = d->next)
		if (srv_dev_match(d, is_blk, dev, ino))
			break;

	ret = ibnbd_access_check(mode, d ? d->writers : 0);
	if (ret == -EBUSY && d->draining) {
		*reason = "device's previous writer closed, its IO still in flight; retry";
		return ret;
	}
	if (ret == -EBUSY) {
		*reason = mode == IBNBD_ACCESS_RW ?
			"device already opened for writing (rw) by another session" :
			"device already has two writers (migration)";
		return ret;
	}
	if (ret) {
		*reason = "unknown access mode";
		return ret;
	}
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d) {
			*reason = "out of memory";
			return -ENOMEM;
		}
		d->is_blk = is_blk;
		d->excl_fd = -1;
		d->dev = dev;
		d->ino = is_blk ? 0 : ino;
		snprintf(d->path, sizeof(d->path), "%s", path);
		d->next = reg->head;
		reg->head = d;
		reg->ndevs++;
	}
	d->openers++;
	if (ibnbd_access_is_writer(mode))
		d->writers++;
	*out = d;
	return 0;
}

int srv_dev_claim_excl(struct srv_dev *d, int fd, const char **reason)
{
	char proc[64];
	int efd;

	if (!d->is_blk || d->excl_fd >= 0)
		return 0;
	/*
	 * Re-open the very file @fd refers to (no second path lookup):
	 * O_EXCL on a block device fails with EBUSY while it is mounted or
	 * opened O_EXCL by anyone else, and keeps both out while we hold it.
	 */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	efd = open(proc, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (efd < 0) {
		int ret = -errno;

		*reason = ret == -EBUSY ?
			"device is in use on the server (mounted or opened exclusively)" :
			"cannot open device exclusively";
		return ret;
	}
	d->excl_fd = efd;
	return 0;
}

void srv_dev_drain_begin(struct srv_dev *d, unsigned int mode)
{
	if (ibnbd_access_is_writer(mode))
		d->draining++;
}

void srv_dev_drain_end(struct srv_dev *d, unsigned int mode)
{
	if (ibnbd_access_is_writer(mode) && d->draining)
		d->draining--;
}

void srv_dev_put(struct srv_dev_reg *reg, struct srv_dev *d, unsigned int mode)
{
	struct srv_dev **pp;

	if (ibnbd_access_is_writer(mode) && d->writers)
		d->writers--;
	if (!d->writers && d->excl_fd >= 0) {
		close(d->excl_fd);
		d->excl_fd = -1;
	}
	if (d->openers && --d->openers)
		return;
	for (pp = &reg->head; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			reg->ndevs--;
			break;
		}
	}
	free(d);
}
