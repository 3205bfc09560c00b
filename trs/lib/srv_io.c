// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_io.c - server data path: receive and validate requests, hand them to
 * the user, send the answer (RDMA WRITE of read data + one message), and
 * the server side of the heartbeat and INFO exchange. Answers are queued
 * per connection and posted in chains (ibtrs_srv_plug()), signaled only
 * every few WRs, within the send queue's room.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "srv.h"

void trs_srv_send_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_con *con = trs_container_of(cqe, struct trs_con, ctrl_cqe);
	struct trs_srv_con *scon = trs_container_of(con, struct trs_srv_con, c);

	if (wc->status != IBV_WC_SUCCESS)
		trs_srv_path_fail(scon->path, "send failed: %s",
				  ibv_wc_status_str(wc->status));
}

void trs_srv_hb_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_srv_path *path = trs_container_of(cqe, struct trs_srv_path, hb_cqe);

	if (wc->status != IBV_WC_SUCCESS)
		trs_srv_path_fail(path, "heartbeat send failed: %s",
				  ibv_wc_status_str(wc->status));
}

void trs_srv_op_orphan(struct ibtrs_srv_op *op)
{
	op->path = NULL;
	op->con = NULL;
}

/* @wr: one unlinked RDMA WRITE/READ of @sge's @len bytes at @lkey's @addr
 * to/from @raddr under @rkey, completing to @wr_id. */
static void trs_srv_rdma_wr(struct ibv_send_wr *wr, struct ibv_sge *sge,
			    enum ibv_wr_opcode opcode, void *addr, uint32_t len,
			    uint32_t lkey, uint64_t raddr, uint32_t rkey,
			    uint64_t wr_id)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)addr;
	sge->length = len;
	sge->lkey = lkey;
	wr->wr_id = wr_id;
	wr->opcode = opcode;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}

/*
 * IBTRS_SRV_TEST_REPLAY's pattern, written over a finished read's buffer,
 * and the sink a pulled write's replay reads into (one MR for both).
 */
#define TRS_REPLAY_LEN	4096
static uint8_t trs_srv_replay_area[2][TRS_REPLAY_LEN];
#define trs_srv_replay_pattern	(trs_srv_replay_area[0])
#define trs_srv_replay_sink	(trs_srv_replay_area[1])

static bool trs_srv_replay_mr(struct trs_srv_path *path)
{
	if (!path->replay_mr) {
		memset(trs_srv_replay_pattern, 0x5A, TRS_REPLAY_LEN);
		path->replay_mr = ibv_reg_mr(path->pd, trs_srv_replay_area,
					     sizeof(trs_srv_replay_area),
					     IBV_ACCESS_LOCAL_WRITE);
		if (!path->replay_mr) {
			trs_err("test fault replay: cannot register its pattern");
			return false;
		}
	}
	return true;
}

/* Hand @op's request, its data in the chunk, to the user. */
static void trs_srv_op_serve(struct ibtrs_srv_op *op)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	char *slot = trs_srv_slot(sess, op->id);
	void *data;
	size_t datalen;
	int ret;

	op->state = TRS_OP_ACTIVE;
	if (op->req.type == TRS_MSG_IO_WRITE) {
		datalen = op->req.data_len;
		data = slot + ctx->params.chunk_size - datalen;
	} else {
		datalen = op->req.sg_cnt ? op->req.rlen : 0;
		data = slot;
	}
	ctx->ncalls++;
	ret = ctx->ops.rdma_ev(sess, sess->priv, op,
			       op->req.type == TRS_MSG_IO_WRITE ? IBTRS_WRITE :
			       IBTRS_READ, data, datalen,
			       op->hdr + sizeof(struct trs_msg_io_req),
			       op->req.usr_len);
	if (ret)
		ibtrs_srv_resp(op, ret < 0 ? ret : -ret, 0);
}

/*
 * IBTRS_SRV_TEST_REPLAY: build @op's replay WR, @opcode (RDMA WRITE of the
 * pattern, or RDMA READ into the sink) at @raddr with the ended IO's
 * @rkey, unsignaled (a signaled WR after it retires it), in front of @next.
 */
