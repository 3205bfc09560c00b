// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd_serverd.c - userspace IBNBD server: serves block devices and files
 * found beneath a search root to IBNBD clients over IBTRS.
 *
 * One thread, one epoll loop over three fds: the IBTRS server context
 * (ibtrs_srv_fd), the io_uring completion queue, and a signalfd. Requests
 * arrive in srv_rdma_ev() (inside ibtrs_srv_poll); IO is queued to io_uring
 * against the session's chunk memory and answered with ibtrs_srv_resp()
 * when its completion is reaped, so a slow device never stalls the others.
 *
 * Lifetimes: a srv_io holds its srv_sess_dev (sd->inflight) and its session
 * (sess->inflight). A CLOSE takes the handle out of the table and releases
 * the access-mode claim at once; the fd is closed when its last IO
 * completes. When IBTRS reports that a session is gone, its devices are
 * closed the same way and the srv_sess lives on, marked dead, until its
 * in-flight IO completes: every request is still answered exactly once with
 * ibtrs_srv_resp() (the library keeps the chunks valid until then).
 * Completions are answered only outside ibtrs_srv_poll() (d->deferred),
 * never re-entrantly from an IBTRS callback.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ibtrs.h"
#include "srv.h"
#include "srv_backend.h"
#include "trs/ibnbd_proto.h"

/* ------------------------------------------------------------------ */
/* Logging                                                             */

static bool log_syslog;
static int log_max = SRV_LOG_INFO;

void srv_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_syslog) {
		syslog(level, "%s", msg);
	} else {
		struct timespec ts;
		static const char *const lvl[] = {
			[SRV_LOG_ERR] = "error", [SRV_LOG_WARN] = "warning",
			[SRV_LOG_INFO] = "info", [SRV_LOG_DEBUG] = "debug",
		};

		clock_gettime(CLOCK_REALTIME, &ts);
		fprintf(stderr, "%ld.%03ld ibnbd-serverd[%d] %s: %s\n",
			(long)ts.tv_sec, ts.tv_nsec / 1000000, (int)getpid(),
			lvl[level] ? lvl[level] : "?", msg);
	}
}

static void srv_ibtrs_log(enum ibtrs_log_level lvl, const char *msg)
{
	static const int map[] = {
		[IBTRS_LOG_ERR] = SRV_LOG_ERR, [IBTRS_LOG_WARN] = SRV_LOG_WARN,
		[IBTRS_LOG_INFO] = SRV_LOG_INFO, [IBTRS_LOG_DEBUG] = SRV_LOG_DEBUG,
	};

	srv_log(lvl <= IBTRS_LOG_DEBUG ? map[lvl] : SRV_LOG_DEBUG, "ibtrs: %s", msg);
}

/* ------------------------------------------------------------------ */
/* State                                                               */

struct srv_stats {
	uint64_t reads, writes, read_bytes, write_bytes;
	uint64_t flushes, discards, write_zeroes, errors;
};

struct srv_sess;

/* One device opened by one session. */
struct srv_sess_dev {
	struct srv_sess *sess;
	struct srv_dev *dev;		/* registry entry (arbitration) */
	uint32_t handle;
	unsigned int slot;
	unsigned int mode;
	int fd;
	bool is_blk, buffered, closing;
	struct srv_geom geom;
	struct ibnbd_dev_limits lim;
	unsigned int inflight;
	struct srv_stats st;
	char path[1024];
	struct srv_sess_dev *next_closing;
};

struct srv_sess {
	struct srv_sess *next;
	struct ibtrs_srv_sess *ts;
	char name[IBTRS_SESSNAME_MAX];
	uint8_t ver;
	bool dead;
	unsigned int inflight;
	unsigned int max_devs;
	struct srv_sess_dev **devs;	/* by slot */
	struct srv_sess_dev *closing;	/* closed, IO still in flight */
	struct srv_stats st;		/* includes closed devices */
	uint64_t bad_msgs;
};

struct srv_io {
	struct srv_io *next;		/* d->deferred */
	struct srv_sess_dev *sd;
	struct ibtrs_srv_op *op;
	uint32_t opcode;
	uint32_t len;
	int pending;			/* CQEs still to come */
	int res;
	void *data;			/* chunk */
	void *bounce;			/* aligned copy for O_DIRECT, or NULL */
};

