// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_discard.c - BLKDISCARD off the event loop. io_uring on Linux 6.1 has
 * no asynchronous discard, and a synchronous BLKDISCARD of a large range can
 * take seconds: in the loop it would stall every session and every
 * heartbeat (past hb-interval x hb-missed, 1.5 s by default, every client
 * fails all its paths). One worker thread runs the ioctls one after the
 * other; finished requests come back on a list and an eventfd the epoll
 * loop watches, and are answered from the loop (srv_discard_reap()).
 *
 * While a request is with the worker it is counted in flight like any
 * other IO, so its device's fd stays open and its claim held, and shutdown
 * waits for it. The worker touches only io->off, io->len, io->res, the
 * device fd and the two lists (under dw->lock).
 */
#include <errno.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "srvd.h"

static void *srv_discard_thread(void *arg)
{
	struct srv_discard_worker *dw = arg;
	struct srv_io *io;
	uint64_t one = 1;

	for (;;) {
		uint64_t range[2];

		pthread_mutex_lock(&dw->lock);
		while (!dw->todo && !dw->stop)
			pthread_cond_wait(&dw->cond, &dw->lock);
		io = dw->todo;
		if (!io) {	/* stop, and nothing left to do */
			pthread_mutex_unlock(&dw->lock);
			return NULL;
		}
		dw->todo = io->next;
		if (!dw->todo)
			dw->todo_tail = &dw->todo;
		pthread_mutex_unlock(&dw->lock);

		range[0] = io->off;
		range[1] = io->len;
		io->res = ioctl(io->sd->fd, BLKDISCARD, range) ? -errno : 0;

		pthread_mutex_lock(&dw->lock);
		io->next = dw->done;
		dw->done = io;
		pthread_mutex_unlock(&dw->lock);
		/* Cannot fail short of a saturated counter (the loop is
		 * woken then anyway). */
		(void)!write(dw->efd, &one, sizeof(one));
	}
}

int srv_discard_start(struct srv_discard_worker *dw)
{
	int ret;

	dw->todo = NULL;
	dw->todo_tail = &dw->todo;
	dw->done = NULL;
	dw->stop = false;
	dw->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dw->efd < 0)
		return -errno;
	pthread_mutex_init(&dw->lock, NULL);
	pthread_cond_init(&dw->cond, NULL);
	ret = pthread_create(&dw->thread, NULL, srv_discard_thread, dw);
	if (ret)
		goto out_close_efd;
	dw->running = true;
	return 0;

out_close_efd:
	pthread_cond_destroy(&dw->cond);
	pthread_mutex_destroy(&dw->lock);
	close(dw->efd);
	dw->efd = -1;
	return -ret;
}

/* Finish what was queued, then end the thread (all IO answered by then). */
void srv_discard_stop(struct srv_discard_worker *dw)
{
	if (!dw->running)
		return;
	pthread_mutex_lock(&dw->lock);
	dw->stop = true;
	pthread_cond_signal(&dw->cond);
	pthread_mutex_unlock(&dw->lock);
	pthread_join(dw->thread, NULL);
	dw->running = false;
	pthread_cond_destroy(&dw->cond);
	pthread_mutex_destroy(&dw->lock);
	close(dw->efd);
	dw->efd = -1;
}

/* Hand @io (in flight already) to the worker. */
void srv_discard_queue(struct srv_discard_worker *dw, struct srv_io *io)
{
	io->next = NULL;
	pthread_mutex_lock(&dw->lock);
	*dw->todo_tail = io;
	dw->todo_tail = &io->next;
	pthread_cond_signal(&dw->cond);
	pthread_mutex_unlock(&dw->lock);
}

/* From the loop, on the eventfd: answer the finished discards. */
void srv_discard_reap(struct srvd *d)
{
	struct srv_discard_worker *dw = &d->discard;
	struct srv_io *io, *next;
	uint64_t n;

	if (!dw->running)
		return;
	if (read(dw->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		srv_wrn("discard eventfd: %m");
	pthread_mutex_lock(&dw->lock);
	io = dw->done;
	dw->done = NULL;
	pthread_mutex_unlock(&dw->lock);
	for (; io; io = next) {
		next = io->next;
		srv_io_done(d, io);
	}
}