static struct ibv_send_wr *trs_srv_replay_wr(struct ibtrs_srv_op *op,
					     enum ibv_wr_opcode opcode,
					     uint64_t raddr, uint32_t rkey,
					     uint32_t len, struct ibv_send_wr *next)
{
	struct ibv_send_wr *wr = &op->replay_wr;

	if (len > TRS_REPLAY_LEN)
		len = TRS_REPLAY_LEN;
	trs_info("test fault replay: %u bytes %s %#llx with the ended %s's key %#x",
		 len, opcode == IBV_WR_RDMA_READ ? "read at" : "at",
		 (unsigned long long)raddr,
		 opcode == IBV_WR_RDMA_READ ? "write" : "read", rkey);
	trs_srv_rdma_wr(wr, &op->replay_sge, opcode,
			opcode == IBV_WR_RDMA_READ ? trs_srv_replay_sink :
			trs_srv_replay_pattern, len, op->path->replay_mr->lkey,
			raddr, rkey, (uintptr_t)&op->con->c.ctrl_cqe);
	wr->next = next;
	return wr;
}

/*
 * IBTRS_SRV_TEST_REPLAY for pulled writes: chain in front of @op's pull an
 * RDMA READ from the previous successful pulled write's buffer with its key
 * (that IO has ended: it is recorded at its answer, trs_srv_resp_prepare()),
 * once per recorded write. Only successful ones: a write answered with an
 * error (-ESTALE before its device was opened again, after a reconnect) is
 * sent again by the client, and replaying its key would fail every new path
 * of a client whose safe mode ends keys, before any write completes.
 * Returns the WRs to post first.
 */
static struct ibv_send_wr *trs_srv_pull_replay(struct ibtrs_srv_op *op)
{
	struct trs_srv_path *path = op->path;
	uint64_t raddr = path->pull_replay_raddr;
	uint32_t rkey = path->pull_replay_rkey, len = path->pull_replay_len;

	path->pull_replay_len = 0;
	if (!len || !trs_srv_replay_mr(path))
		return &op->pull_wr;
	/* the pull after it is signaled and retires it */
	return trs_srv_replay_wr(op, IBV_WR_RDMA_READ, raddr, rkey, len,
				 &op->pull_wr);
}

/* The RDMA READ of a pulled write's data completed. */
static void trs_srv_pull_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct ibtrs_srv_op *op = trs_container_of(cqe, struct ibtrs_srv_op,
						   pull_cqe);
	struct trs_srv_path *path = op->path;

	if (path->fail_pending)
		return;		/* the teardown ends the op */
	if (wc->status != IBV_WC_SUCCESS) {
		trs_srv_path_fail(path, "RDMA READ of chunk %u's write data "
				  "failed: %s", op->id,
				  ibv_wc_status_str(wc->status));
		return;
	}
	trs_srv_op_serve(op);
}

/*
 * write_mode pull: RDMA-READ the write's data from the client's buffer to
 * where a pushed write's would be, right-aligned before the header area.
 */
static void trs_srv_pull(struct ibtrs_srv_op *op)
{
	struct trs_srv_path *path = op->path;
	struct ibtrs_srv_ctx *ctx = op->sess->ctx;
	struct ibv_send_wr *wr = &op->pull_wr, *first;
	char *slot = trs_srv_slot(op->sess, op->id);
	int err;

	if (!op->con->pull_depth) {
		trs_srv_path_fail(path, "pulled write in chunk %u on a connection "
				  "without RDMA READ resources", op->id);
		return;
	}
	op->pull_cqe.done = trs_srv_pull_done;
	trs_srv_rdma_wr(wr, &op->pull_sge, IBV_WR_RDMA_READ,
			slot + ctx->params.chunk_size - op->req.data_len,
			op->req.data_len, path->pool_mr->lkey, op->req.raddr,
			op->req.rkey, (uintptr_t)&op->pull_cqe);
	wr->send_flags = IBV_SEND_SIGNALED;
	op->state = TRS_OP_PULLING;
	ctx->st.pulls++;
	first = wr;
	if (ctx->opts.test_faults &
	    (IBTRS_SRV_TEST_REPLAY | IBTRS_SRV_TEST_REPLAY_PULL))
		first = trs_srv_pull_replay(op);
	err = trs_con_post_send(&op->con->c, first, first == wr ? 1 : 2);
	if (err)
		trs_srv_path_fail(path, "posting the RDMA READ of chunk %u: %s",
				  op->id, strerror(-err));
}