struct srvd {
	struct srv_opts o;
	char root[PATH_MAX];
	int root_fd;
	struct ibtrs_srv_ctx *ctx;
	struct io_uring ring;
	int epfd, sigfd;
	uint32_t chunk_size;
	uint16_t gen;			/* high half of device handles */
	struct srv_dev_reg reg;
	struct srv_sess *sessions;
	struct srv_io *deferred, **deferred_tail;
	bool in_poll;
	bool stopping;
	unsigned int inflight;		/* all sessions */
	uint64_t parked;		/* requests not answered at shutdown */
	struct srv_stats total;		/* every session, since start */
	time_t start;
};

static struct srvd *srvd_global;	/* for the IBTRS callbacks' context */

/* ------------------------------------------------------------------ */
/* Statistics                                                          */

static void stats_line(char *buf, size_t len, const struct srv_stats *s)
{
	snprintf(buf, len,
		 "reads=%llu writes=%llu read_bytes=%llu write_bytes=%llu "
		 "flushes=%llu discards=%llu write_zeroes=%llu errors=%llu",
		 (unsigned long long)s->reads, (unsigned long long)s->writes,
		 (unsigned long long)s->read_bytes,
		 (unsigned long long)s->write_bytes,
		 (unsigned long long)s->flushes, (unsigned long long)s->discards,
		 (unsigned long long)s->write_zeroes,
		 (unsigned long long)s->errors);
}

static void srv_stats_dump(struct srvd *d, FILE *f)
{
	struct srv_sess *s;
	unsigned int i, nsess = 0;
	char line[512];

	for (s = d->sessions; s; s = s->next)
		nsess++;
	fprintf(f, "ibnbd-serverd pid=%d uptime=%lds sessions=%u devices=%u inflight=%u%s\n",
		(int)getpid(), (long)(time(NULL) - d->start), nsess,
		d->reg.ndevs, d->inflight, d->stopping ? " stopping" : "");
	stats_line(line, sizeof(line), &d->total);
	fprintf(f, "total %s\n", line);
	for (s = d->sessions; s; s = s->next) {
		stats_line(line, sizeof(line), &s->st);
		fprintf(f, "session %s paths=%d ver=%u inflight=%u bad_msgs=%llu %s\n",
			s->name, s->dead ? 0 : ibtrs_srv_sess_paths(s->ts),
			s->ver, s->inflight, (unsigned long long)s->bad_msgs, line);
		for (i = 0; i < s->max_devs; i++) {
			struct srv_sess_dev *sd = s->devs[i];

			if (!sd)
				continue;
			stats_line(line, sizeof(line), &sd->st);
			fprintf(f, "  device %s handle=%#x mode=%s inflight=%u %s\n",
				sd->path, sd->handle,
				ibnbd_access_mode_name(sd->mode), sd->inflight,
				line);
		}
	}
}

