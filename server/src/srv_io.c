// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_io.c - backend IO of ibnbd-serverd: an IO request is checked against
 * its device, queued to the daemon's one io_uring against the session's
 * chunk memory, and answered with ibtrs_srv_resp() when its completion is
 * reaped, so a slow device never stalls the others. In batches: every
 * request of a wake-up is queued first, then one io_uring_submit() hands
 * them all to the kernel, the completions are reaped at once, and the
 * answers leave as one chain per connection (srv_run_io()).
 */
#include <errno.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>

#include "srvd.h"

/* srv_io objects come from a cache: no allocation per IO once warm. */
#define SRV_IO_CACHE_MAX	4096

struct srv_io *srv_io_alloc(struct srvd *d)
{
	struct srv_io *io = d->io_cache;

	if (io) {
		d->io_cache = io->next;
		d->io_cached--;
		memset(io, 0, sizeof(*io));
		return io;
	}
	d->fast.io_allocs++;
	return calloc(1, sizeof(*io));
}

void srv_io_free(struct srvd *d, struct srv_io *io)
{
	if (d->io_cached >= SRV_IO_CACHE_MAX) {
		free(io);
		return;
	}
	io->next = d->io_cache;
	d->io_cache = io;
	d->io_cached++;
}

/* Answer and free a finished IO. */
static void srv_io_respond(struct srvd *d, struct srv_io *io)
{
	struct srv_sess_dev *sd = io->sd;
	struct srv_sess *s = sd->sess;
	int ret;

	if (io->bounce) {
		if (!io->res && io->opcode == IBNBD_OP_READ)
			memcpy(io->data, io->bounce, io->len);
		free(io->bounce);
	}
	srv_stats_account(d, sd, io);
	if (io->res)
		srv_dbg("sess %s: %s on %s failed: %s", s->name,
			ibnbd_op_name(io->opcode), sd->path, strerror(-io->res));
	/* Answered even when the session is gone: the library waits for it. */
	ret = ibtrs_srv_resp(io->op, io->res,
			     io->opcode == IBNBD_OP_READ && !io->res ? io->len : 0);
	if (ret && !s->dead)
		srv_wrn("sess %s: ibtrs_srv_resp: %s", s->name, strerror(-ret));
	sd->inflight--;
	s->inflight--;
	d->inflight--;
	if (d->stopping)
		d->stop_answered++;
	if (sd->closing && !sd->inflight)
		srv_sd_reap_closing(s);
	srv_io_free(d, io);
	if (s->dead && !s->inflight)
		srv_sess_destroy(d, s);
}

void srv_io_done(struct srvd *d, struct srv_io *io)
{
	if (d->in_poll) {
		io->next = NULL;
		*d->deferred_tail = io;
		d->deferred_tail = &io->next;
		return;
	}
	srv_io_respond(d, io);
}

void srv_flush_deferred(struct srvd *d)
{
	struct srv_io *io;

	while ((io = d->deferred)) {
		d->deferred = io->next;
		if (!d->deferred)
			d->deferred_tail = &d->deferred;
		srv_io_respond(d, io);
	}
}

#define SRV_AUX_TAG	1UL	/* user_data low bit: pre/post flush CQE */

unsigned int srv_reap(struct srvd *d)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&d->ring, head, cqe) {
		uintptr_t ud = (uintptr_t)io_uring_cqe_get_data(cqe);
		struct srv_io *io = (struct srv_io *)(ud & ~SRV_AUX_TAG);
		int res = cqe->res;

		n++;
		if (!(ud & SRV_AUX_TAG) && res >= 0) {
			/* The main op: READ/WRITE must move every byte. */
			if ((io->opcode == IBNBD_OP_READ ||
			     io->opcode == IBNBD_OP_WRITE) &&
			    (uint32_t)res != io->len)
				res = -EIO;
			else
				res = 0;
		} else if (res > 0) {
			res = 0;
		}
		if (res < 0 && (!io->res || io->res == -ECANCELED))
			io->res = res;
		if (--io->pending == 0)
			srv_io_done(d, io);
	}
	io_uring_cq_advance(&d->ring, n);
	d->fast.ring_cqes += n;
	return n;
}