static void trs_srv_op_start(struct ibtrs_srv_op *op, struct trs_srv_path *path,
			     struct trs_srv_con *con)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	char *slot = trs_srv_slot(sess, op->id);
	const char *why = "";
	__u32 hdr_len;

	/* Copy first: the client can still write the chunk while we look. */
	hdr_len = trs_io_req_copy(op->hdr, slot + ctx->params.chunk_size,
				  ctx->params.hdr_area, ctx->params.max_usr_len);
	if (trs_io_req_decode(op->hdr, hdr_len, ctx->params.chunk_size,
			      ctx->params.max_usr_len, &op->req, &why)) {
		trs_srv_path_fail(path, "invalid request in chunk %u: %s", op->id, why);
		return;
	}
	op->path = path;
	op->con = con;
	sess->active_ops++;
	if (op->req.flags & TRS_IO_F_PULL)
		trs_srv_pull(op);
	else
		trs_srv_op_serve(op);
}

static void trs_srv_io_req(struct trs_srv_path *path, struct trs_srv_con *con,
			   uint32_t id)
{
	struct ibtrs_srv_op *op = &path->sess->ops[id];

	path->sess->ctx->st.requests++;
	if (op->state != TRS_OP_FREE) {
		/* also when queued: answered, but the answer has not left */
		if (op->path == path || op->pending_path) {
			trs_srv_path_fail(path, "request for chunk %u which is busy",
					  id);
			return;
		}
		/* A failed-over retry overtook the original's answer. */
		op->pending_path = path;
		op->pending_con = con;
		return;
	}
	trs_srv_op_start(op, path, con);
}

/*
 * IBTRS_SRV_TEST_REPLAY: chain in front of @first an RDMA WRITE into the
 * previous read's buffer with its key (that IO has ended: its answer went
 * out before this one), then remember this read's. Returns the new first WR.
 */
static struct ibv_send_wr *trs_srv_replay(struct ibtrs_srv_op *op,
					  struct ibv_send_wr *first)
{
	struct trs_srv_path *path = op->path;
	uint64_t raddr = path->replay_raddr;
	uint32_t rkey = path->replay_rkey, len = path->replay_len;

	if (!trs_srv_replay_mr(path))
		return first;
	path->replay_raddr = op->req.raddr;
	path->replay_rkey = op->req.rkey;
	path->replay_len = op->req.rlen;
	if (!len)
		return first;	/* the path's first read: nothing to replay */
	op->nwrs++;
	return trs_srv_replay_wr(op, IBV_WR_RDMA_WRITE, raddr, rkey, len, first);
}

/*
 * Build the answer's WRs in @op: [RDMA WRITE of read data ->] the message,
 * from op->first_wr.
 */