static void srv_stats_report(struct srvd *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char *line, *save;

	if (!f)
		return;
	srv_stats_dump(d, f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		srv_info("stats: %s", line);
	free(buf);

	if (d->o.stats_file) {
		char tmp[PATH_MAX + 8];

		snprintf(tmp, sizeof(tmp), "%s.tmp", d->o.stats_file);
		f = fopen(tmp, "w");
		if (!f) {
			srv_wrn("cannot write stats file %s: %m", tmp);
			return;
		}
		srv_stats_dump(d, f);
		if (fclose(f) || rename(tmp, d->o.stats_file))
			srv_wrn("cannot write stats file %s: %m", d->o.stats_file);
	}
}

/* ------------------------------------------------------------------ */
/* Devices of a session                                                */

static void srv_sd_free(struct srv_sess_dev *sd)
{
	close(sd->fd);
	free(sd);
}

/*
 * Take @sd out of the handle table and give up its access-mode claim (so a
 * reconnecting client can open it rw again at once); close the fd now or
 * when its in-flight IO completes.
 */
static void srv_sd_close(struct srv_sess *s, struct srv_sess_dev *sd,
			 const char *why)
{
	struct srvd *d = srvd_global;
	char line[512];

	s->devs[sd->slot] = NULL;
	srv_dev_put(&d->reg, sd->dev, sd->mode);
	sd->dev = NULL;
	stats_line(line, sizeof(line), &sd->st);
	srv_info("sess %s: closed %s (handle %#x, %s): %s", s->name, sd->path,
		 sd->handle, why, line);
	if (!sd->inflight) {
		srv_sd_free(sd);
		return;
	}
	sd->closing = true;
	sd->next_closing = s->closing;
	s->closing = sd;
}

static void srv_sd_reap_closing(struct srv_sess *s)
{
	struct srv_sess_dev **pp = &s->closing, *sd;

	while ((sd = *pp)) {
		if (sd->inflight) {
			pp = &sd->next_closing;
			continue;
		}
		*pp = sd->next_closing;
		srv_sd_free(sd);
	}
}

static struct srv_sess_dev *srv_sd_lookup(struct srv_sess *s, uint32_t handle)
{
	struct srvd *d = srvd_global;
	unsigned int slot = handle & 0xffff;
	struct srv_sess_dev *sd;

	if ((handle >> 16) != d->gen || slot >= s->max_devs)
		return NULL;
	sd = s->devs[slot];
	return sd && sd->handle == handle ? sd : NULL;
}

/* ------------------------------------------------------------------ */
/* IO completion                                                       */

static void srv_stats_add(struct srv_stats *a, struct srv_io *io)
{
	if (io->res) {
		a->errors++;
		return;
	}
	switch (io->opcode) {
	case IBNBD_OP_READ:
		a->reads++;
		a->read_bytes += io->len;
		break;
	case IBNBD_OP_WRITE:
		a->writes++;
		a->write_bytes += io->len;
		break;
	case IBNBD_OP_FLUSH:
		a->flushes++;
		break;
	case IBNBD_OP_DISCARD:
		a->discards++;
		break;
	case IBNBD_OP_WRITE_ZEROES:
		a->write_zeroes++;
		break;
	}
}

static void srv_io_account(struct srv_sess_dev *sd, struct srv_io *io)
{
	srv_stats_add(&sd->st, io);
	srv_stats_add(&sd->sess->st, io);
	srv_stats_add(&srvd_global->total, io);
}

static void srv_sess_destroy(struct srvd *d, struct srv_sess *s);

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
	srv_io_account(sd, io);
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
	if (sd->closing && !sd->inflight)
		srv_sd_reap_closing(s);
	free(io);
	if (s->dead && !s->inflight)
		srv_sess_destroy(d, s);
}

static void srv_io_done(struct srvd *d, struct srv_io *io)
{
	if (d->in_poll) {
		io->next = NULL;
		*d->deferred_tail = io;
		d->deferred_tail = &io->next;
		return;
	}
	srv_io_respond(d, io);
}

static void srv_flush_deferred(struct srvd *d)
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

static void srv_reap(struct srvd *d)
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
}

static struct io_uring_sqe *srv_get_sqe(struct srvd *d)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);

	while (!sqe) {
		/* SQ full: hand the batch to the kernel and try again. */
		int r = io_uring_submit(&d->ring);

		if (r < 0 && r != -EAGAIN && r != -EBUSY && r != -EINTR)
			return NULL;
		if (r <= 0)
			srv_reap(d);
		sqe = io_uring_get_sqe(&d->ring);
	}
	return sqe;
}

/* ------------------------------------------------------------------ */
/* Request handlers (inside ibtrs_srv_poll)                            */

static int srv_handle_sess_info(struct srv_sess *s, struct ibtrs_srv_op *op,
				enum ibtrs_dir dir, void *data, size_t datalen,
				const void *usr, size_t usrlen)
{
	const struct ibnbd_msg_sess_info *m = usr;
	struct ibnbd_msg_sess_info_rsp *rsp = data;
	int ret = ibnbd_validate_sess_info(usr, usrlen);

	if (ret)
		return ret;
	if (dir != IBTRS_READ || datalen < sizeof(*rsp))
		return -EINVAL;
	s->ver = ibnbd_negotiate_ver(m->ver);
	{
		struct ibnbd_msg_sess_info_rsp r;

		ibnbd_init_sess_info_rsp(&r, s->ver);
		memcpy(rsp, &r, sizeof(r));	/* @data may be unaligned */
	}
	srv_info("sess %s: protocol version %u (client offered %u)", s->name,
		 s->ver, m->ver);
	return ibtrs_srv_resp(op, 0, sizeof(*rsp)) ? -EIO : 0;
}