/*
 * The IO of a wake-up, in batches: one io_uring_submit() for every SQE
 * prepared since the last one (a request needs no system call of its
 * own), the completions reaped at once (null_blk and page-cache IO are
 * done by the time the submit returns), and their answers staged and
 * posted as one chain per connection at the unplug.
 */
void srv_run_io(struct srvd *d)
{
	unsigned int n;

	ibtrs_srv_plug(d->ctx);
	do {
		if (io_uring_sq_ready(&d->ring)) {
			io_uring_submit(&d->ring);
			d->fast.ring_submits++;
		}
		n = srv_reap(d);
		srv_flush_deferred(d);
	} while (n && io_uring_sq_ready(&d->ring));
	ibtrs_srv_unplug(d->ctx);
}

/*
 * Make room for the @need SQEs of one request before preparing any of them:
 * a chain (PREFLUSH fsync -> WRITE, WRITE_ZEROES -> FUA fsync) cut by a
 * submit between its SQEs would reach the kernel as two unordered pieces.
 * Returns 0 (io_uring_get_sqe() then succeeds @need times) or -EAGAIN with
 * the ring untouched.
 */
static int srv_sq_reserve(struct srvd *d, unsigned int need)
{
	int tries, r;

	for (tries = 0; io_uring_sq_space_left(&d->ring) < need; tries++) {
		if (tries == 3)
			return -EAGAIN;
		/* SQ full: hand the batch to the kernel. */
		r = io_uring_submit(&d->ring);
		d->fast.ring_submits++;
		if (r < 0 && r != -EAGAIN && r != -EBUSY && r != -EINTR) {
			srv_err("io_uring_submit: %s", strerror(-r));
			return -EAGAIN;
		}
		if (r <= 0)
			srv_reap(d);	/* CQ overflow: make room there */
	}
	return 0;
}

/* SQEs one request needs: see the chains in srv_handle_io(). */
static unsigned int srv_io_nr_sqes(uint32_t opcode, uint32_t flags)
{
	unsigned int n = 1;

	if (flags & IBNBD_F_PREFLUSH)
		n++;
	if (opcode == IBNBD_OP_WRITE_ZEROES && (flags & IBNBD_F_FUA))
		n++;
	return n;
}