static void trs_srv_resp_prepare(struct ibtrs_srv_op *op, int status, size_t len)
{
	struct trs_srv_path *path = op->path;
	struct trs_srv_con *con = op->con;
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibv_send_wr *data_wr = &op->data_wr, *rsp_wr = &op->rsp_wr;
	struct trs_msg_io_rsp *rsp;
	uint32_t imm;

	memset(data_wr, 0, sizeof(*data_wr));
	memset(rsp_wr, 0, sizeof(*rsp_wr));
	if ((op->req.flags & TRS_IO_F_PULL) && !status &&
	    (sess->ctx->opts.test_faults &
	     (IBTRS_SRV_TEST_REPLAY | IBTRS_SRV_TEST_REPLAY_PULL))) {
		/* a successful pulled write: its key to replay after it ended */
		path->pull_replay_raddr = op->req.raddr;
		path->pull_replay_rkey = op->req.rkey;
		path->pull_replay_len = op->req.rlen;
	}
	/* rekey: the chunk's window is bound again in front (con_flush) */
	op->nwrs = path->chunk_mw ? 2 : 1;
	op->first_wr = rsp_wr;
	if (op->req.type == TRS_MSG_IO_READ && !status && len) {
		trs_srv_rdma_wr(data_wr, &op->data_sge, IBV_WR_RDMA_WRITE,
				trs_srv_slot(sess, op->id), (uint32_t)len,
				path->pool_mr->lkey, op->req.raddr, op->req.rkey,
				(uintptr_t)&con->c.ctrl_cqe);
		data_wr->next = rsp_wr;
		op->nwrs++;
		op->first_wr = data_wr;
		if (sess->ctx->opts.test_faults & IBTRS_SRV_TEST_REPLAY)
			op->first_wr = trs_srv_replay(op, data_wr);
	}
	/* unsignaled, unless it ends a chain that is signaled (flush) */
	rsp_wr->wr_id = (uintptr_t)&con->c.ctrl_cqe;
	if (op->req.type == TRS_MSG_IO_READ || (op->req.flags & TRS_IO_F_NEED_INV)) {
		/* A read's answer carries its length, so the client can check it
		 * covers the request; SEND_WITH_INV also ends the client's rkey. */
		bool inv = (op->req.flags & TRS_IO_F_NEED_INV) &&
			   !(sess->ctx->opts.test_faults & IBTRS_SRV_TEST_NO_INVAL);
		struct trs_io_rsp_info ri = {
			.chunk_id = (uint16_t)op->id, .status = status,
			.flags = inv ? TRS_RSP_F_INVALIDATED : 0, .len = (uint32_t)len,
		};

		rsp = (void *)((char *)con->c.tx_slots + (size_t)op->id * TRS_TX_SLOT);
		trs_io_rsp_encode(rsp, &ri);
		op->rsp_sge.addr = (uintptr_t)rsp;
		op->rsp_sge.length = sizeof(*rsp);
		op->rsp_sge.lkey = con->c.msg_mr->lkey;
		rsp_wr->opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
		rsp_wr->invalidate_rkey = inv ? op->req.rkey : 0;
		rsp_wr->sg_list = &op->rsp_sge;
		rsp_wr->num_sge = 1;
	} else {
		if (trs_imm_pack(TRS_IMM_IO_RSP, op->id, status, &imm))
			imm = trs_to_imm(TRS_IMM_IO_RSP, op->id, EIO);
		rsp_wr->opcode = IBV_WR_SEND_WITH_IMM;
		rsp_wr->imm_data = htonl(imm);
	}
}

/*
 * The answer of @op is out (or dropped with its path): the chunk is free,
 * a retry that waited for it starts. May free the session (the last op of
 * a dead one): the caller must not touch @op or its session afterwards.
 */
void trs_srv_op_finish(struct ibtrs_srv_op *op)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct trs_srv_path *next_path = op->pending_path;
	struct trs_srv_con *next_con = op->pending_con;

	op->state = TRS_OP_FREE;
	op->path = NULL;
	op->con = NULL;
	op->pending_path = NULL;
	op->pending_con = NULL;
	sess->active_ops--;
	if (next_path && !next_path->fail_pending)
		trs_srv_op_start(op, next_path, next_con);
	trs_srv_sess_maybe_free(sess);
}

static void trs_srv_con_dirty(struct trs_srv_con *con)
{
	struct ibtrs_srv_ctx *ctx = con->path->sess->ctx;

	if (con->dirty)
		return;
	con->dirty = true;
	con->dirty_next = ctx->dirty;
	ctx->dirty = con;
}

/*
 * Post @con's queued answers, as many as the send queue has room for, as
 * one chain. Only the chain's last WR may be signaled: when the WRs since
 * the last signaled one reach TRS_SIG_EVERY, when the queue is more
 * than half full (so a signaled WR is outstanding whenever room runs
 * short) or when answers are left waiting for room.
 */