static void srv_fill_open_rsp(struct ibnbd_msg_open_rsp *rsp,
			      const struct srv_sess_dev *sd)
{
	const struct srv_geom *g = &sd->geom;

	ibnbd_init_open_rsp_err(rsp, 0, NULL);
	rsp->device_id = cpu_to_le32(sd->handle);
	rsp->nsectors = cpu_to_le64(g->nsectors);
	rsp->max_hw_sectors = cpu_to_le32(g->max_io_bytes >> 9);
	rsp->max_discard_sectors = cpu_to_le32(g->max_discard_sectors);
	rsp->discard_granularity = cpu_to_le32(g->discard_granularity);
	rsp->discard_alignment = cpu_to_le32(0);
	rsp->max_write_zeroes_sectors = cpu_to_le32(g->max_write_zeroes_sectors);
	rsp->dev_flags = cpu_to_le32(g->flags |
		(sd->mode == IBNBD_ACCESS_RO ? IBNBD_DEV_READ_ONLY : 0));
	rsp->logical_block_size = cpu_to_le16(g->lbs);
	rsp->physical_block_size = cpu_to_le16(g->pbs > 32768 ? g->lbs : g->pbs);
	rsp->max_segments = cpu_to_le16(1);
	rsp->access_mode = sd->mode;
}

static int srv_handle_open(struct srvd *d, struct srv_sess *s,
			   struct ibtrs_srv_op *op, enum ibtrs_dir dir,
			   void *data, size_t datalen, const void *usr,
			   size_t usrlen)
{
	const struct ibnbd_msg_open *m = usr;
	struct ibnbd_msg_open_rsp rsp_buf, *rsp = &rsp_buf;
	struct srv_open_result res;
	struct srv_sess_dev *sd = NULL;
	const char *reason = NULL;
	struct srv_dev *dev;
	unsigned int slot;
	int ret;

	if (dir != IBTRS_READ || datalen < sizeof(*rsp))
		return -EINVAL;
	ret = ibnbd_validate_open(usr, usrlen);
	if (ret) {
		reason = "malformed OPEN message";
		goto refuse_nolog;
	}
	if (d->stopping) {
		ret = -ESHUTDOWN;
		reason = "server is shutting down";
		goto refuse;
	}
	for (slot = 0; slot < s->max_devs; slot++)
		if (!s->devs[slot])
			break;
	if (slot == s->max_devs) {
		ret = -EMFILE;
		reason = "too many devices open in this session";
		goto refuse;
	}
	ret = srv_path_open(d->root_fd, d->root, m->dev_path,
			    m->access_mode == IBNBD_ACCESS_RO ? O_RDONLY : O_RDWR,
			    &res, &reason);
	if (ret)
		goto refuse;
	ret = srv_dev_get(&d->reg, res.is_blk,
			  res.is_blk ? res.st_rdev : res.st_dev, res.st_ino,
			  res.resolved, m->access_mode, &dev, &reason);
	if (ret) {
		close(res.fd);
		goto refuse;
	}
	sd = calloc(1, sizeof(*sd));
	if (!sd) {
		ret = -ENOMEM;
		reason = "out of memory";
		goto put_dev;
	}
	ret = srv_backend_probe(res.fd, res.is_blk, res.buffered, res.st_rdev,
				d->chunk_size, &sd->geom);
	if (ret) {
		reason = "cannot query device geometry";
		goto put_dev;
	}
	sd->sess = s;
	sd->dev = dev;
	sd->slot = slot;
	sd->handle = ((uint32_t)d->gen << 16) | slot;
	sd->mode = m->access_mode;
	sd->fd = res.fd;
	sd->is_blk = res.is_blk;
	sd->buffered = res.buffered;
	snprintf(sd->path, sizeof(sd->path), "%s", res.resolved);
	sd->lim.nsectors = sd->geom.nsectors;
	sd->lim.logical_block_size = sd->geom.lbs;
	sd->lim.max_io_bytes = sd->geom.max_io_bytes;
	sd->lim.max_discard_sectors = sd->geom.max_discard_sectors;
	sd->lim.max_write_zeroes_sectors = sd->geom.max_write_zeroes_sectors;
	sd->lim.read_only = sd->mode == IBNBD_ACCESS_RO;
	s->devs[slot] = sd;
	srv_fill_open_rsp(rsp, sd);
	srv_info("sess %s: opened %s (%s, %s%s) handle %#x: %llu sectors, lbs %u, flags %#x",
		 s->name, sd->path, ibnbd_access_mode_name(sd->mode),
		 sd->is_blk ? "block device" : "file",
		 sd->buffered ? ", buffered: no O_DIRECT" : "", sd->handle,
		 (unsigned long long)sd->geom.nsectors, sd->geom.lbs,
		 sd->geom.flags);
	memcpy(data, rsp, sizeof(*rsp));
	return ibtrs_srv_resp(op, 0, sizeof(*rsp)) ? -EIO : 0;

put_dev:
	srv_dev_put(&d->reg, dev, m->access_mode);
	close(res.fd);
	free(sd);
refuse:
	srv_wrn("sess %s: refused open of '%s' (%s): %s (%s)", s->name,
		m->dev_path, ibnbd_access_mode_name(m->access_mode), reason,
		strerror(-ret));
refuse_nolog:
	if (!reason || ret == -EINVAL)
		s->bad_msgs++;
	ibnbd_init_open_rsp_err(rsp, ret, reason);
	memcpy(data, rsp, sizeof(*rsp));
	return ibtrs_srv_resp(op, 0, sizeof(*rsp)) ? -EIO : 0;
}

