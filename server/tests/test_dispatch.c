// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_dispatch.c - the daemon's request handling without RDMA: links the
 * daemon's units (srv_sess.c, srv_io.c, srv_stats.c, srv_log.c; no main),
 * stubs the few libibtrs calls they make, and feeds srv_rdma_ev() and
 * srv_link_ev() good and malformed requests. Backend IO is
 * real (io_uring on a file in /tmp). Checks that every request is answered
 * exactly once with the right status, and that bad input never reaches
 * memory outside the request's own buffer (ASan + guard bytes).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "srvd.h"

#include "test.h"

/* ---- libibtrs stubs ---------------------------------------------- */

struct ibtrs_srv_op {
	int answered;
	int status;
	size_t len;
};

static void *stub_priv;
static int resp_calls;

int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len)
{
	op->answered++;
	op->status = status;
	op->len = len;
	resp_calls++;
	return 0;
}
const char *ibtrs_srv_sessname(const struct ibtrs_srv_sess *sess)
{
	return (const char *)sess;
}
void ibtrs_srv_set_sess_priv(struct ibtrs_srv_sess *sess, void *priv)
{
	(void)sess;
	stub_priv = priv;
}
int ibtrs_srv_sess_paths(const struct ibtrs_srv_sess *sess)
{
	(void)sess;
	return 1;
}
void ibtrs_srv_sess_pool(const struct ibtrs_srv_sess *sess, void **addr,
			 size_t *len)
{
	(void)sess;
	*addr = NULL;
	*len = 0;
}
static int plug_depth;
void ibtrs_srv_plug(struct ibtrs_srv_ctx *ctx)
{
	(void)ctx;
	plug_depth++;
}
void ibtrs_srv_unplug(struct ibtrs_srv_ctx *ctx)
{
	(void)ctx;
	plug_depth--;
}
void ibtrs_srv_get_stats(const struct ibtrs_srv_ctx *ctx,
			 struct ibtrs_srv_stats *st)
{
	(void)ctx;
	memset(st, 0, sizeof(*st));
}
/* ---- io_uring_submit, wrapped (-Wl,--wrap) --------------------------- */

/*
 * Every batch the daemon hands to the kernel passes here: a batch whose last
 * SQE has IOSQE_IO_LINK cuts a chain (its successor runs unordered in a
 * later batch), and an SQE without user data cannot be reaped. submit_fail
 * makes the submit fail without touching the ring.
 */
int __real_io_uring_submit(struct io_uring *ring);

static int submit_fail;
static unsigned int split_links, null_sqes, submits;

int __wrap_io_uring_submit(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned int i;

	if (submit_fail)
		return submit_fail;
	submits++;
	for (i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *sqe = &sq->sqes[i & sq->ring_mask];

		if (!sqe->user_data)
			null_sqes++;
		if (i + 1 == sq->sqe_tail && (sqe->flags & IOSQE_IO_LINK))
			split_links++;
	}
	return __real_io_uring_submit(ring);
}

/* ---- fixture ------------------------------------------------------ */

#define CHUNK	(128 * 1024)
#define FILE_SZ	(1 << 20)

static struct srvd tdd;
static char troot[64];
static struct srv_sess *sess_a, *sess_b;
static uint8_t *chunk;		/* CHUNK bytes + guard page after */
static size_t chunk_map;

static struct srv_sess *connect_sess(const char *name)
{
	stub_priv = NULL;
	srv_link_ev((struct ibtrs_srv_sess *)name, IBTRS_SRV_LINK_EV_CONNECTED, NULL);
	return stub_priv;
}