static void trs_srv_con_flush(struct trs_srv_con *con)
{
	struct ibtrs_srv_ctx *ctx = con->path->sess->ctx;
	struct ibtrs_srv_op *op, *first = NULL, *last = NULL;
	unsigned int room = trs_con_sig_room(&con->c), n = 0, nops = 0;
	bool rekey = con->path->chunk_mw != NULL;
	struct ibv_send_wr *head = NULL, *wr;
	int err;

	if (con->path->fail_pending || con->c.dead)
		return;		/* the teardown drops them */
	/*
	 * chunk_mode rekey: each answer has its chunk window's new binding in
	 * front of it, in the same chain, so on this send queue every answer
	 * follows its chunk's new binding (the old key is dead before the
	 * client can see the answer), and one post carries them all.
	 */
	while ((op = TAILQ_FIRST(&con->txq)) && n + op->nwrs <= room) {
		TAILQ_REMOVE(&con->txq, op, tx_link);
		op->rsp_wr.next = NULL;
		TAILQ_NEXT(op, tx_link) = NULL;
		wr = rekey ? trs_srv_rekey_wr(op, op->first_wr) : op->first_wr;
		if (last) {
			last->rsp_wr.next = wr;
			TAILQ_NEXT(last, tx_link) = op;
		} else {
			first = op;
			head = wr;
		}
		last = op;
		n += op->nwrs;
		nops++;
	}
	if (!n)
		return;
	if (trs_con_sig_chain(&con->c, &last->rsp_wr, n, !TAILQ_EMPTY(&con->txq)))
		ctx->st.signaled++;
	ctx->st.answers += nops;
	err = trs_con_post_send(&con->c, head, n);
	if (err)
		trs_srv_path_fail(con->path, "posting %u answers%s: %s", nops,
				  rekey ? " and their chunks' window binds" : "",
				  strerror(-err));
	else
		for (op = rekey ? first : NULL; op; op = TAILQ_NEXT(op, tx_link))
			trs_srv_rekey_posted(op);
	/* Each finish may start a waiting retry (which may answer at once);
	 * the session lives while ops of this list are active. The chunks
	 * are FREE before this thread looks at the next completion, so the
	 * client's next request for one (sent once it has the answer) always
	 * finds it free (the kernel server, with its concurrent contexts,
	 * needs op->answering for that). */
	while ((op = first)) {
		first = TAILQ_NEXT(op, tx_link);
		trs_srv_op_finish(op);
	}
}

/* Signaled answers retired WRs: post the answers waiting for room. */
static void trs_srv_con_room(struct trs_con *c)
{
	struct trs_srv_con *con = trs_container_of(c, struct trs_srv_con, c);

	if (!TAILQ_EMPTY(&con->txq)) {
		trs_srv_con_dirty(con);
		if (!con->path->sess->ctx->plugged)
			ibtrs_srv_unplug(con->path->sess->ctx);
	}
}

/* Answer bookkeeping of a new connection whose send queue has @sq_size WRs. */
int trs_srv_con_tx_init(struct trs_srv_con *con, unsigned int sq_size)
{
	TAILQ_INIT(&con->txq);
	return trs_con_sig_init(&con->c, sq_size - TRS_SRV_SQ_CTRL,
				trs_srv_con_room);
}

/*
 * The path of @con is being torn down: answers still queued are dropped
 * (the client re-sends the IO on another path), and the connection leaves
 * the context's flush list.
 */
void trs_srv_con_tx_drop(struct trs_srv_con *con)
{
	struct ibtrs_srv_ctx *ctx = con->path->sess->ctx;
	struct trs_srv_con **pp;
	struct ibtrs_srv_op *op;

	if (con->c.sig) {	/* trs_srv_con_tx_init() ran */
		while ((op = TAILQ_FIRST(&con->txq))) {
			TAILQ_REMOVE(&con->txq, op, tx_link);
			trs_srv_op_finish(op);
		}
	}
	for (pp = &ctx->dirty; *pp; pp = &(*pp)->dirty_next)
		if (*pp == con) {
			*pp = con->dirty_next;
			break;
		}
	con->dirty = false;
	trs_con_sig_free(&con->c);
}

