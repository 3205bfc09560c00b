// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd_clt.c - userspace IBNBD client on libibtrs (see ibnbd_clt.h).
 *
 * Control messages (SESS_INFO, OPEN) are IBTRS READ requests whose response
 * lands in a small buffer; CLOSE is an IBTRS WRITE without data. They are
 * issued synchronously: at open, at close, and when the server answers an
 * IO with -ESTALE (it restarted and forgot the device handle), after which
 * the IO is resubmitted with the new handle.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibnbd_clt.h"

#define IBNBD_CLT_ERR_MAX	256

struct ibnbd_clt {
	struct ibtrs_clt *trs;
	struct ibtrs_clt_opts trs_opts;
	char sessname[IBTRS_SESSNAME_MAX];
	char *paths_str;		/* as given, for messages */
	char *paths_buf;		/* split copy, paths[] point into it */
	const char *paths[IBTRS_MAX_PATHS];
	int npaths;
	char *devpath;
	struct ibnbd_clt_dev dev;
	unsigned int qd_cap;		/* params.queue_depth */
	unsigned int qd;		/* permits we use */
	unsigned int inflight;		/* IOs submitted, @done not yet run */
	unsigned int used;		/* permits held by IO parts (<= qd) */
	/* IOs with parts not sent yet, in submission order */
	struct ibnbd_clt_io *wait_head, *wait_tail;
	/* parts answered -ESTALE, waiting for the re-open */
	struct ibnbd_clt_part *stale;
	/* parts to send again (after the re-open), before any waiting IO */
	struct ibnbd_clt_part *resend_head, *resend_tail;
	void *mem;			/* registered IO buffers */
	bool reopening;
	/* successful OPENs so far: tells a part sent before the last re-open
	 * (the server may hand out the same handle value again) */
	unsigned int open_gen;
	struct ibnbd_clt_stats stats;
	ibnbd_clt_log_fn log;
	void *log_priv;
	char err[IBNBD_CLT_ERR_MAX];
};

/* Message of a create() that failed before there was a handle. */
static __thread char ibnbd_clt_create_err[IBNBD_CLT_ERR_MAX];

static void __attribute__((format(printf, 2, 3)))
ibnbd_clt_set_err(struct ibnbd_clt *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c ? c->err : ibnbd_clt_create_err, IBNBD_CLT_ERR_MAX, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 3, 4)))
ibnbd_clt_log(struct ibnbd_clt *c, enum ibnbd_clt_log_level lvl,
	      const char *fmt, ...)
{
	char msg[IBNBD_CLT_ERR_MAX + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->log)
		c->log(c->log_priv, lvl, msg);
	else
		fprintf(stderr, "ibnbd: %s\n", msg);
}

const char *ibnbd_clt_errmsg(const struct ibnbd_clt *c)
{
	return c ? c->err : ibnbd_clt_create_err;
}

const struct ibnbd_clt_dev *ibnbd_clt_dev(const struct ibnbd_clt *c)
{
	return &c->dev;
}

const char *ibnbd_clt_sessname(const struct ibnbd_clt *c)
{
	return c->sessname;
}

const char *ibnbd_clt_devpath(const struct ibnbd_clt *c)
{
	return c->devpath;
}

struct ibtrs_clt *ibnbd_clt_trs(const struct ibnbd_clt *c)
{
	return c->trs;
}

unsigned int ibnbd_clt_queue_depth(const struct ibnbd_clt *c)
{
	return c->qd;
}

unsigned int ibnbd_clt_inflight(const struct ibnbd_clt *c)
{
	return c->inflight;
}

void ibnbd_clt_get_stats(const struct ibnbd_clt *c, struct ibnbd_clt_stats *st)
{
	*st = c->stats;
}

int ibnbd_clt_fd(const struct ibnbd_clt *c)
{
	return ibtrs_clt_fd(c->trs);
}

/* ------------------------------------------------------------------ */
/* Create / connect / destroy                                          */

static int ibnbd_clt_split_paths(struct ibnbd_clt *c, const char *paths)
{
	char *save, *tok;

	c->paths_buf = strdup(paths);
	if (!c->paths_buf)
		return -ENOMEM;
	for (tok = strtok_r(c->paths_buf, ", ;", &save); tok;
	     tok = strtok_r(NULL, ", ;", &save)) {
		if (c->npaths >= IBTRS_MAX_PATHS)
			return -E2BIG;
		c->paths[c->npaths++] = tok;
	}
	return c->npaths ? 0 : -EINVAL;
}