static void setup(void)
{
	char p[128];
	int fd;

	srv_log_setup(getenv("TEST_VERBOSE") ? SRV_LOG_DEBUG : SRV_LOG_ERR,
		      false);
	snprintf(troot, sizeof(troot), "/tmp/ibnbd-disp-XXXXXX");
	if (!mkdtemp(troot))
		exit(2);
	snprintf(p, sizeof(p), "%s/disk", troot);
	fd = open(p, O_CREAT | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, FILE_SZ))
		exit(2);
	close(fd);
	snprintf(p, sizeof(p), "%s/small", troot);
	fd = open(p, O_CREAT | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, 8192))
		exit(2);
	close(fd);

	srvd_global = &tdd;
	tdd.deferred_tail = &tdd.deferred;
	tdd.o.max_devs = 4;
	snprintf(tdd.root, sizeof(tdd.root), "%s", troot);
	tdd.root_fd = open(troot, O_PATH | O_DIRECTORY);
	tdd.chunk_size = CHUNK;
	tdd.gen = 0x1234;
	if (tdd.root_fd < 0 || io_uring_queue_init(64, &tdd.ring, 0))
		exit(2);
	if (srv_discard_start(&tdd.discard))
		exit(2);

	/* Chunk followed by an inaccessible page: overruns fault. */
	chunk_map = CHUNK + 4096;
	chunk = mmap(NULL, chunk_map, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (chunk == MAP_FAILED || mprotect(chunk + CHUNK, 4096, PROT_NONE))
		exit(2);
	sess_a = connect_sess("sess-a");
	sess_b = connect_sess("sess-b");
	if (!sess_a || !sess_b)
		exit(2);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", troot);
	if (system(cmd))
		fprintf(stderr, "cleanup failed\n");
}

/* Wait for every in-flight IO to complete and be answered. */
static void drain(void)
{
	struct io_uring_cqe *cqe;

	struct __kernel_timespec ts = { .tv_nsec = 10 * 1000000 };
	int i;

	submit_fail = 0;
	io_uring_submit(&tdd.ring);
	for (i = 0; tdd.inflight && i < 3000; i++) {
		/* io_uring completions, and discards from the worker */
		io_uring_wait_cqe_timeout(&tdd.ring, &cqe, &ts);
		srv_reap(&tdd);
		srv_discard_reap(&tdd);
	}
	srv_flush_deferred(&tdd);
}

/* One request as IBTRS would deliver it; returns rdma_ev's value. */
static int req(struct srv_sess *s, struct ibtrs_srv_op *op, enum ibtrs_dir dir,
	       size_t datalen, const void *usr, size_t usrlen)
{
	int ret;

	memset(op, 0, sizeof(*op));
	tdd.in_poll = true;
	ret = srv_rdma_ev((struct ibtrs_srv_sess *)s->name, s, op, dir,
			  chunk + CHUNK - datalen, datalen, usr, usrlen);
	tdd.in_poll = false;
	srv_flush_deferred(&tdd);
	return ret;
}

static uint8_t *data_of(size_t datalen)
{
	return chunk + CHUNK - datalen;
}

static uint32_t open_dev(struct srv_sess *s, const char *path, int mode,
			 int *err, char *reason)
{
	struct ibnbd_msg_open m;
	struct ibtrs_srv_op op;
	struct ibnbd_msg_open_rsp *rsp;
	int ret;

	ibnbd_init_open(&m, mode, path);
	ret = req(s, &op, IBTRS_READ, sizeof(*rsp), &m, sizeof(m));
	rsp = (void *)data_of(sizeof(*rsp));
	*err = ret ? ret : (op.answered == 1 && op.status == 0 &&
			    op.len == sizeof(*rsp) &&
			    !ibnbd_validate_open_rsp(rsp, sizeof(*rsp))) ?
			    -(int)le32_to_cpu(rsp->error) : -999;
	if (reason)
		snprintf(reason, 64, "%s", rsp->reason);
	return le32_to_cpu(rsp->device_id);
}

static void close_dev(struct srv_sess *s, uint32_t h)
{
	struct ibnbd_msg_close c;
	struct ibtrs_srv_op op;

	ibnbd_init_close(&c, h);
	req(s, &op, IBTRS_WRITE, 0, &c, sizeof(c));
}