static int srv_handle_close(struct srv_sess *s, const void *usr, size_t usrlen)
{
	const struct ibnbd_msg_close *m = usr;
	struct srv_sess_dev *sd;
	int ret = ibnbd_validate_close(usr, usrlen);

	if (ret)
		return ret;
	sd = srv_sd_lookup(s, le32_to_cpu(m->device_id));
	if (!sd)
		return -ESTALE;
	srv_sd_close(s, sd, "closed by client");
	return 0;
}

static int srv_handle_io(struct srvd *d, struct srv_sess *s,
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
	io = calloc(1, sizeof(*io));
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
			free(io);
			return -ENOMEM;
		}
		if (io->opcode == IBNBD_OP_WRITE)
			memcpy(io->bounce, data, io->len);
		buf = io->bounce;
	}

	if (io->opcode == IBNBD_OP_DISCARD && sd->is_blk) {
		/* No async discard in io_uring on 6.1: BLKDISCARD inline. */
		uint64_t range[2] = { off, io->len };

		io->res = ioctl(sd->fd, BLKDISCARD, range) ? -errno : 0;
		sd->inflight++;
		s->inflight++;
		d->inflight++;
		srv_io_respond(d, io);
		return 0;
	}

	if (flags & IBNBD_F_PREFLUSH) {
		pre = srv_get_sqe(d);
		if (!pre)
			goto no_sqe;
		io_uring_prep_fsync(pre, sd->fd, IORING_FSYNC_DATASYNC);
		pre->flags |= IOSQE_IO_LINK;
		io_uring_sqe_set_data(pre, (void *)((uintptr_t)io | SRV_AUX_TAG));
		io->pending++;
	}
	sqe = srv_get_sqe(d);
	if (!sqe)
		goto no_sqe;
	switch (io->opcode) {
	case IBNBD_OP_READ:
		io_uring_prep_read(sqe, sd->fd, buf, io->len, off);
		break;
	case IBNBD_OP_WRITE:
		io_uring_prep_write(sqe, sd->fd, buf, io->len, off);
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
			post = srv_get_sqe(d);
			if (!post)
				goto no_sqe;
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

no_sqe:
	/* Only when io_uring_submit fails hard; already-prepped SQEs are nops. */
	if (pre)
		io_uring_prep_nop(pre), io_uring_sqe_set_data(pre, NULL);
	srv_err("sess %s: io_uring has no free SQE", s->name);
	free(io->bounce);
	free(io);
	return -EAGAIN;
}