static void ibnbd_clt_free(struct ibnbd_clt *c)
{
	free(c->paths_buf);
	free(c->paths_str);
	free(c->devpath);
	free(c);
}

struct ibnbd_clt *ibnbd_clt_create(const struct ibnbd_clt_params *p, int *err)
{
	struct ibnbd_clt *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		*err = -ENOMEM;
		ibnbd_clt_set_err(NULL, "out of memory");
		return NULL;
	}
	c->log = p->log;
	c->log_priv = p->log_priv;
	c->qd_cap = p->queue_depth;
	c->trs_opts = p->trs;
	snprintf(c->sessname, sizeof(c->sessname), "%s", p->sessname ? : "");
	c->trs_opts.sessname = c->sessname;
	c->paths_str = strdup(p->paths ? : "");
	c->devpath = strdup(p->devpath ? : "");
	if (!c->paths_str || !c->devpath) {
		r = -ENOMEM;
		ibnbd_clt_set_err(NULL, "out of memory");
		goto out_free;
	}
	r = ibnbd_clt_split_paths(c, c->paths_str);
	if (r) {
		ibnbd_clt_set_err(NULL, "bad paths '%s' (1..%d comma separated addresses)",
				  c->paths_str, IBTRS_MAX_PATHS);
		goto out_free;
	}
	return c;

out_free:
	ibnbd_clt_free(c);
	*err = r;
	return NULL;
}