static int io(struct srv_sess *s, struct ibtrs_srv_op *op, uint32_t h,
	      uint32_t rw, uint64_t sector, uint32_t len, size_t datalen)
{
	struct ibnbd_msg_io m;
	uint32_t opc = rw & IBNBD_OP_MASK;

	ibnbd_init_io(&m, h, sector, rw, len, 0);
	return req(s, op, opc == IBNBD_OP_READ ? IBTRS_READ : IBTRS_WRITE,
		   datalen, &m, sizeof(m));
}

/* ---- cases -------------------------------------------------------- */

static void malformed_headers(void)
{
	struct ibtrs_srv_op op;
	uint8_t junk[300];
	int calls = resp_calls;

	memset(junk, 0, sizeof(junk));
	T_EQ(req(sess_a, &op, IBTRS_READ, 64, junk, 0), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_READ, 64, NULL, 0), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_READ, 64, junk, 3), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_READ, 64, junk, sizeof(junk)), -EINVAL);
	junk[0] = 99;
	T_EQ(req(sess_a, &op, IBTRS_READ, 64, junk, sizeof(junk)), -EINVAL);
	junk[0] = IBNBD_MSG_OPEN_RSP;	/* server-to-client type */
	T_EQ(req(sess_a, &op, IBTRS_READ, 200, junk, sizeof(junk)), -EINVAL);
	junk[0] = IBNBD_MSG_SESS_INFO_RSP;
	T_EQ(req(sess_a, &op, IBTRS_READ, 64, junk, sizeof(junk)), -EINVAL);
	/* Non-zero return answers at once: the handler must not resp too. */
	T_EQ(resp_calls, calls);
	T_CHECK(sess_a->bad_msgs >= 7);
}

static void sess_info(void)
{
	struct ibnbd_msg_sess_info m;
	struct ibnbd_msg_sess_info_rsp *rsp = (void *)data_of(sizeof(*rsp));
	struct ibtrs_srv_op op;

	ibnbd_init_sess_info(&m, 200);
	T_EQ(req(sess_a, &op, IBTRS_WRITE, 0, &m, sizeof(m)), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp) - 1, &m, sizeof(m)), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp), &m, sizeof(m) - 1), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp), &m, sizeof(m)), 0);
	T_EQ(op.answered, 1);
	T_EQ(op.status, 0);
	T_EQ(op.len, sizeof(*rsp));
	T_EQ(ibnbd_validate_sess_info_rsp(rsp, sizeof(*rsp)), 0);
	T_EQ(rsp->ver, IBNBD_PROTO_VER_MAJOR);
	ibnbd_init_sess_info(&m, 0);
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp), &m, sizeof(m)), -EPROTO);
}

static void open_refusals(void)
{
	char why[64];
	int err;
	struct ibnbd_msg_open m;
	struct ibtrs_srv_op op;
	struct ibnbd_msg_open_rsp *rsp = (void *)data_of(sizeof(*rsp));

	open_dev(sess_a, "../etc/passwd", IBNBD_ACCESS_RO, &err, why);
	T_EQ(err, -EACCES);
	T_CHECK(strstr(why, "escapes"));
	open_dev(sess_a, "/etc/passwd", IBNBD_ACCESS_RO, &err, why);
	T_EQ(err, -EACCES);
	T_CHECK(strstr(why, "outside"));
	open_dev(sess_a, "nope", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, -ENOENT);
	open_dev(sess_a, ".", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, -EINVAL);

	/* Malformed OPEN: path without NUL, bad mode: refusal, not a crash. */
	memset(&m, 0, sizeof(m));
	m.hdr.type = cpu_to_le16(IBNBD_MSG_OPEN);
	memset(m.dev_path, 'A', sizeof(m.dev_path));
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp), &m, sizeof(m)), 0);
	T_EQ(op.answered, 1);
	T_EQ(le32_to_cpu(rsp->error), ENAMETOOLONG);
	T_CHECK(strstr(rsp->reason, "malformed"));
	ibnbd_init_open(&m, IBNBD_ACCESS_RW, "disk");
	m.access_mode = 7;
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp), &m, sizeof(m)), 0);
	T_EQ(le32_to_cpu(rsp->error), EINVAL);
	/* Response buffer too small, wrong direction, truncated message. */
	ibnbd_init_open(&m, IBNBD_ACCESS_RW, "disk");
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp) - 1, &m, sizeof(m)), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_WRITE, 0, &m, sizeof(m)), -EINVAL);
	T_EQ(req(sess_a, &op, IBTRS_READ, sizeof(*rsp), &m, sizeof(m) - 1), 0);
	T_EQ(le32_to_cpu(rsp->error), EINVAL);
	T_EQ(tdd.reg.ndevs, 0);
}