static int srv_rdma_ev(struct ibtrs_srv_sess *ts, void *priv,
		       struct ibtrs_srv_op *op, enum ibtrs_dir dir, void *data,
		       size_t datalen, const void *usr, size_t usrlen)
{
	struct srvd *d = srvd_global;
	struct srv_sess *s = priv;
	union {
		struct ibnbd_msg_hdr hdr;
		struct ibnbd_msg_sess_info si;
		struct ibnbd_msg_open open;
		struct ibnbd_msg_close close;
		struct ibnbd_msg_io io;
	} msg;
	int type, ret;

	(void)ts;
	if (!s || s->dead)
		return -ENOTCONN;
	/*
	 * Work on an aligned copy of the header: the user header's place in
	 * the chunk is the transport's business. Bytes beyond the largest
	 * message are never looked at.
	 */
	if (usrlen > sizeof(msg))
		usrlen = sizeof(msg);
	if (usr && usrlen)
		memcpy(&msg, usr, usrlen);
	usr = usr ? (const void *)&msg : NULL;
	type = ibnbd_msg_type(usr, usrlen);
	if (d->stopping && type == IBNBD_MSG_IO) {
		/* Left unanswered: ibtrs_srv_close() drops it, the client's
		 * transport retries it after reconnecting. */
		d->parked++;
		return 0;
	}
	switch (type) {
	case IBNBD_MSG_SESS_INFO:
		ret = srv_handle_sess_info(s, op, dir, data, datalen, usr, usrlen);
		break;
	case IBNBD_MSG_OPEN:
		ret = srv_handle_open(d, s, op, dir, data, datalen, usr, usrlen);
		break;
	case IBNBD_MSG_CLOSE:
		ret = srv_handle_close(s, usr, usrlen);
		if (!ret)
			ret = ibtrs_srv_resp(op, 0, 0) ? -EIO : 0;
		break;
	case IBNBD_MSG_IO:
		ret = srv_handle_io(d, s, op, dir, data, datalen, usr, usrlen);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	if (ret == -EINVAL || ret == -EOPNOTSUPP || ret == -EPROTO) {
		s->bad_msgs++;
		/* Rate limit: first few, then every 1000th. */
		if (s->bad_msgs <= 5 || !(s->bad_msgs % 1000))
			srv_wrn("sess %s: rejected %s message (%zu bytes, dir %s): %s",
				s->name, type > 0 ? ibnbd_msg_type_name(type) : "malformed",
				usrlen, dir == IBTRS_READ ? "read" : "write",
				strerror(-ret));
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Sessions                                                            */

static void srv_sess_destroy(struct srvd *d, struct srv_sess *s)
{
	struct srv_sess **pp;
	char line[512];

	srv_sd_reap_closing(s);
	for (pp = &d->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	stats_line(line, sizeof(line), &s->st);
	srv_info("sess %s: gone: %s", s->name, line);
	free(s->devs);
	free(s);
}

/* The session is gone: close its devices; free it once its IO is answered. */
static void srv_sess_kill(struct srvd *d, struct srv_sess *s, const char *why)
{
	unsigned int i;

	if (!s->dead) {
		s->dead = true;
		srv_info("sess %s: %s (%u IOs in flight)", s->name, why,
			 s->inflight);
		for (i = 0; i < s->max_devs; i++)
			if (s->devs[i])
				srv_sd_close(s, s->devs[i], why);
	}
	if (!s->inflight)
		srv_sess_destroy(d, s);
}

static void srv_link_ev(struct ibtrs_srv_sess *ts, enum ibtrs_srv_link_ev ev,
			void *priv)
{
	struct srvd *d = srvd_global;
	struct srv_sess *s = priv;

	switch (ev) {
	case IBTRS_SRV_LINK_EV_CONNECTED:
		s = calloc(1, sizeof(*s));
		if (s)
			s->devs = calloc(d->o.max_devs, sizeof(*s->devs));
		if (!s || !s->devs) {
			srv_err("sess %s: out of memory", ibtrs_srv_sessname(ts));
			free(s);
			ibtrs_srv_set_sess_priv(ts, NULL);
			return;
		}
		s->ts = ts;
		s->max_devs = d->o.max_devs;
		s->ver = IBNBD_PROTO_VER_MAJOR;
		snprintf(s->name, sizeof(s->name), "%s", ibtrs_srv_sessname(ts));
		s->next = d->sessions;
		d->sessions = s;
		ibtrs_srv_set_sess_priv(ts, s);
		srv_info("sess %s: connected (%d path%s)", s->name,
			 ibtrs_srv_sess_paths(ts),
			 ibtrs_srv_sess_paths(ts) == 1 ? "" : "s");
		break;
	case IBTRS_SRV_LINK_EV_DISCONNECTED:
		if (!s)
			return;
		ibtrs_srv_set_sess_priv(ts, NULL);
		srv_sess_kill(d, s, "disconnected");
		break;
	}
}

static const struct ibtrs_srv_ops srv_ops = {
	.link_ev = srv_link_ev,
	.rdma_ev = srv_rdma_ev,
};

/* ------------------------------------------------------------------ */
/* Main loop                                                           */

static void srv_poll_ibtrs(struct srvd *d)
{
	int r;

	d->in_poll = true;
	r = ibtrs_srv_poll(d->ctx, 0);
	d->in_poll = false;
	if (r < 0 && r != -EAGAIN && r != -EINTR)
		srv_wrn("ibtrs_srv_poll: %s", strerror(-r));
	srv_flush_deferred(d);
}

static int srv_handle_signal(struct srvd *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			if (!d->stopping)
				srv_info("%s: shutting down, %u IOs in flight",
					 strsignal(si.ssi_signo), d->inflight);
			d->stopping = true;
			break;
		case SIGUSR1:
			srv_stats_report(d);
			break;
		case SIGHUP:
			srv_info("SIGHUP ignored (no configuration to reload)");
			break;
		}
	}
	return 0;
}

static int srv_loop(struct srvd *d)
{
	struct epoll_event evs[8];
	struct timespec stop_at = { 0 };
	int n, i;

	for (;;) {
		int timeout = -1;

		if (io_uring_sq_ready(&d->ring))
			io_uring_submit(&d->ring);
		if (d->stopping) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (d->inflight) {
				stop_at = now;
				stop_at.tv_nsec += 300 * 1000000L;	/* grace */
				if (stop_at.tv_nsec >= 1000000000L) {
					stop_at.tv_sec++;
					stop_at.tv_nsec -= 1000000000L;
				}
			} else if (!stop_at.tv_sec) {
				stop_at = now;	/* nothing in flight: stop now */
			}
			if (!d->inflight &&
			    (now.tv_sec > stop_at.tv_sec ||
			     (now.tv_sec == stop_at.tv_sec &&
			      now.tv_nsec >= stop_at.tv_nsec)))
				return 0;
			timeout = 50;
		}
		n = epoll_wait(d->epfd, evs, 8, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			srv_err("epoll_wait: %m");
			return -errno;
		}
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == d->ring.ring_fd)
				srv_reap(d);
			else if (fd == d->sigfd)
				srv_handle_signal(d);
		}
		/* Always let IBTRS run: its fd may aggregate timers too. */
		for (i = 0; i < n; i++)
			if (evs[i].data.fd == ibtrs_srv_fd(d->ctx))
				srv_poll_ibtrs(d);
		srv_reap(d);
	}
}