int ibnbd_clt_connect(struct ibnbd_clt *c)
{
	int err = 0;

	c->trs = ibtrs_clt_open(&c->trs_opts, c->paths, c->npaths, &err);
	if (!c->trs) {
		const char *why = ibtrs_clt_last_error(NULL);

		if (err >= 0)	/* the library must give -errno; be robust */
			err = -ENOTCONN;
		ibnbd_clt_set_err(c, "cannot connect to the server at %s port %u: %s%s%s",
				  c->paths_str, c->trs_opts.port, strerror(-err),
				  why && *why ? ": " : "", why ? why : "");
		return err;
	}
	if (ibtrs_clt_max_usr_len(c->trs) < IBNBD_MAX_USR_LEN) {
		ibnbd_clt_set_err(c, "transport user header too small (%zu < %zu)",
				  ibtrs_clt_max_usr_len(c->trs),
				  (size_t)IBNBD_MAX_USR_LEN);
		return -EMSGSIZE;
	}
	c->qd = ibtrs_clt_queue_depth(c->trs);
	if (c->qd_cap && c->qd_cap < c->qd)
		c->qd = c->qd_cap;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Control messages                                                    */

struct ibnbd_clt_ctrl {
	bool done;
	int err;
};

static void ibnbd_clt_ctrl_conf(void *priv, int err)
{
	struct ibnbd_clt_ctrl *ctl = priv;

	ctl->done = true;
	ctl->err = err;
}

/* One synchronous control request whose answer lands in @rsp. */
static int ibnbd_clt_ctrl(struct ibnbd_clt *c, enum ibtrs_dir dir,
			  const void *msg, size_t len, void *rsp, size_t rsplen)
{
	struct ibnbd_clt_ctrl ctl = { 0 };
	struct ibtrs_permit *permit;
	struct iovec iov = { rsp, rsplen };
	int r;

	while (!(permit = ibtrs_clt_get_permit(c->trs))) {
		r = ibtrs_clt_poll(c->trs, 100);
		if (r < 0)
			return r;
	}
	r = ibtrs_clt_request(c->trs, dir, permit, msg, len, &iov,
			      rsp ? 1 : 0, ibnbd_clt_ctrl_conf, &ctl);
	if (r) {
		ibtrs_clt_put_permit(c->trs, permit);
		return r;
	}
	while (!ctl.done) {
		r = ibtrs_clt_poll(c->trs, 1000);
		/* The library must still run our callback; keep going. */
		if (r < 0 && !ctl.done && r != -EINTR && r != -EAGAIN)
			ibnbd_clt_log(c, IBNBD_CLT_LOG_ERR, "%s: poll: %s",
				      c->sessname, strerror(-r));
	}
	ibtrs_clt_put_permit(c->trs, permit);
	return ctl.err;
}

/* Sectors to bytes in 32 bits: 2^23 sectors and more saturate. */
static uint32_t ibnbd_clt_sat_bytes(uint32_t sectors)
{
	return sectors >= (1U << 23) ? 0xfffffe00U : sectors << IBNBD_SECTOR_SHIFT;
}

static void ibnbd_clt_dev_from_rsp(struct ibnbd_clt *c,
				   const struct ibnbd_msg_open_rsp *rsp)
{
	uint32_t max_discard = le32_to_cpu(rsp->max_discard_sectors);

	c->dev.handle = le32_to_cpu(rsp->device_id);
	c->open_gen++;
	c->dev.size = le64_to_cpu(rsp->nsectors) << IBNBD_SECTOR_SHIFT;
	c->dev.lbs = le16_to_cpu(rsp->logical_block_size);
	c->dev.max_io = le32_to_cpu(rsp->max_hw_sectors) << IBNBD_SECTOR_SHIFT;
	if (c->dev.max_io > ibtrs_clt_max_io_size(c->trs))
		c->dev.max_io = ibtrs_clt_max_io_size(c->trs);
	c->dev.max_write_zeroes = ibnbd_clt_sat_bytes(le32_to_cpu(rsp->max_write_zeroes_sectors));
	c->dev.flags = le32_to_cpu(rsp->dev_flags);
	c->dev.max_discard = ibnbd_clt_sat_bytes(max_discard);
	c->dev.mode = rsp->access_mode;
}

int ibnbd_clt_dev_open(struct ibnbd_clt *c, enum ibnbd_access_mode mode)
{
	struct ibnbd_msg_sess_info si;
	struct ibnbd_msg_sess_info_rsp si_rsp;
	struct ibnbd_msg_open om;
	struct ibnbd_msg_open_rsp *orsp;
	int r, e;

	ibnbd_init_sess_info(&si, IBNBD_PROTO_VER_MAJOR);
	memset(&si_rsp, 0, sizeof(si_rsp));
	r = ibnbd_clt_ctrl(c, IBTRS_READ, &si, sizeof(si), &si_rsp, sizeof(si_rsp));
	if (r) {
		ibnbd_clt_set_err(c, "%s: SESS_INFO failed: %s", c->sessname,
				  strerror(-r));
		return r;
	}
	if (ibnbd_validate_sess_info_rsp(&si_rsp, sizeof(si_rsp))) {
		ibnbd_clt_set_err(c, "%s: bad SESS_INFO response from the server",
				  c->sessname);
		return -EPROTO;
	}
	c->dev.ver = ibnbd_negotiate_ver(si_rsp.ver);

	r = ibnbd_init_open(&om, mode, c->devpath);
	if (r) {
		ibnbd_clt_set_err(c, "device path '%s' is too long or empty",
				  c->devpath);
		return r;
	}
	/* Response buffer in aligned memory of its own. */
	orsp = calloc(1, sizeof(*orsp));
	if (!orsp) {
		ibnbd_clt_set_err(c, "out of memory");
		return -ENOMEM;
	}
	r = ibnbd_clt_ctrl(c, IBTRS_READ, &om, sizeof(om), orsp, sizeof(*orsp));
	if (r) {
		ibnbd_clt_set_err(c, "%s: OPEN of '%s' failed: %s", c->sessname,
				  c->devpath, strerror(-r));
		goto out_free;
	}
	if (ibnbd_validate_open_rsp(orsp, sizeof(*orsp))) {
		ibnbd_clt_set_err(c, "%s: malformed OPEN response", c->sessname);
		r = -EPROTO;
		goto out_free;
	}
	e = le32_to_cpu(orsp->error);
	if (e) {
		ibnbd_clt_set_err(c, "server refused to open '%s' (%s): %s (%s)",
				  c->devpath, ibnbd_access_mode_name(mode),
				  orsp->reason[0] ? orsp->reason : "no reason given",
				  strerror(e));
		r = -e;
		goto out_free;
	}
	ibnbd_clt_dev_from_rsp(c, orsp);
	r = 0;
out_free:
	free(orsp);
	return r;
}

int ibnbd_clt_reg_mem(struct ibnbd_clt *c, void *addr, size_t len)
{
	int r = ibtrs_clt_reg_mem(c->trs, addr, len);

	if (r) {
		ibnbd_clt_set_err(c, "%s: cannot register IO buffers (%s)",
				  c->sessname, strerror(-r));
		return r;
	}
	c->mem = addr;
	return 0;
}

void ibnbd_clt_destroy(struct ibnbd_clt *c)
{
	if (!c)
		return;
	if (c->trs) {
		struct timespec t0, now;

		/* Let in-flight IO finish (bounded), then say goodbye. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (c->inflight) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec > 5)
				break;
			if (ibnbd_clt_poll(c, 100) < 0)
				break;
		}
		if (!c->inflight && c->dev.handle &&
		    ibtrs_clt_paths_connected(c->trs) > 0) {
			struct ibnbd_msg_close cm;

			ibnbd_init_close(&cm, c->dev.handle);
			ibnbd_clt_ctrl(c, IBTRS_WRITE, &cm, sizeof(cm), NULL, 0);
		}
		if (c->mem)
			ibtrs_clt_unreg_mem(c->trs, c->mem);
		ibtrs_clt_close(c->trs);
	}
	ibnbd_clt_free(c);
}

/* ------------------------------------------------------------------ */
/* IO                                                                  */

/*
 * Largest part of an @op IO in bytes, a multiple of the logical block
 * size; 0 = no limit known (one part, the server judges it).
 */
static uint32_t ibnbd_clt_part_max(const struct ibnbd_clt *c,
				   enum ibnbd_io_op op)
{
	uint32_t max, lbs = c->dev.lbs ? c->dev.lbs : IBNBD_SECTOR_SIZE;

	switch (op) {
	case IBNBD_OP_READ:
	case IBNBD_OP_WRITE:
		max = c->dev.max_io;
		break;
	case IBNBD_OP_DISCARD:
		max = c->dev.max_discard;
		break;
	case IBNBD_OP_WRITE_ZEROES:
		max = c->dev.max_write_zeroes;
		break;
	default:
		return 0;
	}
	max &= ~(lbs - 1);
	return max;
}

static unsigned int ibnbd_clt_nparts(uint64_t len, uint32_t max)
{
	if (!len || !max)
		return 1;
	return (len + max - 1) / max;
}

int ibnbd_clt_io_init(struct ibnbd_clt *c, struct ibnbd_clt_io *io,
		      uint64_t max_len)
{
	unsigned int n, m;

	memset(io, 0, sizeof(*io));
	io->clt = c;
	n = ibnbd_clt_nparts(max_len, ibnbd_clt_part_max(c, IBNBD_OP_READ));
	m = ibnbd_clt_nparts(max_len, ibnbd_clt_part_max(c, IBNBD_OP_DISCARD));
	if (m > n)
		n = m;
	io->parts = calloc(n, sizeof(*io->parts));
	if (!io->parts)
		return -ENOMEM;
	io->max_parts = n;
	return 0;
}

void ibnbd_clt_io_free(struct ibnbd_clt_io *io)
{
	free(io->parts);
	io->parts = NULL;
	io->max_parts = 0;
}

/* One part finished (or was dropped) with @err; the last one ends the IO. */
static void ibnbd_clt_part_end(struct ibnbd_clt_io *io, int err)
{
	struct ibnbd_clt *c = io->clt;

	if (err && !io->error)
		io->error = err;	/* the first error wins */
	if (++io->ndone < io->nparts)
		return;
	c->inflight--;
	io->done(io, io->error);
}

static void ibnbd_clt_part_conf(void *priv, int err)
{
	struct ibnbd_clt_part *part = priv;
	struct ibnbd_clt_io *io = part->io;
	struct ibnbd_clt *c = io->clt;

	/*
	 * The permit goes back now: the transport has let go of the request
	 * (it may be put from the callback). A part answered -ESTALE waits
	 * for the re-open without one (the OPEN needs a permit, and all of
	 * them may be held by stale parts).
	 */
	ibtrs_clt_put_permit(c->trs, part->permit);
	part->permit = NULL;
	c->used--;
	if (err == -ESTALE && part->retries < IBNBD_CLT_MAX_RETRIES) {
		/* Server forgot our handle: re-open and resubmit later. */
		part->retries++;
		c->stats.stale++;
		part->next = c->stale;
		c->stale = part;
		return;
	}
	/* A successful READ was answered in full: libibtrs fails any other. */
	ibnbd_clt_part_end(io, err);
}

static int ibnbd_clt_send(struct ibnbd_clt *c, struct ibnbd_clt_part *part)
{
	part->msg.device_id = cpu_to_le32(c->dev.handle);
	part->open_gen = c->open_gen;
	return ibtrs_clt_request(c->trs, part->io->dir, part->permit,
				 &part->msg, sizeof(part->msg),
				 part->iov.iov_len ? &part->iov : NULL,
				 part->iov.iov_len ? 1 : 0,
				 ibnbd_clt_part_conf, part);
}

/*
 * The next part to send: parts to resend first, then the waiting IOs in
 * submission order. Unsent parts of an IO that already failed are dropped
 * (the IO fails anyway).
 */
static struct ibnbd_clt_part *ibnbd_clt_next_part(struct ibnbd_clt *c)
{
	struct ibnbd_clt_io *io;

	if (c->resend_head)
		return c->resend_head;
	while ((io = c->wait_head)) {
		if (!io->error && io->next < io->nparts)
			return &io->parts[io->next];
		c->wait_head = io->wait_next;
		if (!c->wait_head)
			c->wait_tail = NULL;
		if (io->next < io->nparts) {
			unsigned int left = io->nparts - io->next;

			io->next = io->nparts;
			io->ndone += left - 1;
			ibnbd_clt_part_end(io, io->error);
		}
	}
	return NULL;
}

static void ibnbd_clt_pop_part(struct ibnbd_clt *c, struct ibnbd_clt_part *part)
{
	struct ibnbd_clt_io *io = part->io;

	if (part == c->resend_head) {
		c->resend_head = part->next;
		if (!c->resend_head)
			c->resend_tail = NULL;
		return;
	}
	if (++io->next == io->nparts) {
		c->wait_head = io->wait_next;
		if (!c->wait_head)
			c->wait_tail = NULL;
	}
}

/* Send what the permits allow. Not while re-opening (stale handle). */
static void ibnbd_clt_kick(struct ibnbd_clt *c)
{
	struct ibnbd_clt_part *part;
	int r;

	if (c->reopening)
		return;
	while (c->used < c->qd && (part = ibnbd_clt_next_part(c))) {
		part->permit = ibtrs_clt_get_permit(c->trs);
		if (!part->permit)
			break;
		r = ibnbd_clt_send(c, part);
		if (r == -EAGAIN || r == -EBUSY) {
			ibtrs_clt_put_permit(c->trs, part->permit);
			part->permit = NULL;
			break;
		}
		ibnbd_clt_pop_part(c, part);
		if (r) {
			ibtrs_clt_put_permit(c->trs, part->permit);
			part->permit = NULL;
			if (r != -ENOTCONN)
				ibnbd_clt_log(c, IBNBD_CLT_LOG_ERR,
					      "%s: request rejected: %s (%s)",
					      c->sessname, strerror(-r),
					      ibtrs_clt_last_error(c->trs));
			ibnbd_clt_part_end(part->io, r);
			continue;
		}
		c->used++;
	}
}

int ibnbd_clt_submit(struct ibnbd_clt *c, struct ibnbd_clt_io *io)
{
	uint64_t off = io->offset, len = io->len;
	uint32_t max, plen;
	unsigned int i, n;
	bool data;

	if (io->op == IBNBD_OP_FLUSH)
		off = len = 0;
	if (len && ((off | len) & (c->dev.lbs - 1))) {
		ibnbd_clt_set_err(c, "IO at %llu len %llu is not aligned to the device's %u-byte blocks",
				  (unsigned long long)off,
				  (unsigned long long)len, c->dev.lbs);
		return -EINVAL;
	}
	max = ibnbd_clt_part_max(c, io->op);
	n = ibnbd_clt_nparts(len, max);
	if (n > io->max_parts || (n == 1 && len > UINT32_MAX)) {
		ibnbd_clt_set_err(c, "IO of %llu bytes needs %u parts of at most %u, prepared for %u",
				  (unsigned long long)len, n, max, io->max_parts);
		return -E2BIG;
	}
	data = io->op == IBNBD_OP_READ || io->op == IBNBD_OP_WRITE;
	io->clt = c;
	io->dir = io->op == IBNBD_OP_READ ? IBTRS_READ : IBTRS_WRITE;
	io->nparts = n;
	io->next = 0;
	io->ndone = 0;
	io->error = 0;
	io->wait_next = NULL;
	for (i = 0; i < n; i++, off += plen, len -= plen) {
		struct ibnbd_clt_part *part = &io->parts[i];

		plen = max && len > max ? max : len;
		part->io = io;
		part->permit = NULL;
		part->retries = 0;
		part->next = NULL;
		part->iov.iov_base = data ? (char *)io->buf + (off - io->offset) : NULL;
		part->iov.iov_len = data ? plen : 0;
		ibnbd_init_io(&part->msg, c->dev.handle, off >> IBNBD_SECTOR_SHIFT,
			      io->op | io->flags, plen, 0);
	}
	c->stats.ios++;
	c->stats.parts += n;
	if (n > 1)
		c->stats.split++;
	c->inflight++;
	if (c->wait_tail)
		c->wait_tail->wait_next = io;
	else
		c->wait_head = io;
	c->wait_tail = io;
	ibnbd_clt_kick(c);
	/* Parts still queued here wait for a permit. */
	if (c->wait_tail == io)
		c->stats.waits += io->nparts - io->next;
	return 0;
}

static uint64_t ibnbd_clt_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/*
 * Open the device again after the server lost our handle. The server may
 * not have noticed yet that our previous session is gone, or that
 * session's writes may still be in flight on its backing device (a slow
 * or suspended one holds them): it then refuses our rw open with EBUSY
 * until they end. Retry every 500 ms for as long as IO may wait for the
 * server, ctrl_loss_tmo (0: the library's default, 30 s; at least 10 s;
 * -1: for ever). The wait between tries is a real one: ibnbd_clt_poll()
 * returns at the first completion.
 */
static int ibnbd_clt_reopen_busy(struct ibnbd_clt *c)
{
	int tmo = c->trs_opts.ctrl_loss_tmo_ms;
	uint64_t start = ibnbd_clt_now_ms(), next;
	int r;

	if (!tmo)
		tmo = 30000;
	else if (tmo > 0 && tmo < 10000)
		tmo = 10000;
	for (;;) {
		r = ibnbd_clt_dev_open(c, c->dev.mode);
		if (r != -EBUSY)
			return r;
		next = ibnbd_clt_now_ms() + 500;
		if (tmo >= 0 && next - start > (uint64_t)tmo)
			return r;
		while (ibnbd_clt_now_ms() < next)
			ibnbd_clt_poll(c, (int)(next - ibnbd_clt_now_ms()));
	}
}

/*
 * The server lost our handle (restart): open again, then resend the parts
 * it answered -ESTALE. Their permits were given back already.
 */
static void ibnbd_clt_handle_stale(struct ibnbd_clt *c)
{
	struct ibnbd_clt_part *list = c->stale, *part, *next;
	int r = 0;

	if (!list || c->reopening)
		return;
	c->stale = NULL;
	/*
	 * Re-open only if a part failed that was sent under the open we hold
	 * now; parts sent before an earlier re-open are just resent. Compare
	 * open generations, not handles: a restarted session may get the same
	 * handle value back, and opening again in this session would be
	 * refused (the device is already ours).
	 */
	for (part = list; part; part = part->next)
		if (part->open_gen == c->open_gen)
			break;
	if (part) {
		c->reopening = true;
		ibnbd_clt_log(c, IBNBD_CLT_LOG_INFO,
			      "%s: server lost device handle %#x (restarted?), re-opening %s",
			      c->sessname, c->dev.handle, c->devpath);
		r = ibnbd_clt_reopen_busy(c);
		if (r)
			ibnbd_clt_log(c, IBNBD_CLT_LOG_ERR, "%s", c->err);
		else
			c->stats.reopens++;
		c->reopening = false;
	}
	for (part = list; part; part = next) {
		next = part->next;
		part->next = NULL;
		if (r) {
			ibnbd_clt_part_end(part->io, r);
			continue;
		}
		if (c->resend_tail)
			c->resend_tail->next = part;
		else
			c->resend_head = part;
		c->resend_tail = part;
	}
}

int ibnbd_clt_poll(struct ibnbd_clt *c, int timeout_ms)
{
	int r = ibtrs_clt_poll(c->trs, timeout_ms);

	ibnbd_clt_handle_stale(c);
	if (c->wait_head || c->resend_head) {
		/* parts that waited for permits: one chain per connection */
		ibtrs_clt_plug(c->trs);
		ibnbd_clt_kick(c);
		ibtrs_clt_unplug(c->trs);
	}
	return r;
}