static uint32_t h_rw, h_ro;

static void open_and_arbitrate(void)
{
	char why[64];
	int err;
	uint32_t h;

	h_rw = open_dev(sess_a, "disk", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, 0);
	T_EQ(h_rw >> 16, 0x1234);
	/* Second rw (other session) refused, with a reason. */
	h = open_dev(sess_b, "/tmp/../tmp/x", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, -EACCES);
	(void)h;
	{
		char abs[128];

		snprintf(abs, sizeof(abs), "%s/disk", troot);
		open_dev(sess_b, abs, IBNBD_ACCESS_RW, &err, why);
	}
	T_EQ(err, -EBUSY);
	T_CHECK(strstr(why, "already opened for writing"));
	h_ro = open_dev(sess_b, "disk", IBNBD_ACCESS_RO, &err, why);
	T_EQ(err, 0);
	h = open_dev(sess_b, "disk", IBNBD_ACCESS_MIGRATION, &err, why);
	T_EQ(err, 0);
	open_dev(sess_b, "disk", IBNBD_ACCESS_MIGRATION, &err, why);
	T_EQ(err, -EBUSY);
	/* Close the migration handle: a new migration opener fits again. */
	{
		struct ibnbd_msg_close c;
		struct ibtrs_srv_op op;

		ibnbd_init_close(&c, h);
		T_EQ(req(sess_b, &op, IBTRS_WRITE, 0, &c, sizeof(c)), 0);
		T_EQ(op.answered, 1);
		T_EQ(req(sess_b, &op, IBTRS_WRITE, 0, &c, sizeof(c)), -ESTALE);
		T_EQ(req(sess_b, &op, IBTRS_WRITE, 0, &c, sizeof(c) - 1), -EINVAL);
	}
	h = open_dev(sess_b, "disk", IBNBD_ACCESS_MIGRATION, &err, why);
	T_EQ(err, 0);
	/* Per-session device limit (max_devs = 4). */
	open_dev(sess_b, "small", IBNBD_ACCESS_RO, &err, why);
	T_EQ(err, 0);
	open_dev(sess_b, "small", IBNBD_ACCESS_RO, &err, why);
	T_EQ(err, 0);
	open_dev(sess_b, "small", IBNBD_ACCESS_RO, &err, why);
	T_EQ(err, -EMFILE);
}