static int srv_daemonize(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1 || c != 'R')
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	if (setsid() < 0)
		return -errno;
	if (chdir("/"))
		return -errno;
	*ready_fd = p[1];
	return 0;
}

static void srv_ready(int ready_fd)
{
	int fd;

	if (ready_fd < 0)
		return;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (write(ready_fd, "R", 1) != 1)
		srv_wrn("cannot notify the parent process");
	close(ready_fd);
}

int main(int argc, char **argv)
{
	static struct srvd dd;
	struct srvd *d = &dd;
	struct ibtrs_srv_opts so = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	char err[256];
	sigset_t mask;
	int ready_fd = -1, ret;
	unsigned int entries;
	struct srv_sess *s;

	ret = srv_opts_parse(argc, argv, &d->o, err, sizeof(err));
	if (ret == 1)
		return 0;
	if (ret) {
		fprintf(stderr, "ibnbd-serverd: %s\n", err);
		srv_opts_usage(stderr, argv[0]);
		return 2;
	}
	srvd_global = d;
	d->deferred_tail = &d->deferred;
	d->start = time(NULL);
	log_max = d->o.verbose ? SRV_LOG_DEBUG : SRV_LOG_INFO;
	if (d->o.daemon || d->o.use_syslog) {
		openlog("ibnbd-serverd", LOG_PID | (d->o.daemon ? 0 : LOG_PERROR),
			LOG_DAEMON);
		log_syslog = true;
	}
	ibtrs_set_log(srv_ibtrs_log, d->o.verbose > 1 ? IBTRS_LOG_DEBUG :
		      d->o.verbose ? IBTRS_LOG_INFO : IBTRS_LOG_WARN);

	if (!realpath(d->o.root, d->root)) {
		srv_err("search root %s: %m", d->o.root);
		return 1;
	}
	d->root_fd = open(d->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->root_fd < 0) {
		srv_err("search root %s: %m", d->root);
		return 1;
	}
	if (getrandom(&d->gen, sizeof(d->gen), 0) != sizeof(d->gen))
		d->gen = (uint16_t)(getpid() ^ time(NULL));
	if (!d->gen)
		d->gen = 1;

	/* Fork before any RDMA or io_uring resource exists. */
	if (d->o.daemon && srv_daemonize(&ready_fd)) {
		srv_err("cannot daemonize: %m");
		return 1;
	}
	if (d->o.pidfile) {
		FILE *f = fopen(d->o.pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
			srv_err("pidfile %s: %m", d->o.pidfile);
			return 1;
		}
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sigfd < 0) {
		srv_err("signalfd: %m");
		return 1;
	}

	so.addrs = d->o.addrs;
	so.naddrs = d->o.naddrs;
	so.port = d->o.port;
	so.queue_depth = d->o.queue_depth;
	so.chunk_size = d->o.chunk_size;
	so.hb_interval_ms = d->o.hb_interval_ms;
	so.hb_missed_max = d->o.hb_missed_max;
	if (d->o.inval_mode &&
	    ibtrs_inval_mode_parse(d->o.inval_mode, &so.inval_mode)) {
		srv_err("unknown --inval-mode '%s'", d->o.inval_mode);
		return 2;
	}
	d->chunk_size = d->o.chunk_size ? d->o.chunk_size : 128 * 1024;

	entries = d->o.queue_depth ? d->o.queue_depth : 128;
	entries = entries < 64 ? 128 : entries * 2;
	if (entries > 4096)
		entries = 4096;
	ret = io_uring_queue_init(entries, &d->ring, 0);
	if (ret) {
		srv_err("io_uring_queue_init(%u): %s", entries, strerror(-ret));
		return 1;
	}

	d->ctx = ibtrs_srv_open(&so, &srv_ops, d, &ret);
	if (!d->ctx) {
		srv_err("cannot listen on port %u: %s", d->o.port, strerror(-ret));
		return 1;
	}

	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0) {
		srv_err("epoll_create1: %m");
		return 1;
	}
	ev.data.fd = ibtrs_srv_fd(d->ctx);
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto epoll_err;
	ev.data.fd = d->ring.ring_fd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto epoll_err;
	ev.data.fd = d->sigfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto epoll_err;

	{
		char addrs[256] = "";
		int i;

		for (i = 0; i < d->o.naddrs; i++)
			snprintf(addrs + strlen(addrs), sizeof(addrs) - strlen(addrs),
				 "%s%s", i ? "," : "", d->o.addrs[i]);
		srv_info("listening on %s port %u, root %s, queue depth %u, chunk %u",
			 addrs, d->o.port, d->root,
			 d->o.queue_depth ? d->o.queue_depth : 128, d->chunk_size);
	}
	srv_ready(ready_fd);

	ret = srv_loop(d);

	srv_info("shutdown: closing sessions (%llu requests left unanswered)",
		 (unsigned long long)d->parked);
	srv_stats_report(d);
	/* Devices first (all IO is answered), then the transport. */
	for (s = d->sessions; s; s = s->next) {
		unsigned int i;

		for (i = 0; i < s->max_devs; i++)
			if (s->devs[i])
				srv_sd_close(s, s->devs[i], "server shutdown");
	}
	ibtrs_srv_close(d->ctx);	/* may call link_ev(DISCONNECTED) */
	while ((s = d->sessions)) {
		s->inflight = 0;	/* loop ended with d->inflight == 0 */
		srv_sess_kill(d, s, "server shutdown");
	}
	io_uring_queue_exit(&d->ring);
	if (d->o.pidfile)
		unlink(d->o.pidfile);
	srv_info("exited cleanly");
	return ret ? 1 : 0;

epoll_err:
	srv_err("epoll_ctl: %m");
	return 1;
}