void ibtrs_srv_plug(struct ibtrs_srv_ctx *ctx)
{
	ctx->plugged++;
}

void ibtrs_srv_unplug(struct ibtrs_srv_ctx *ctx)
{
	struct trs_srv_con *con;

	if (ctx->plugged && --ctx->plugged)
		return;
	while ((con = ctx->dirty)) {
		ctx->dirty = con->dirty_next;
		con->dirty = false;
		trs_srv_con_flush(con);
	}
}

bool trs_srv_test_short_read;

int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len)
{
	struct ibtrs_srv_sess *sess;
	struct trs_srv_path *path;
	bool raw_short;
	__u32 rlen;
	int err = 0;

	if (!op || op->state != TRS_OP_ACTIVE)
		return -EINVAL;
	sess = op->sess;
	path = op->path;
	rlen = len > UINT32_MAX ? UINT32_MAX : (__u32)len;
	/* test fault: a large successful read answered 512 bytes short */
	if ((sess->ctx->opts.test_faults & IBTRS_SRV_TEST_SHORT_READ) &&
	    !status && op->req.type == TRS_MSG_IO_READ && rlen > 4096)
		rlen -= 512;
	/* test hook (trs-test-server --short-read raw, test_faults): a short,
	 * successful read answer goes out as the user gave it */
	raw_short = (trs_srv_test_short_read ||
		     (sess->ctx->opts.test_faults & IBTRS_SRV_TEST_SHORT_READ)) &&
		    !status && op->req.type == TRS_MSG_IO_READ &&
		    op->req.sg_cnt && rlen < op->req.rlen;
	/* A read answer must cover the request (trs/common/proto.c). */
	if (!raw_short && trs_io_resp_check(&op->req, &status, &rlen)) {
		trs_err("session %s: read answer of chunk %u has %zu bytes, "
			"the request %u; failing the IO with EIO", sess->name,
			op->id, len, op->req.sg_cnt ? op->req.rlen : 0);
		err = -EINVAL;
	}
	len = rlen;
	if (path && !path->fail_pending) {
		struct trs_srv_con *con = op->con;

		trs_srv_resp_prepare(op, status, len);
		op->state = TRS_OP_QUEUED;
		TAILQ_INSERT_TAIL(&con->txq, op, tx_link);
		trs_srv_con_dirty(con);
		if (!sess->ctx->plugged)
			trs_srv_con_flush(con);
		return err;
	}
	trs_srv_op_finish(op);	/* path gone: the answer goes nowhere */
	return err;
}

static void trs_srv_info_req(struct trs_srv_path *path, struct trs_srv_con *con,
			     const void *msg, uint32_t len)
{
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	char name[TRS_SESSNAME_MAX];
	struct trs_info info = {
		.queue_depth = ctx->params.queue_depth,
		.chunk_size = ctx->params.chunk_size,
		.slot_size = ctx->slot_size,
		.pool_addr = (uintptr_t)sess->pool,
		.pool_rkey = path->pool_mr->rkey,
	};
	bool rekey = ctx->opts.chunk_mode == IBTRS_CHUNK_REKEY;
	const char *why = "";
	int err;

	if (con->c.cid != 0 || path->joined) {
		trs_srv_path_fail(path, "unexpected INFO_REQ");
		return;
	}
	if (trs_info_req_decode(msg, len, name, &why)) {
		trs_srv_path_fail(path, "bad INFO_REQ: %s", why);
		return;
	}
	if (sess->named && strcmp(name, sess->name))
		trs_wrn("session %s: path from %s names itself '%s'", sess->name,
			path->addr, name);
	/* this server pulls writes (write_mode pull) */
	info.flags |= TRS_INFO_F_PULL;
	if (rekey) {
		/* the pool has no key of its own: each chunk's comes in KEYS */
		info.pool_rkey = 0;
		info.flags |= TRS_INFO_F_REKEY;
		err = trs_srv_rekey_setup(path, con);
		if (err) {
			trs_srv_path_fail(path, "chunk_mode rekey: binding the "
					  "chunks' windows: %s", strerror(-err));
			return;
		}
	}
	trs_info_rsp_encode(con->c.ctrl_buf, &info);
	err = trs_con_post_ctrl(&con->c, sizeof(struct trs_msg_info_rsp));
	if (err) {
		trs_srv_path_fail(path, "posting INFO_RSP: %s", strerror(-err));
		return;
	}
	path->joined = true;
	trs_hb_start(&path->hb, ctx->opts.hb_interval_ms, ctx->opts.hb_missed_max,
		     trs_now_us());
	if (!sess->named) {
		snprintf(sess->name, sizeof(sess->name), "%s", name);
		sess->named = true;
	}
	trs_info("session %s: path from %s joined (%d path%s)", sess->name,
		 path->addr, ibtrs_srv_sess_paths(sess),
		 ibtrs_srv_sess_paths(sess) > 1 ? "s" : "");
	if (!sess->link_up) {
		sess->link_up = true;
		if (ctx->ops.link_ev)
			ctx->ops.link_ev(sess, IBTRS_SRV_LINK_EV_CONNECTED, sess->priv);
	}
}