static void io_rejections(void)
{
	struct ibtrs_srv_op op;
	int calls = resp_calls;

	/* Unknown handles: wrong tag, wrong slot, other session's handle. */
	T_EQ(io(sess_a, &op, 0, IBNBD_OP_READ, 0, 4096, 4096), -ESTALE);
	T_EQ(io(sess_a, &op, 0x12340003, IBNBD_OP_READ, 0, 4096, 4096), -ESTALE);
	T_EQ(io(sess_a, &op, 0x1234ffff, IBNBD_OP_READ, 0, 4096, 4096), -ESTALE);
	T_EQ(io(sess_a, &op, h_rw ^ 0x10000, IBNBD_OP_READ, 0, 4096, 4096), -ESTALE);
	/* Beyond the end, crossing the end, overflow. */
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_READ, FILE_SZ / 512, 4096, 4096), -ERANGE);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_WRITE, FILE_SZ / 512 - 4, 4096, 4096), -ERANGE);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_READ, ~0ULL >> 9, 512, 512), -EINVAL);
	/* Larger than the chunk / max IO, data length mismatch. */
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_WRITE, 0, CHUNK * 2, CHUNK), -EINVAL);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_WRITE, 0, 8192, 4096), -EINVAL);
	/* Read-only handle refuses writes, discards and zeroing. */
	T_EQ(io(sess_b, &op, h_ro, IBNBD_OP_WRITE, 0, 4096, 4096), -EROFS);
	T_EQ(io(sess_b, &op, h_ro, IBNBD_OP_DISCARD, 0, 4096, 0), -EROFS);
	T_EQ(io(sess_b, &op, h_ro, IBNBD_OP_WRITE_ZEROES, 0, 4096, 0), -EROFS);
	/* Unknown op and flags. */
	T_EQ(io(sess_a, &op, h_rw, 9, 0, 4096, 0), -EOPNOTSUPP);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_READ | (1U << 20), 0, 4096, 4096), -EINVAL);
	T_EQ(resp_calls, calls);
	T_EQ(tdd.inflight, 0);
}

static void io_roundtrip(void)
{
	struct ibtrs_srv_op op;
	uint8_t *buf;
	uint8_t pat[8192];
	unsigned int i;
	int fd;
	char p[128];

	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	buf = data_of(8192);
	memcpy(buf, pat, sizeof(pat));
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_WRITE | IBNBD_F_FUA | IBNBD_F_PREFLUSH,
		16, 8192, 8192), 0);
	T_EQ(op.answered, 0);	/* asynchronous */
	drain();
	T_EQ(op.answered, 1);
	T_EQ(op.status, 0);

	/* On disk at 16 * 512. */
	snprintf(p, sizeof(p), "%s/disk", troot);
	fd = open(p, O_RDONLY);
	T_CHECK(fd >= 0);
	{
		uint8_t back[8192];

		T_EQ(pread(fd, back, sizeof(back), 16 * 512), (ssize_t)sizeof(back));
		T_CHECK(!memcmp(back, pat, sizeof(pat)));
	}

	memset(data_of(8192), 0, 8192);
	T_EQ(io(sess_b, &op, h_ro, IBNBD_OP_READ, 16, 8192, 8192), 0);
	drain();
	T_EQ(op.answered, 1);
	T_EQ(op.status, 0);
	T_EQ(op.len, 8192);
	T_CHECK(!memcmp(data_of(8192), pat, sizeof(pat)));

	/* Unaligned chunk address: served through a bounce buffer. */
	memset(chunk, 0, 4096 + 8);
	{
		struct ibnbd_msg_io m;

		ibnbd_init_io(&m, h_ro, 16, IBNBD_OP_READ, 4096, 0);
		memset(&op, 0, sizeof(op));
		T_EQ(srv_rdma_ev(NULL, sess_b, &op, IBTRS_READ, chunk + 8, 4096,
				 &m, sizeof(m)), 0);
		drain();
		T_EQ(op.status, 0);
		T_CHECK(!memcmp(chunk + 8, pat, 4096));
	}

	/* FLUSH, WRITE_ZEROES, DISCARD on the file. */
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_FLUSH, 0, 0, 0), 0);
	drain();
	T_EQ(op.status, 0);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_WRITE_ZEROES | IBNBD_F_FUA, 16, 4096, 0), 0);
	drain();
	T_EQ(op.status, 0);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_DISCARD, 24, 4096, 0), 0);
	drain();
	T_EQ(op.status, 0);
	{
		uint8_t back[8192], zero[8192] = { 0 };

		T_EQ(pread(fd, back, sizeof(back), 16 * 512), (ssize_t)sizeof(back));
		T_CHECK(!memcmp(back, zero, sizeof(zero)));
	}
	close(fd);
	T_CHECK(sess_a->st.writes >= 1 && sess_a->st.flushes >= 1 &&
		sess_a->st.discards >= 1 && sess_a->st.write_zeroes >= 1);
	T_CHECK(sess_b->st.reads >= 2);
}

