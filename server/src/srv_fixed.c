// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_fixed.c - every session's chunk pool as an io_uring registered
 * buffer. A READ/WRITE of a chunk then goes out as READ_FIXED/WRITE_FIXED:
 * the kernel pinned the pool's pages once, at registration, instead of
 * pinning and releasing (and, for reads, dirtying) the pages of every IO.
 *
 * One sparse buffer table of SRV_FIXED_SLOTS slots; a session takes a slot
 * when it connects and gives it back when it is destroyed (its last IO
 * answered). Registration pins the pool (queue depth x slot size, 16.5 MiB
 * by default) against RLIMIT_MEMLOCK; where that fails (an unprivileged
 * daemon with a small limit, an old kernel), the session's IO simply goes
 * through plain READ/WRITE, as without this file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srvd.h"

#define SRV_FIXED_SLOTS	1024

void srv_fixed_init(struct srvd *d)
{
	struct srv_fixed *fx = &d->fixed;
	unsigned int i;
	int ret;

	fx->free = calloc(SRV_FIXED_SLOTS, sizeof(*fx->free));
	if (!fx->free)
		return;
	ret = io_uring_register_buffers_sparse(&d->ring, SRV_FIXED_SLOTS);
	if (ret) {
		srv_info("io_uring registered buffers unavailable (%s): chunks "
			 "are read and written without them", strerror(-ret));
		free(fx->free);
		fx->free = NULL;
		return;
	}
	fx->n = SRV_FIXED_SLOTS;
	for (i = 0; i < fx->n; i++)
		fx->free[i] = fx->n - 1 - i;
	fx->nfree = fx->n;
	fx->ok = true;
}

void srv_fixed_exit(struct srvd *d)
{
	struct srv_fixed *fx = &d->fixed;

	if (fx->ok)
		io_uring_unregister_buffers(&d->ring);
	fx->ok = false;
	free(fx->free);
	fx->free = NULL;
}

/* Register @s's chunk pool in a free slot (s->fixed), if it can be. */
void srv_fixed_attach(struct srvd *d, struct srv_sess *s)
{
	struct srv_fixed *fx = &d->fixed;
	struct iovec iov;
	unsigned int slot;
	int ret;

	s->fixed = -1;
	if (!fx->ok || !fx->nfree)
		return;
	ibtrs_srv_sess_pool(s->ts, &iov.iov_base, &iov.iov_len);
	if (!iov.iov_base || !iov.iov_len)
		return;
	slot = fx->free[--fx->nfree];
	ret = io_uring_register_buffers_update_tag(&d->ring, slot, &iov, NULL, 1);
	if (ret < 0) {
		fx->free[fx->nfree++] = slot;
		srv_info("sess %s: chunk pool not registered with io_uring (%s)",
			 s->name, strerror(-ret));
		return;
	}
	s->fixed = (int)slot;
}

/* Give @s's slot back (its IO is done: nothing uses the buffer). */
void srv_fixed_detach(struct srvd *d, struct srv_sess *s)
{
	struct srv_fixed *fx = &d->fixed;
	struct iovec none = { .iov_base = NULL, .iov_len = 0 };
	int ret;

	if (s->fixed < 0 || !fx->ok)
		return;
	ret = io_uring_register_buffers_update_tag(&d->ring, (unsigned int)s->fixed,
						   &none, NULL, 1);
	if (ret < 0)
		srv_wrn("sess %s: unregistering its io_uring buffer: %s", s->name,
			strerror(-ret));
	else
		fx->free[fx->nfree++] = (unsigned int)s->fixed;
	s->fixed = -1;
}