void trs_srv_recv_done(struct trs_con *con, struct trs_rx *rx, struct ibv_wc *wc)
{
	struct trs_srv_con *scon = trs_container_of(con, struct trs_srv_con, c);
	struct trs_srv_path *path = scon->path;
	struct ibtrs_srv_ctx *ctx = path->sess->ctx;
	uint8_t msg[TRS_MAX_RECV_MSG];
	struct trs_rx_msg m;
	const char *why = "";

	if (trs_con_rx_begin(con, rx, wc, true, ctx->params.queue_depth, &m, msg,
			     &why)) {
		trs_srv_path_fail(path, "bad receive: %s (%s, %u bytes)", why,
				  trs_wc_opcode_str(wc->opcode), wc->byte_len);
		return;
	}
	trs_hb_on_rx(&path->hb, ctx->now_us);
	switch (m.kind) {
	case TRS_RX_HB:
		if (trs_con_post_send_imm(&path->cons[0].c,
					  trs_to_imm(TRS_IMM_HB_ACK, m.id, 0),
					  &path->hb_cqe))
			trs_srv_path_fail(path, "cannot answer heartbeat");
		break;
	case TRS_RX_HB_ACK:	/* only life; the server keeps no RTT */
		break;
	case TRS_RX_IO_REQ:
		if (!path->joined) {
			trs_srv_path_fail(path, "IO request before the path joined");
			break;
		}
		trs_srv_io_req(path, scon, m.id);
		break;
	case TRS_RX_MSG:	/* INFO_REQ, the only valid message */
		trs_srv_info_req(path, scon, msg, m.len);
		break;
	default:
		trs_srv_path_fail(path, "unexpected receive kind %d", m.kind);
	}
}

void trs_srv_path_tick(struct trs_srv_path *path, uint64_t now)
{
	uint64_t tmo = trs_hb_timeout_us(&path->hb);
	uint16_t seq;

	if (path->fail_pending)
		return;
	if (!path->joined) {
		/* a path that never joins is dropped, counted from its first
		 * connection: heartbeats do not keep it (and its pool) */
		if (now - path->created_us > tmo + 10000000ULL)
			trs_srv_path_fail(path, "did not join within %llu ms",
					  (unsigned long long)(tmo / 1000 + 10000));
		return;
	}
	if (trs_hb_timed_out(&path->hb, now)) {
		trs_srv_path_fail(path, "heartbeat timeout: nothing received for "
				  "%llu ms", (unsigned long long)
				  trs_hb_idle_us(&path->hb, now) / 1000);
		return;
	}
	if (trs_hb_due(&path->hb, now, &seq) &&
	    trs_con_post_send_imm(&path->cons[0].c, trs_to_imm(TRS_IMM_HB, seq, 0),
				  &path->hb_cqe))
		trs_srv_path_fail(path, "cannot post heartbeat");
}