/*
 * Random bytes as requests, and well-formed IO requests with random ops,
 * flags, ranges and a byte or two corrupted: nothing may crash, a refused
 * request is never answered by the handler, an accepted one exactly once.
 */
static void fuzz_requests(void)
{
	static const uint32_t ops[] = {
		IBNBD_OP_READ, IBNBD_OP_WRITE, IBNBD_OP_FLUSH, IBNBD_OP_DISCARD,
		IBNBD_OP_WRITE_ZEROES,
	};
	struct ibtrs_srv_op op;
	uint8_t msg[300];
	unsigned int seed = 12345, i, j, accepted_io = 0;

	for (i = 0; i < 20000; i++) {
		size_t len = rand_r(&seed) % sizeof(msg);
		size_t datalen = rand_r(&seed) % (CHUNK + 1);
		int dir = rand_r(&seed) & 1;
		int ret;

		for (j = 0; j < len; j++)
			msg[j] = rand_r(&seed);
		if (len >= 2 && (rand_r(&seed) & 1)) {
			msg[0] = 1 + rand_r(&seed) % 6;
			msg[1] = 0;
		}
		if (len >= 8 && msg[0] == IBNBD_MSG_IO && (rand_r(&seed) & 1)) {
			/* a valid handle sometimes, to get past the lookup */
			uint32_t h = cpu_to_le32(h_rw);

			memcpy(msg + 4, &h, 4);
		}
		if (!(rand_r(&seed) % 3)) {
			/* A well-formed IO, sometimes slightly corrupted. */
			struct ibnbd_msg_io m;
			uint32_t opc = ops[rand_r(&seed) % 5];
			uint32_t flags = rand_r(&seed) & IBNBD_F_ALL;
			uint32_t sz = 512 * (1 + rand_r(&seed) % 32);

			ibnbd_init_io(&m, h_rw, rand_r(&seed) % (FILE_SZ / 512),
				      opc | flags, opc == IBNBD_OP_FLUSH ? 0 : sz, 0);
			len = sizeof(m);
			memcpy(msg, &m, len);
			if (rand_r(&seed) & 1)
				msg[rand_r(&seed) % len] ^= 1 << (rand_r(&seed) % 8);
			dir = opc == IBNBD_OP_READ ? IBTRS_READ : IBTRS_WRITE;
			datalen = opc == IBNBD_OP_READ || opc == IBNBD_OP_WRITE ?
				  sz : 0;
		}
		ret = req(sess_a, &op, dir, datalen, msg, len);
		if (!ret && !op.answered)
			accepted_io++;
		drain();
		if (ret)
			T_EQ(op.answered, 0);
		else
			T_EQ(op.answered, 1);
	}
	T_EQ(tdd.inflight, 0);
	/* The IO path was reached, not only the parsers. */
	T_CHECK(accepted_io > 1000);
}

/* Queue @n READs on the rw handle, not yet submitted. */
static void queue_reads(struct ibtrs_srv_op *ops, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (io(sess_a, &ops[i], h_rw, IBNBD_OP_READ, 8 * i, 4096, 4096))
			ops[i].status = -999;
}

static int all_answered_once(struct ibtrs_srv_op *ops, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ops[i].answered != 1 || ops[i].status)
			return 0;
	return 1;
}

/*
 * A request with linked SQEs (PREFLUSH fsync -> WRITE, WRITE_ZEROES -> FUA
 * fsync) arriving when the SQ has one free slot: the chain must go to the
 * kernel in one batch, never cut by a submit between its SQEs.
 */
