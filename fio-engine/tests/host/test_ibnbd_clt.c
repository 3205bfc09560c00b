// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ibnbd_clt.c - host tests of ibnbd_clt.c with libibtrs replaced by a
 * fake in this file: a server with a memory disk that answers every request
 * from ibtrs_clt_poll() in submission order. Covers the split of large IOs
 * into parts (READ data landing in the right slice, WRITE data from it),
 * DISCARD split by max discard, permits (more parts than permits: parts
 * wait, no deadlock, never more than queue_depth held), the first error of
 * any part failing the IO, transport rejections, the -ESTALE re-open.
 * Prints PASS:/FAIL:/SKIP: lines (docs/CONVENTIONS.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibnbd_clt.h"

#define DISK_SIZE	(8U << 20)
#define MAX_REQS	512

/* ---- the fake transport + server ---------------------------------- */

struct ibtrs_permit {
	int id;
	bool held;
};

struct fake_req {
	enum ibtrs_dir dir;
	struct ibtrs_permit *permit;
	char usr[IBNBD_MAX_USR_LEN];
	size_t usr_len;
	struct iovec iov;
	ibtrs_conf_fn conf;
	void *priv;
	bool stale;		/* reached the server while it had forgotten */
};

struct ibtrs_clt {
	int dummy;
};

static struct {
	struct ibtrs_clt clt;
	unsigned int qd;
	size_t max_io;
	uint32_t max_discard_sectors;
	struct ibtrs_permit permits[MAX_REQS];
	unsigned int held, max_held;
	struct fake_req reqs[MAX_REQS];
	unsigned int nreqs;
	unsigned char *disk;
	uint32_t handle;	/* current device handle */
	bool forgot;		/* "restarted" with the same handle value */
	bool is_open;		/* a second OPEN is refused -EBUSY, as ours is */
	unsigned int busy_ms;	/* after a restart, refuse OPEN -EBUSY for this
				 * long from the first refusal (the old
				 * session's writes still in flight) */
	double busy_until;
	unsigned int busy_refusals;
	unsigned int poll_max;	/* answers per poll, 0 = all */
	unsigned int opens;
	unsigned int io_seen;	/* IO requests answered */
	int fail_at[4];		/* answer IO number fail_at[i] with fail_err[i] */
	int fail_err[4];
	int reject_err;		/* ibtrs_clt_request() returns this for IO */
	unsigned int max_bi_size;
	bool bad_msg;		/* an IO message broke the rules */
} fk;

static void fake_reset(unsigned int qd, uint32_t max_discard_sectors)
{
	unsigned char *disk = fk.disk;

	memset(&fk, 0, sizeof(fk));
	fk.disk = disk ? disk : malloc(DISK_SIZE);
	memset(fk.disk, 0, DISK_SIZE);
	fk.qd = qd;
	fk.max_io = 128 * 1024;
	fk.max_discard_sectors = max_discard_sectors;
	fk.handle = 7;
}

struct ibtrs_clt *ibtrs_clt_open(const struct ibtrs_clt_opts *opts,
				 const char *const *paths, int npaths, int *err)
{
	return &fk.clt;
}

void ibtrs_clt_close(struct ibtrs_clt *clt) { }
unsigned int ibtrs_clt_queue_depth(const struct ibtrs_clt *clt) { return fk.qd; }
size_t ibtrs_clt_max_io_size(const struct ibtrs_clt *clt) { return fk.max_io; }
size_t ibtrs_clt_max_usr_len(const struct ibtrs_clt *clt) { return IBNBD_MAX_USR_LEN; }
int ibtrs_clt_reg_mem(struct ibtrs_clt *clt, void *addr, size_t len) { return 0; }
int ibtrs_clt_unreg_mem(struct ibtrs_clt *clt, void *addr) { return 0; }
int ibtrs_clt_fd(const struct ibtrs_clt *clt) { return -1; }
int ibtrs_clt_paths_connected(const struct ibtrs_clt *clt) { return 1; }
const char *ibtrs_clt_last_error(const struct ibtrs_clt *clt) { return "fake"; }

struct ibtrs_permit *ibtrs_clt_get_permit(struct ibtrs_clt *clt)
{
	unsigned int i;

	for (i = 0; i < fk.qd; i++) {
		if (!fk.permits[i].held) {
			fk.permits[i].held = true;
			fk.permits[i].id = i;
			if (++fk.held > fk.max_held)
				fk.max_held = fk.held;
			return &fk.permits[i];
		}
	}
	return NULL;
}

void ibtrs_clt_put_permit(struct ibtrs_clt *clt, struct ibtrs_permit *permit)
{
	if (!permit || !permit->held) {
		fprintf(stderr, "fake: bad permit put\n");
		abort();
	}
	permit->held = false;
	fk.held--;
}

int ibtrs_clt_request(struct ibtrs_clt *clt, enum ibtrs_dir dir,
		      struct ibtrs_permit *permit, const void *usr,
		      size_t usr_len, const struct iovec *iov, int iovcnt,
		      ibtrs_conf_fn conf, void *priv)
{
	struct fake_req *r;

	if (!permit || !permit->held || iovcnt > 1 || usr_len > IBNBD_MAX_USR_LEN)
		return -EINVAL;
	if (iovcnt && iov->iov_len > fk.max_io)
		return -EMSGSIZE;
	if (fk.reject_err && ibnbd_msg_type(usr, usr_len) == IBNBD_MSG_IO)
		return fk.reject_err;
	r = &fk.reqs[fk.nreqs++];
	r->dir = dir;
	r->permit = permit;
	memcpy(r->usr, usr, usr_len);
	r->usr_len = usr_len;
	r->iov = iovcnt ? *iov : (struct iovec){ NULL, 0 };
	r->conf = conf;
	r->stale = fk.forgot;
	r->priv = priv;
	return 0;
}

static int fake_io(struct fake_req *r)
{
	const struct ibnbd_msg_io *m = (const void *)r->usr;
	uint64_t off = le64_to_cpu(m->sector) << IBNBD_SECTOR_SHIFT;
	uint32_t len = le32_to_cpu(m->bi_size);
	unsigned int op = le32_to_cpu(m->rw) & IBNBD_OP_MASK;
	unsigned int i, n = fk.io_seen++;

	if (ibnbd_validate_io(m, r->usr_len, r->dir == IBTRS_WRITE, r->iov.iov_len)) {
		fk.bad_msg = true;
		return -EINVAL;
	}
	if (r->stale || le32_to_cpu(m->device_id) != fk.handle)
		return -ESTALE;
	for (i = 0; i < 4; i++)
		if (fk.fail_err[i] && fk.fail_at[i] == (int)n)
			return fk.fail_err[i];
	if (len > fk.max_bi_size)
		fk.max_bi_size = len;
	if (off + len > DISK_SIZE)
		return -EINVAL;
	if ((op == IBNBD_OP_READ || op == IBNBD_OP_WRITE) && len > fk.max_io)
		fk.bad_msg = true;
	if (op == IBNBD_OP_DISCARD && len > fk.max_discard_sectors << 9)
		fk.bad_msg = true;
	switch (op) {
	case IBNBD_OP_READ:
		memcpy(r->iov.iov_base, fk.disk + off, len);
		break;
	case IBNBD_OP_WRITE:
		memcpy(fk.disk + off, r->iov.iov_base, len);
		break;
	case IBNBD_OP_DISCARD:
		memset(fk.disk + off, 0, len);
		break;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int fake_ctrl(struct fake_req *r)
{
	switch (ibnbd_msg_type(r->usr, r->usr_len)) {
	case IBNBD_MSG_SESS_INFO:
		ibnbd_init_sess_info_rsp(r->iov.iov_base, IBNBD_PROTO_VER_MAJOR);
		return 0;
	case IBNBD_MSG_OPEN: {
		struct ibnbd_msg_open_rsp *rsp = r->iov.iov_base;

		if (fk.is_open && !fk.forgot) {
			ibnbd_init_open_rsp_err(rsp, -EBUSY, "already open");
			return 0;
		}
		if (fk.busy_ms) {
			if (!fk.busy_until)
				fk.busy_until = now_s() + fk.busy_ms / 1000.0;
			if (now_s() < fk.busy_until) {
				fk.busy_refusals++;
				ibnbd_init_open_rsp_err(rsp, -EBUSY,
							"previous writer's IO in flight");
				return 0;
			}
		}
		fk.forgot = false;
		fk.is_open = true;
		memset(rsp, 0, sizeof(*rsp));
		rsp->hdr.type = cpu_to_le16(IBNBD_MSG_OPEN_RSP);
		rsp->device_id = cpu_to_le32(fk.handle);
		rsp->nsectors = cpu_to_le64(DISK_SIZE >> 9);
		rsp->max_hw_sectors = cpu_to_le32(fk.max_io >> 9);
		rsp->max_discard_sectors = cpu_to_le32(fk.max_discard_sectors);
		rsp->logical_block_size = cpu_to_le16(512);
		rsp->physical_block_size = cpu_to_le16(512);
		rsp->max_segments = cpu_to_le16(1);
		rsp->dev_flags = cpu_to_le32(IBNBD_DEV_DISCARD);
		rsp->access_mode = IBNBD_ACCESS_RW;
		fk.opens++;
		return 0;
	}
	case IBNBD_MSG_CLOSE:
		fk.is_open = false;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Plugging only batches posts in the real library: nothing to fake. */
void ibtrs_clt_plug(struct ibtrs_clt *clt)
{
	(void)clt;
}

void ibtrs_clt_unplug(struct ibtrs_clt *clt)
{
	(void)clt;
}

/* Answers everything submitted so far, in order (callbacks may submit). */
int ibtrs_clt_poll(struct ibtrs_clt *clt, int timeout_ms)
{
	struct fake_req batch[MAX_REQS];
	unsigned int i, n = fk.nreqs;

	if (fk.poll_max && n > fk.poll_max)
		n = fk.poll_max;
	memcpy(batch, fk.reqs, n * sizeof(*batch));
	/* the rest stay queued, ahead of what the callbacks submit */
	memmove(fk.reqs, fk.reqs + n, (fk.nreqs - n) * sizeof(*batch));
	fk.nreqs -= n;
	for (i = 0; i < n; i++) {
		struct fake_req *r = &batch[i];
		int err = ibnbd_msg_type(r->usr, r->usr_len) == IBNBD_MSG_IO ?
			  fake_io(r) : fake_ctrl(r);

		r->conf(r->priv, err);
	}
	return n;
}

/* ---- tests ---------------------------------------------------------- */

static int failed;

static void __attribute__((format(printf, 2, 3)))
result(const char *name, const char *fmt, ...)
{
	char why[256] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	if (fmt) {
		printf("FAIL: %s: %s\n", name, why);
		failed = 1;
	} else {
		printf("PASS: %s\n", name);
	}
}

struct tio {
	struct ibnbd_clt_io io;
	int done;
	int err;
};

static void tio_done(struct ibnbd_clt_io *io, int err)
{
	struct tio *t = (struct tio *)io;

	t->done++;
	t->err = err;
}

static struct ibnbd_clt *open_clt(unsigned int qd, unsigned int cap,
				  uint32_t max_discard_sectors)
{
	struct ibnbd_clt_params p = {
		.paths = "10.0.0.1", .devpath = "d", .sessname = "t",
		.queue_depth = cap,
	};
	struct ibnbd_clt *c;
	int err;

	fake_reset(qd, max_discard_sectors);
	c = ibnbd_clt_create(&p, &err);
	if (!c || ibnbd_clt_connect(c) || ibnbd_clt_dev_open(c, IBNBD_ACCESS_RW)) {
		fprintf(stderr, "open_clt: %s\n", ibnbd_clt_errmsg(c));
		exit(2);
	}
	return c;
}

static void prep(struct ibnbd_clt *c, struct tio *t, enum ibnbd_io_op op,
		 uint64_t off, uint64_t len, void *buf)
{
	t->io.op = op;
	t->io.flags = 0;
	t->io.offset = off;
	t->io.len = len;
	t->io.buf = buf;
	t->io.done = tio_done;
	t->done = 0;
	t->err = 1;
}

/* Polls until every IO of @t[@n] is done (bounded). */
static bool wait_all(struct ibnbd_clt *c, struct tio *t, unsigned int n)
{
	unsigned int i, round;

	for (round = 0; round < 10000; round++) {
		for (i = 0; i < n && t[i].done; i++)
			;
		if (i == n)
			return true;
		ibnbd_clt_poll(c, 0);
	}
	return false;
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
}

#define NIO	8
#define BIG	(1U << 20)

/* 8 x 1 MiB writes, then reads, on 4 permits: parts wait, data lands right. */
static void test_split_rw(void)
{
	const char *name = "split_write_read_1m_qd4";
	struct ibnbd_clt *c = open_clt(128, 4, 0);
	static struct tio t[NIO];
	unsigned char *wbuf = malloc(NIO * BIG), *rbuf = malloc(NIO * BIG);
	struct ibnbd_clt_stats st;
	unsigned int i;

	for (i = 0; i < NIO; i++) {
		if (ibnbd_clt_io_init(c, &t[i].io, BIG))
			return result(name, "io_init");
		fill(wbuf + i * BIG, BIG, i + 1);
		prep(c, &t[i], IBNBD_OP_WRITE, (uint64_t)i * BIG, BIG, wbuf + i * BIG);
		if (ibnbd_clt_submit(c, &t[i].io))
			return result(name, "submit write %u: %s", i, ibnbd_clt_errmsg(c));
	}
	if (fk.held > 4)
		return result(name, "%u permits held, cap 4", fk.held);
	if (!wait_all(c, t, NIO))
		return result(name, "writes did not complete (deadlock?)");
	for (i = 0; i < NIO; i++)
		if (t[i].done != 1 || t[i].err)
			return result(name, "write %u: done %d err %d", i, t[i].done, t[i].err);
	if (memcmp(fk.disk, wbuf, NIO * BIG))
		return result(name, "disk differs from the written data");
	memset(rbuf, 0xee, NIO * BIG);
	for (i = 0; i < NIO; i++) {
		prep(c, &t[i], IBNBD_OP_READ, (uint64_t)i * BIG, BIG, rbuf + i * BIG);
		if (ibnbd_clt_submit(c, &t[i].io))
			return result(name, "submit read %u", i);
	}
	if (!wait_all(c, t, NIO))
		return result(name, "reads did not complete");
	for (i = 0; i < NIO; i++)
		if (t[i].err)
			return result(name, "read %u: err %d", i, t[i].err);
	if (memcmp(rbuf, wbuf, NIO * BIG))
		return result(name, "read data differs (parts in the wrong slice?)");
	ibnbd_clt_get_stats(c, &st);
	if (st.parts != 2 * NIO * 8 || st.split != 2 * NIO || !st.waits)
		return result(name, "stats parts %llu split %llu waits %llu",
			      (unsigned long long)st.parts,
			      (unsigned long long)st.split,
			      (unsigned long long)st.waits);
	if (fk.max_held > 4 || fk.max_bi_size != 128 * 1024 || fk.bad_msg)
		return result(name, "max held %u max part %u bad msg %d",
			      fk.max_held, fk.max_bi_size, fk.bad_msg);
	for (i = 0; i < NIO; i++)
		ibnbd_clt_io_free(&t[i].io);
	ibnbd_clt_destroy(c);
	free(wbuf);
	free(rbuf);
	result(name, NULL);
}

/* An IO that is not a multiple of the part size: last part shorter. */
static void test_odd_size(void)
{
	const char *name = "split_odd_size";
	struct ibnbd_clt *c = open_clt(2, 0, 0);
	size_t len = 1540 * 1024;
	unsigned char *w = malloc(len), *r = malloc(len);
	struct tio t;

	if (ibnbd_clt_io_init(c, &t.io, 4 * BIG))
		return result(name, "io_init");
	fill(w, len, 9);
	prep(c, &t, IBNBD_OP_WRITE, 512 * 3, len, w);
	if (ibnbd_clt_submit(c, &t.io) || !wait_all(c, &t, 1) || t.err)
		return result(name, "write failed");
	prep(c, &t, IBNBD_OP_READ, 512 * 3, len, r);
	if (ibnbd_clt_submit(c, &t.io) || !wait_all(c, &t, 1) || t.err)
		return result(name, "read failed");
	if (memcmp(w, r, len) || memcmp(fk.disk + 512 * 3, w, len))
		return result(name, "data differs");
	ibnbd_clt_io_free(&t.io);
	ibnbd_clt_destroy(c);
	free(w);
	free(r);
	result(name, NULL);
}

/* DISCARD longer than max discard: parts of at most max discard, no data. */
static void test_discard_split(void)
{
	const char *name = "discard_split";
	struct ibnbd_clt *c = open_clt(4, 0, 8);	/* 4 KiB */
	struct ibnbd_clt_stats st;
	struct tio t;

	memset(fk.disk, 0xaa, DISK_SIZE);
	if (ibnbd_clt_io_init(c, &t.io, BIG))
		return result(name, "io_init");
	prep(c, &t, IBNBD_OP_DISCARD, 4096, 64 * 1024, NULL);
	if (ibnbd_clt_submit(c, &t.io) || !wait_all(c, &t, 1) || t.err)
		return result(name, "discard failed: %d", t.err);
	ibnbd_clt_get_stats(c, &st);
	if (st.parts != 16 || fk.max_bi_size != 4096 || fk.bad_msg)
		return result(name, "parts %llu max part %u bad msg %d",
			      (unsigned long long)st.parts, fk.max_bi_size, fk.bad_msg);
	if (fk.disk[4095] != 0xaa || fk.disk[4096] || fk.disk[4096 + 65535] ||
	    fk.disk[4096 + 65536] != 0xaa)
		return result(name, "wrong range discarded");
	ibnbd_clt_io_free(&t.io);
	ibnbd_clt_destroy(c);
	result(name, NULL);
}

/* Errors in parts 2 and 5 of 8: the IO fails once, with the first error. */
static void test_first_error(void)
{
	const char *name = "part_error_first_wins";
	struct ibnbd_clt *c = open_clt(128, 0, 0);
	unsigned char *b = malloc(BIG);
	struct tio t[2];

	if (ibnbd_clt_io_init(c, &t[0].io, BIG) || ibnbd_clt_io_init(c, &t[1].io, BIG))
		return result(name, "io_init");
	fk.fail_at[0] = 2;
	fk.fail_err[0] = -EIO;
	fk.fail_at[1] = 5;
	fk.fail_err[1] = -ENOSPC;
	prep(c, &t[0], IBNBD_OP_READ, 0, BIG, b);
	prep(c, &t[1], IBNBD_OP_READ, BIG, 4096, b);
	if (ibnbd_clt_submit(c, &t[0].io) || ibnbd_clt_submit(c, &t[1].io) ||
	    !wait_all(c, t, 2))
		return result(name, "did not complete");
	/* Let any stray completion show up. */
	ibnbd_clt_poll(c, 0);
	if (t[0].done != 1 || t[0].err != -EIO)
		return result(name, "done %d times, err %d (want once, %d)",
			      t[0].done, t[0].err, -EIO);
	if (t[1].done != 1 || t[1].err)
		return result(name, "the next IO: done %d err %d", t[1].done, t[1].err);
	if (ibnbd_clt_inflight(c) || fk.held)
		return result(name, "inflight %u permits %u after all done",
			      ibnbd_clt_inflight(c), fk.held);
	ibnbd_clt_io_free(&t[0].io);
	ibnbd_clt_io_free(&t[1].io);
	ibnbd_clt_destroy(c);
	free(b);
	result(name, NULL);
}

/* The transport refuses at submission: the IO completes with that error. */
static void test_reject(void)
{
	const char *name = "transport_reject";
	struct ibnbd_clt *c = open_clt(128, 0, 0);
	unsigned char *b = malloc(BIG);
	struct tio t;

	if (ibnbd_clt_io_init(c, &t.io, BIG))
		return result(name, "io_init");
	fk.reject_err = -ENOTCONN;
	prep(c, &t, IBNBD_OP_WRITE, 0, BIG, b);
	if (ibnbd_clt_submit(c, &t.io) || !wait_all(c, &t, 1))
		return result(name, "did not complete");
	if (t.done != 1 || t.err != -ENOTCONN || fk.held || ibnbd_clt_inflight(c))
		return result(name, "done %d err %d held %u", t.done, t.err, fk.held);
	fk.reject_err = 0;
	ibnbd_clt_io_free(&t.io);
	ibnbd_clt_destroy(c);
	free(b);
	result(name, NULL);
}

/* Misaligned or longer than prepared for: refused, @done not run. */
static void test_bad_args(void)
{
	const char *name = "bad_args";
	struct ibnbd_clt *c = open_clt(128, 0, 0);
	unsigned char *b = malloc(4 * BIG);
	struct tio t;
	int r1, r2;

	if (ibnbd_clt_io_init(c, &t.io, BIG))
		return result(name, "io_init");
	prep(c, &t, IBNBD_OP_WRITE, 100, 4096, b);
	r1 = ibnbd_clt_submit(c, &t.io);
	prep(c, &t, IBNBD_OP_WRITE, 0, 4 * BIG, b);
	r2 = ibnbd_clt_submit(c, &t.io);
	ibnbd_clt_poll(c, 0);
	if (r1 != -EINVAL || r2 != -E2BIG || t.done)
		return result(name, "misaligned %d, too long %d, done %d", r1, r2, t.done);
	ibnbd_clt_io_free(&t.io);
	ibnbd_clt_destroy(c);
	free(b);
	result(name, NULL);
}

/*
 * The server "restarts" and forgets the handle: one re-open, every part
 * resent, data right, no second OPEN (which the server refuses: the device
 * is ours already). @new_handle 0 keeps the same handle value; @poll_max 1
 * makes the answers trickle in, so parts sent before the re-open are
 * answered -ESTALE after it (seen in a VM run, where comparing handle
 * values re-opened again and failed IO with EBUSY).
 */
static void estale_case(const char *name, uint32_t new_handle,
			unsigned int poll_max, int seed)
{
	struct ibnbd_clt *c = open_clt(128, 0, 0);
	unsigned char *w = malloc(BIG), *r = malloc(BIG);
	struct ibnbd_clt_stats st;
	struct tio t;

	if (ibnbd_clt_io_init(c, &t.io, BIG))
		return result(name, "io_init");
	fill(w, BIG, seed);
	if (new_handle)
		fk.handle = new_handle;
	fk.forgot = true;
	fk.poll_max = poll_max;
	prep(c, &t, IBNBD_OP_WRITE, 0, BIG, w);
	if (ibnbd_clt_submit(c, &t.io) || !wait_all(c, &t, 1) || t.err)
		return result(name, "write: err %d", t.err);
	prep(c, &t, IBNBD_OP_READ, 0, BIG, r);
	if (ibnbd_clt_submit(c, &t.io) || !wait_all(c, &t, 1) || t.err)
		return result(name, "read: err %d", t.err);
	ibnbd_clt_get_stats(c, &st);
	if (st.reopens != 1 || fk.opens != 2 || st.stale != 8 || memcmp(w, r, BIG))
		return result(name, "reopens %llu opens %u stale %llu data %s",
			      (unsigned long long)st.reopens, fk.opens,
			      (unsigned long long)st.stale,
			      memcmp(w, r, BIG) ? "differs" : "ok");
	ibnbd_clt_io_free(&t.io);
	ibnbd_clt_destroy(c);
	free(w);
	free(r);
	result(name, NULL);
}

/*
 * The "restarted" server refuses the re-open with EBUSY for 1.2 s (the
 * previous session's writes still held by its backing device) while every
 * poll returns at once: the client must pace its tries and keep trying,
 * not spend them all in a burst (seen on the debug kernel: 20 tries in
 * 1.2 s, then every write failed with EBUSY).
 */
static void test_reopen_busy(void)
{
	const char *name = "estale_reopen_waits_out_ebusy";
	struct ibnbd_clt *c = open_clt(128, 0, 0);
	unsigned char *w = malloc(BIG);
	struct ibnbd_clt_stats st;
	struct tio t;

	if (ibnbd_clt_io_init(c, &t.io, BIG))
		return result(name, "io_init");
	fill(w, BIG, 7);
	fk.forgot = true;
	fk.busy_ms = 1200;
	prep(c, &t, IBNBD_OP_WRITE, 0, BIG, w);
	if (ibnbd_clt_submit(c, &t.io) || !wait_all(c, &t, 1) || t.err)
		return result(name, "write: err %d after %u refusals", t.err,
			      fk.busy_refusals);
	ibnbd_clt_get_stats(c, &st);
	/* paced at 500 ms: refused at 0, 0.5 and 1.0 s, opened at 1.5 s */
	if (st.reopens != 1 || fk.busy_refusals < 2 || fk.busy_refusals > 4)
		return result(name, "reopens %llu refusals %u",
			      (unsigned long long)st.reopens, fk.busy_refusals);
	ibnbd_clt_io_free(&t.io);
	ibnbd_clt_destroy(c);
	free(w);
	result(name, NULL);
}

int main(void)
{
	/* Lines survive a sanitizer exit (failure paths leak on purpose). */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_split_rw();
	test_odd_size();
	test_discard_split();
	test_first_error();
	test_reject();
	test_bad_args();
	estale_case("estale_reopen", 99, 0, 3);
	estale_case("estale_same_handle_reopens_once", 0, 1, 5);
	test_reopen_busy();
	free(fk.disk);
	return failed;
}