int srv_handle_io(struct srvd *d, struct srv_sess *s,
			 struct ibtrs_srv_op *op, enum ibtrs_dir dir,
			 void *data, size_t datalen, const void *usr,
			 size_t usrlen)
{
	const struct ibnbd_msg_io *m = usr;
	struct io_uring_sqe *sqe, *pre = NULL, *post = NULL;
	struct srv_sess_dev *sd;
	struct srv_io *io;
	uint32_t rw, flags;
	uint64_t off;
	void *buf;
	int ret;

	ret = ibnbd_validate_io(usr, usrlen, dir == IBTRS_WRITE, datalen);
	if (ret)
		return ret;
	sd = srv_sd_lookup(s, le32_to_cpu(m->device_id));
	if (!sd)
		return -ESTALE;
	ret = ibnbd_check_io_limits(m, &sd->lim);
	if (ret) {
		sd->st.errors++;
		s->st.errors++;
		d->total.errors++;
		srv_dbg("sess %s: %s on %s refused: %s", s->name,
			ibnbd_op_name(le32_to_cpu(m->rw)), sd->path,
			strerror(-ret));
		return ret;
	}
	io = srv_io_alloc(d);
	if (!io)
		return -ENOMEM;
	rw = le32_to_cpu(m->rw);
	flags = rw & ~IBNBD_OP_MASK;
	io->sd = sd;
	io->op = op;
	io->opcode = rw & IBNBD_OP_MASK;
	io->len = le32_to_cpu(m->bi_size);
	io->data = data;
	off = le64_to_cpu(m->sector) << IBNBD_SECTOR_SHIFT;
	buf = data;

	if ((io->opcode == IBNBD_OP_READ || io->opcode == IBNBD_OP_WRITE) &&
	    !sd->buffered && ((uintptr_t)data & (sd->geom.lbs - 1))) {
		/* O_DIRECT needs aligned memory; the chunk is not. */
		if (posix_memalign(&io->bounce, 4096, io->len)) {
			srv_io_free(d, io);
			return -ENOMEM;
		}
		if (io->opcode == IBNBD_OP_WRITE)
			memcpy(io->bounce, data, io->len);
		buf = io->bounce;
	}

	if (io->opcode == IBNBD_OP_DISCARD && sd->is_blk) {
		/*
		 * No async discard in io_uring on 6.1, and BLKDISCARD can take
		 * seconds: the worker thread runs it (srv_discard.c).
		 */
		if (!d->discard.running) {
			srv_io_free(d, io);
			return -EOPNOTSUPP;
		}
		io->off = off;
		sd->inflight++;
		s->inflight++;
		d->inflight++;
		srv_discard_queue(&d->discard, io);
		return 0;
	}

	ret = srv_sq_reserve(d, srv_io_nr_sqes(io->opcode, flags));
	if (ret) {
		srv_dbg("sess %s: %s on %s: no room in the io_uring", s->name,
			ibnbd_op_name(io->opcode), sd->path);
		free(io->bounce);
		srv_io_free(d, io);
		return ret;
	}
	/* From here on io_uring_get_sqe() cannot fail (reserved above). */
	if (flags & IBNBD_F_PREFLUSH) {
		pre = io_uring_get_sqe(&d->ring);
		io_uring_prep_fsync(pre, sd->fd, IORING_FSYNC_DATASYNC);
		pre->flags |= IOSQE_IO_LINK;
		io_uring_sqe_set_data(pre, (void *)((uintptr_t)io | SRV_AUX_TAG));
		io->pending++;
	}
	sqe = io_uring_get_sqe(&d->ring);
	switch (io->opcode) {
	case IBNBD_OP_READ:
		if (s->fixed >= 0 && buf == data) {
			io_uring_prep_read_fixed(sqe, sd->fd, buf, io->len, off,
						 s->fixed);
			d->fast.fixed_ios++;
		} else {
			io_uring_prep_read(sqe, sd->fd, buf, io->len, off);
		}
		break;
	case IBNBD_OP_WRITE:
		if (s->fixed >= 0 && buf == data) {
			io_uring_prep_write_fixed(sqe, sd->fd, buf, io->len, off,
						  s->fixed);
			d->fast.fixed_ios++;
		} else {
			io_uring_prep_write(sqe, sd->fd, buf, io->len, off);
		}
		if (flags & IBNBD_F_FUA)
			sqe->rw_flags = RWF_DSYNC;
		break;
	case IBNBD_OP_FLUSH:
		io_uring_prep_fsync(sqe, sd->fd, IORING_FSYNC_DATASYNC);
		break;
	case IBNBD_OP_DISCARD:
		io_uring_prep_fallocate(sqe, sd->fd,
					FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					off, io->len);
		break;
	case IBNBD_OP_WRITE_ZEROES:
		io_uring_prep_fallocate(sqe, sd->fd,
					FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					off, io->len);
		if (flags & IBNBD_F_FUA) {
			sqe->flags |= IOSQE_IO_LINK;
			post = io_uring_get_sqe(&d->ring);
			io_uring_prep_fsync(post, sd->fd, IORING_FSYNC_DATASYNC);
			io_uring_sqe_set_data(post,
					      (void *)((uintptr_t)io | SRV_AUX_TAG));
			io->pending++;
		}
		break;
	}
	io_uring_sqe_set_data(sqe, io);
	io->pending++;
	sd->inflight++;
	s->inflight++;
	d->inflight++;
	return 0;
}