static void ring_full_links(void)
{
	static struct ibtrs_srv_op ops[4096];
	struct ibtrs_srv_op op;
	unsigned int n;

	drain();
	split_links = null_sqes = 0;
	n = io_uring_sq_space_left(&tdd.ring) - 1;
	T_CHECK(n + 1 <= 4096);
	queue_reads(ops, n);
	T_EQ(io_uring_sq_ready(&tdd.ring), n);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_WRITE | IBNBD_F_PREFLUSH, 16, 8192, 8192), 0);
	drain();
	T_CHECK(all_answered_once(ops, n));
	T_EQ(op.answered, 1);
	T_EQ(op.status, 0);
	T_EQ(split_links, 0);

	n = io_uring_sq_space_left(&tdd.ring) - 1;
	queue_reads(ops, n);
	T_EQ(io(sess_a, &op, h_rw, IBNBD_OP_WRITE_ZEROES | IBNBD_F_FUA, 16, 4096, 0), 0);
	drain();
	T_CHECK(all_answered_once(ops, n));
	T_EQ(op.answered, 1);
	T_EQ(op.status, 0);
	T_EQ(split_links, 0);
	T_EQ(null_sqes, 0);
	T_EQ(tdd.inflight, 0);
}

/*
 * The SQ is full and io_uring_submit fails: the request is refused with
 * -EAGAIN and the ring is left exactly as it was (no half-prepared chain,
 * no SQE pointing at a freed request, no NOP without user data).
 */
static void ring_submit_fails(void)
{
	static struct ibtrs_srv_op ops[4096];
	struct ibtrs_srv_op op;
	unsigned int n, q1, q2;
	int r1, r2;

	drain();
	null_sqes = 0;
	n = io_uring_sq_space_left(&tdd.ring) - 1;
	queue_reads(ops, n);
	submit_fail = -ENOMEM;
	r1 = io(sess_a, &op, h_rw, IBNBD_OP_WRITE | IBNBD_F_PREFLUSH, 16, 8192, 8192);
	q1 = io_uring_sq_ready(&tdd.ring);
	r2 = io(sess_a, &op, h_rw, IBNBD_OP_WRITE_ZEROES | IBNBD_F_FUA, 16, 4096, 0);
	q2 = io_uring_sq_ready(&tdd.ring);
	submit_fail = 0;
	T_EQ(r1, -EAGAIN);
	T_EQ(q1, n);
	T_EQ(r2, -EAGAIN);
	T_EQ(q2, n);
	T_EQ(op.answered, 0);
	drain();
	T_CHECK(all_answered_once(ops, n));
	T_EQ(null_sqes, 0);
	T_EQ(tdd.inflight, 0);
}

/* Session gone while IO is in flight: IO is still answered, once. */
static void disconnect_inflight(void)
{
	struct ibtrs_srv_op op1, op2;
	struct srv_sess *s = connect_sess("sess-c");
	char why[64];
	int err;
	uint32_t h;

	T_CHECK(s);
	h = open_dev(s, "small", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, 0);
	T_EQ(io(s, &op1, h, IBNBD_OP_WRITE, 0, 4096, 4096), 0);
	T_EQ(io(s, &op2, h, IBNBD_OP_READ, 8, 4096, 4096), 0);
	T_EQ(s->inflight, 2);
	srv_link_ev((struct ibtrs_srv_sess *)"sess-c", IBTRS_SRV_LINK_EV_DISCONNECTED, s);
	/*
	 * The rw claim is kept until the old IO is done: a new writer (the
	 * same client, reconnected) must not race the old write to the disk.
	 */
	open_dev(sess_a, "small", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, -EBUSY);
	T_CHECK(strstr(why, "in flight"));
	T_EQ(op1.answered, 0);
	/* Readers are not fenced. */
	h = open_dev(sess_a, "small", IBNBD_ACCESS_RO, &err, why);
	T_EQ(err, 0);
	close_dev(sess_a, h);
	drain();
	T_EQ(op1.answered, 1);
	T_EQ(op2.answered, 1);
	h = open_dev(sess_a, "small", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, 0);
	close_dev(sess_a, h);
	/* s was freed (ASan would flag a use); the session list lost it. */
	{
		struct srv_sess *it;
		int n = 0;

		for (it = tdd.sessions; it; it = it->next)
			n++;
		T_EQ(n, 2);
	}
}

/*
 * A block device's DISCARD (BLKDISCARD, synchronous) runs in the worker
 * thread and is answered from the loop when the worker signals it, not
 * inline. The "device" here is a file flagged as a block device, so the
 * ioctl fails with ENOTTY: what matters is who answers, and when.
 */
static void discard_off_loop(void)
{
	struct ibtrs_srv_op op;
	struct pollfd pfd = { .fd = tdd.discard.efd, .events = POLLIN };
	char why[64];
	int err;
	uint32_t h;

	h = open_dev(sess_a, "small", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, 0);
	srv_sd_lookup(sess_a, h)->is_blk = true;
	T_EQ(io(sess_a, &op, h, IBNBD_OP_DISCARD, 0, 4096, 0), 0);
	T_EQ(op.answered, 0);		/* not inline */
	T_EQ(tdd.inflight, 1);
	T_EQ(poll(&pfd, 1, 5000), 1);	/* the worker signals the loop */
	srv_discard_reap(&tdd);
	T_EQ(op.answered, 1);
	T_EQ(op.status, -ENOTTY);
	T_EQ(tdd.inflight, 0);
	close_dev(sess_a, h);
}

/* CLOSE while a write is in flight: the claim outlives the handle. */
static void close_inflight(void)
{
	struct ibtrs_srv_op op;
	char why[64];
	int err;
	uint32_t h;

	h = open_dev(sess_a, "small", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, 0);
	T_EQ(io(sess_a, &op, h, IBNBD_OP_WRITE | IBNBD_F_PREFLUSH, 0, 4096, 4096), 0);
	close_dev(sess_a, h);
	T_EQ(io(sess_a, &op, h, IBNBD_OP_READ, 0, 4096, 4096), -ESTALE);
	open_dev(sess_a, "small", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, -EBUSY);
	drain();
	T_EQ(op.answered, 1);
	T_EQ(op.status, 0);
	h = open_dev(sess_a, "small", IBNBD_ACCESS_RW, &err, why);
	T_EQ(err, 0);
	close_dev(sess_a, h);
	T_EQ(tdd.inflight, 0);
}

static void stats_output(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	T_CHECK(f);
	srv_stats_dump(&tdd, f);
	fclose(f);
	T_CHECK(strstr(buf, "session sess-a"));
	T_CHECK(strstr(buf, "device ") && strstr(buf, "/disk handle="));
	T_CHECK(strstr(buf, "total reads="));
	free(buf);
}

static void teardown_sessions(void)
{
	srv_link_ev(NULL, IBTRS_SRV_LINK_EV_DISCONNECTED, sess_a);
	srv_link_ev(NULL, IBTRS_SRV_LINK_EV_DISCONNECTED, sess_b);
	drain();
	T_CHECK(tdd.sessions == NULL);
	T_EQ(tdd.reg.ndevs, 0);
}

int main(void)
{
	setup();
	T_RUN(malformed_headers);
	T_RUN(sess_info);
	T_RUN(open_refusals);
	T_RUN(open_and_arbitrate);
	T_RUN(io_rejections);
	T_RUN(io_roundtrip);
	T_RUN(fuzz_requests);
	T_RUN(ring_full_links);
	T_RUN(ring_submit_fails);
	T_RUN(disconnect_inflight);
	T_RUN(close_inflight);
	T_RUN(discard_off_loop);
	T_RUN(stats_output);
	T_RUN(teardown_sessions);
	srv_discard_stop(&tdd.discard);
	io_uring_queue_exit(&tdd.ring);
	cleanup();
	T_EXIT();
}
