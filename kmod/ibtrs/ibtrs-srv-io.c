// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-srv-io.c - the server's request path: a request arrives as an
 * RDMA_WRITE_WITH_IMM into its chunk, is validated and handed to the user;
 * the user's answer goes back as one message. Also the receive completion
 * handler (every message through trs/common/rx.c), INFO, heartbeats.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/highmem.h>

#include "ibtrs-srv-pri.h"

/* ---------------------------------------------------------------- */
/* Answers                                                           */

/*
 * Post the answer of @op (and a read's data before it) on @con of @path,
 * in an RCU read section that saw @path open: the close work waits for it
 * before it drains. Unsignaled but one in IBTRS_SIG_EVERY: nothing of the
 * IO waits for the send's completion.
 */
static int ibtrs_srv_post_resp(struct ibtrs_srv_op *op,
			       struct ibtrs_srv_path *path,
			       struct ibtrs_srv_con *con, int status, u32 len)
{
	struct ib_send_wr *rsp_wr = &op->rsp_wr;
	struct ib_send_wr *first = rsp_wr;
	u32 imm;
	int ret;

	if (op->req.type == TRS_MSG_IO_READ && !status && len) {
		struct ib_rdma_wr *data_wr = &op->data_wr;

		/* what the block layer or the user put there, for the device */
		if (path->need_sync)
			ibtrs_srv_sync_chunk(path, op->id, 0, len, false);
		op->data_sge.addr = path->mr->iova +
				    (u64)op->id * op->sess->ctx->slot_size;
		op->data_sge.length = len;
		op->data_sge.lkey = path->mr->lkey;
		data_wr->wr.next = rsp_wr;
		data_wr->wr.wr_cqe = &con->send_cqe;
		data_wr->wr.opcode = IB_WR_RDMA_WRITE;
		data_wr->wr.send_flags = 0;
		data_wr->wr.sg_list = &op->data_sge;
		data_wr->wr.num_sge = 1;
		data_wr->remote_addr = op->req.raddr;
		data_wr->rkey = op->req.rkey;
		first = &data_wr->wr;
	}
	/* every field of the answer's work request is set below */
	rsp_wr->next = NULL;
	rsp_wr->wr_cqe = &con->send_cqe;
	rsp_wr->send_flags = 0;
	if (!(atomic_inc_return(&con->sig_cnt) & (IBTRS_SIG_EVERY - 1))) {
		rsp_wr->send_flags = IB_SEND_SIGNALED;
		this_cpu_inc(path->stats->sig_rsps);
	}
	if (op->req.type == TRS_MSG_IO_READ ||
	    (op->req.flags & TRS_IO_F_NEED_INV)) {
		/*
		 * A read's answer is an IO_RSP message: it carries the length,
		 * and SEND_WITH_INV ends the client's rkey before the client
		 * sees the answer (PROTOCOL.md 4).
		 */
		bool inv = op->req.flags & TRS_IO_F_NEED_INV;
		size_t off = IBTRS_TX_RSP_OFF + (size_t)op->id * IBTRS_RSP_SLOT;
		struct trs_io_rsp_info ri = {
			.chunk_id = (u16)op->id,
			.status = status,
			.flags = inv ? TRS_RSP_F_INVALIDATED : 0,
			.len = len,
		};

		trs_io_rsp_encode(con->txb.buf + off, &ri);
		ib_dma_sync_single_for_device(path->dev, con->txb.dma + off,
					      sizeof(struct trs_msg_io_rsp),
					      DMA_TO_DEVICE);
		op->rsp_sge.addr = con->txb.dma + off;
		op->rsp_sge.length = sizeof(struct trs_msg_io_rsp);
		op->rsp_sge.lkey = path->pd->local_dma_lkey;
		rsp_wr->opcode = inv ? IB_WR_SEND_WITH_INV : IB_WR_SEND;
		rsp_wr->ex.invalidate_rkey = inv ? op->req.rkey : 0;
		rsp_wr->sg_list = &op->rsp_sge;
		rsp_wr->num_sge = 1;
	} else {
		if (trs_imm_pack(TRS_IMM_IO_RSP, op->id, status, &imm))
			imm = trs_to_imm(TRS_IMM_IO_RSP, op->id, EIO);
		rsp_wr->opcode = IB_WR_SEND_WITH_IMM;
		rsp_wr->ex.imm_data = cpu_to_be32(imm);
		rsp_wr->sg_list = NULL;
		rsp_wr->num_sge = 0;
	}
	/* chunk_mode rekey: the IO's key dies before anything of the answer */
	if (path->rekey)
		first = ibtrs_srv_rekey_wrs(op, path, first);
	ret = ib_post_send(con->qp, first, NULL);
	if (!ret)
		this_cpu_inc(path->stats->rsps);
	return ret;
}

/* Chunks not FREE. Under sess->lock (or with nothing running any more). */
unsigned int ibtrs_srv_busy_ops(struct ibtrs_srv_sess *sess)
{
	unsigned int i, n = 0;

	for (i = 0; i < sess->queue_depth; i++)
		n += atomic_read(&sess->ops[i].state) != IBTRS_OP_FREE;
	return n;
}

/*
 * A dead session (no path left) is freed once no chunk is busy: whoever
 * frees a chunk and sees the session dead checks, and so does the close
 * work that killed it (after a full barrier: of the two, one sees the
 * other). @may_sleep: free here, else in a work item.
 */
void ibtrs_srv_sess_dead_check(struct ibtrs_srv_sess *sess, bool may_sleep)
{
	unsigned long flags;
	bool free_sess;

	spin_lock_irqsave(&sess->lock, flags);
	free_sess = sess->dead && !sess->freeing && !ibtrs_srv_busy_ops(sess);
	if (free_sess)
		sess->freeing = true;
	spin_unlock_irqrestore(&sess->lock, flags);
	if (!free_sess)
		return;
	if (may_sleep)
		ibtrs_srv_sess_free(sess);
	else
		queue_work(ibtrs_srv_wq, &sess->free_work);
}

/* @op went FREE (a full barrier before): its session may have died. */
static void ibtrs_srv_op_freed(struct ibtrs_srv_sess *sess, bool may_sleep)
{
	if (unlikely(READ_ONCE(sess->dead)))
		ibtrs_srv_sess_dead_check(sess, may_sleep);
}

int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_path *path;
	unsigned long flags;
	int err = 0, perr, state;
	u32 rlen;

	/* A read answer must cover the request (trs/common/proto.c). */
	rlen = len > U32_MAX ? U32_MAX : len;
	if (trs_io_resp_check(&op->req, &status, &rlen)) {
		pr_err_ratelimited("sess %s: read answer of chunk %u has %zu bytes, the request %u; failing the IO with EIO\n",
				   ibtrs_sess_name(sess), op->id, len,
				   op->req.sg_cnt ? op->req.rlen : 0);
		err = -EINVAL;
	}
	state = atomic_read(&op->state);
	if (WARN_ON_ONCE(state != IBTRS_OP_ACTIVE && state != IBTRS_OP_PENDING))
		return -EINVAL;
	WRITE_ONCE(op->answering, true);
	smp_mb();	/* answering before the client can have the answer */
	rcu_read_lock();
	path = READ_ONCE(op->path);
	if (path && !READ_ONCE(path->closed)) {
		perr = ibtrs_srv_post_resp(op, path, READ_ONCE(op->con), status,
					   rlen);
		if (perr)
			ibtrs_srv_path_fail(path, "posting the answer of chunk %u: %d",
					    op->id, perr);
	}
	rcu_read_unlock();
	if (likely(atomic_cmpxchg(&op->state, IBTRS_OP_ACTIVE,
				  IBTRS_OP_FREE) == IBTRS_OP_ACTIVE)) {
		ibtrs_srv_op_freed(sess, false);
		return err;
	}
	/* PENDING: a retry waits for this answer (it changes under the lock) */
	spin_lock_irqsave(&sess->lock, flags);
	WRITE_ONCE(op->path, NULL);
	op->con = NULL;
	if (op->pending_path) {
		atomic_set(&op->state, IBTRS_OP_QUEUED);
		queue_work(ibtrs_srv_io_wq, &op->start_work);
	} else {
		/* its path closed meanwhile */
		atomic_set(&op->state, IBTRS_OP_FREE);
	}
	spin_unlock_irqrestore(&sess->lock, flags);
	smp_mb();	/* FREE before the dead check: see ibtrs_srv_op_freed() */
	ibtrs_srv_op_freed(sess, false);
	return err;
}
EXPORT_SYMBOL_GPL(ibtrs_srv_resp);

/* ---------------------------------------------------------------- */
/* Requests                                                          */

/*
 * @op (ACTIVE or PENDING, not handed to the user) ends without an answer:
 * its request was malformed, or its path failed before the request reached
 * the user. A retry of it waiting on another path (PENDING) starts now,
 * else the chunk is FREE.
 */
static void ibtrs_srv_op_abandon(struct ibtrs_srv_op *op, bool may_sleep)
{
	struct ibtrs_srv_sess *sess = op->sess;
	unsigned long flags;

	spin_lock_irqsave(&sess->lock, flags);
	WRITE_ONCE(op->path, NULL);
	op->con = NULL;
	if (op->pending_path) {
		atomic_set(&op->state, IBTRS_OP_QUEUED);
		queue_work(ibtrs_srv_io_wq, &op->start_work);
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	atomic_set(&op->state, IBTRS_OP_FREE);
	spin_unlock_irqrestore(&sess->lock, flags);
	smp_mb();	/* FREE before the dead check */
	ibtrs_srv_op_freed(sess, may_sleep);
}

/* Hand the validated request of @op (ACTIVE on @path) to the user. */
static void ibtrs_srv_op_serve(struct ibtrs_srv_op *op,
			       struct ibtrs_srv_path *path, u8 *hdr)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	u32 chunk = ctx->params.chunk_size;
	void *slot = ibtrs_srv_slot(sess, op->id);
	enum ibtrs_dir dir;
	size_t datalen;
	void *data;
	int ret;

	if (op->req.type == TRS_MSG_IO_WRITE) {
		dir = IBTRS_WRITE;
		datalen = op->req.data_len;
		data = slot + chunk - datalen;
		if (path->need_sync)
			ibtrs_srv_sync_chunk(path, op->id, chunk - datalen,
					     datalen, true);
	} else {
		dir = IBTRS_READ;
		datalen = op->req.sg_cnt ? op->req.rlen : 0;
		data = slot;
	}
	ret = ctx->ops.rdma_ev(sess, READ_ONCE(sess->priv), op, dir, data,
			       datalen, hdr + sizeof(struct trs_msg_io_req),
			       op->req.usr_len);
	if (ret)
		ibtrs_srv_resp(op, ret < 0 ? ret : -ret, 0);
}

/*
 * The RDMA READ of a pulled write's data completed (on the connection the
 * request came on, whose CQ work this is): the write goes to the user.
 */
static void ibtrs_srv_pull_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_op *op = container_of(wc->wr_cqe, struct ibtrs_srv_op,
					       pull_cqe);
	struct ibtrs_srv_con *con = cq->cq_context;
	struct ibtrs_srv_path *path = con->path;
	u32 chunk = op->sess->ctx->params.chunk_size;
	u32 len = sizeof(struct trs_msg_io_req) + op->req.usr_len;
	void *hdr_area = ibtrs_srv_slot(op->sess, op->id) + chunk;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_srv_wr_error(path, wc, "RDMA READ of a pulled write");
		ibtrs_srv_op_abandon(op, true);
		return;
	}
	/* nothing more is served on a failed path; a retry may come */
	if (unlikely(test_bit(IBTRS_PATH_FAILED, &path->flags))) {
		ibtrs_srv_op_abandon(op, true);
		return;
	}
	/*
	 * The user header again, into this CQ's private copy (the one the
	 * request was validated in served the connection's next requests
	 * meanwhile); its length is the validated one.
	 */
	if (path->need_sync)
		ibtrs_srv_sync_chunk(path, op->id, chunk, len, true);
	invalidate_kernel_vmap_range(hdr_area, len);
	memcpy(con->hdr, hdr_area, len);
	ibtrs_srv_op_serve(op, path, con->hdr);
}

/*
 * write_mode pull: RDMA-READ the write's data from the client's buffer
 * (its descriptor, validated: exactly data_len bytes) to where a pushed
 * write's would be, right-aligned before the header area. Signaled; the
 * write goes on from ibtrs_srv_pull_done(). Posted in an RCU read section
 * that saw @path open, as answers are (the close work drains after it).
 */
static void ibtrs_srv_pull(struct ibtrs_srv_op *op, struct ibtrs_srv_path *path)
{
	struct ibtrs_srv_con *con = op->con;
	struct ibtrs_srv_ctx *ctx = op->sess->ctx;
	struct ib_rdma_wr *wr = &op->data_wr;
	u32 len = op->req.data_len;
	int err = -ENOTCONN;

	if (!con->pull_depth) {
		ibtrs_srv_op_abandon(op, true);
		ibtrs_srv_path_fail(path, "pulled write in chunk %u: %s", op->id,
				    "the connection offered no RDMA READs");
		return;
	}
	op->pull_cqe.done = ibtrs_srv_pull_done;
	op->data_sge.addr = path->mr->iova + (u64)op->id * ctx->slot_size +
			    ctx->params.chunk_size - len;
	op->data_sge.length = len;
	op->data_sge.lkey = path->mr->lkey;
	wr->wr.next = NULL;
	wr->wr.wr_cqe = &op->pull_cqe;
	wr->wr.opcode = IB_WR_RDMA_READ;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	wr->wr.sg_list = &op->data_sge;
	wr->wr.num_sge = 1;
	wr->remote_addr = op->req.raddr;
	wr->rkey = op->req.rkey;
	rcu_read_lock();
	if (!READ_ONCE(path->closed))
		err = ib_post_send(con->qp, &wr->wr, NULL);
	rcu_read_unlock();
	if (err) {
		ibtrs_srv_op_abandon(op, true);
		ibtrs_srv_path_fail(path, "posting the RDMA READ of chunk %u: %d",
				    op->id, err);
		return;
	}
	this_cpu_inc(path->stats->pulls);
}

/*
 * @op is ACTIVE on @path: validate its header from a private copy (@hdr)
 * and hand it to the user, a pulled write once its data is read. A
 * malformed header fails the path.
 */
static void ibtrs_srv_op_start(struct ibtrs_srv_op *op,
			       struct ibtrs_srv_path *path, u8 *hdr)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	const struct trs_conn_params *p = &ctx->params;
	void *slot = ibtrs_srv_slot(sess, op->id);
	/* what trs_io_req_copy() reads at most */
	u32 hdr_len = min_t(u32, p->hdr_area, sizeof(struct trs_msg_io_req) +
			    p->max_usr_len + 1);
	const char *why = "";
	int ret;

	/*
	 * The peer wrote the header area (and a write's data) by RDMA. Only
	 * the request header and its user header are copied and synced, not
	 * the whole area.
	 */
	if (path->need_sync)
		ibtrs_srv_sync_chunk(path, op->id, p->chunk_size, hdr_len, true);
	invalidate_kernel_vmap_range(slot + p->chunk_size, hdr_len);
	hdr_len = trs_io_req_copy(hdr, slot + p->chunk_size, p->hdr_area,
				  p->max_usr_len);
	ret = trs_io_req_decode(hdr, hdr_len, p->chunk_size,
				p->max_usr_len, &op->req, &why);
	if (ret) {
		ibtrs_srv_op_abandon(op, true);
		ibtrs_srv_path_fail(path, "invalid request in chunk %u: %s",
				    op->id, why);
		return;
	}
	if (op->req.flags & TRS_IO_F_PULL)
		ibtrs_srv_pull(op, path);
	else
		ibtrs_srv_op_serve(op, path, hdr);
}

/* A retried request waited for the answer of its chunk's old one. */
void ibtrs_srv_op_start_work(struct work_struct *work)
{
	struct ibtrs_srv_op *op = container_of(work, struct ibtrs_srv_op,
					       start_work);
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_path *path;
	u8 *hdr;

	spin_lock_irq(&sess->lock);
	path = op->pending_path;
	op->pending_path = NULL;
	if (!path || path->closed) {
		op->pending_con = NULL;
		atomic_set(&op->state, IBTRS_OP_FREE);
		spin_unlock_irq(&sess->lock);
		smp_mb();	/* FREE before the dead check */
		ibtrs_srv_op_freed(sess, true);
		return;
	}
	WRITE_ONCE(op->answering, false);
	WRITE_ONCE(op->path, path);
	op->con = op->pending_con;
	op->pending_con = NULL;
	atomic_set(&op->state, IBTRS_OP_ACTIVE);
	spin_unlock_irq(&sess->lock);

	hdr = kmalloc(TRS_HDR_AREA, GFP_KERNEL);
	if (!hdr) {
		ibtrs_srv_resp(op, -ENOMEM, 0);
		return;
	}
	ibtrs_srv_op_start(op, path, hdr);
	kfree(hdr);
}

/*
 * A request for chunk @op that is busy: a retry of a failed path's request
 * (the client re-sends a chunk only after it gave up the path it last sent
 * it on), parked until the original is answered; a newer retry replaces an
 * earlier one, whose path we may not have seen fail yet. 0, or -EAGAIN:
 * the chunk became FREE meanwhile, start it.
 */
static int ibtrs_srv_io_req_busy(struct ibtrs_srv_con *con,
				 struct ibtrs_srv_op *op)
{
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_sess *sess = path->sess;
	int state, ret = 0;

	spin_lock_irq(&sess->lock);
	state = atomic_read(&op->state);
	if (state == IBTRS_OP_FREE) {
		ret = -EAGAIN;
		goto out_unlock;
	}
	/*
	 * A client never re-sends a chunk on the path it is busy on, but it
	 * may send the chunk's next request as soon as it has the answer,
	 * which can be before the answer's ACTIVE -> FREE: that one waits.
	 */
	if ((READ_ONCE(op->path) == path && !READ_ONCE(op->answering)) ||
	    op->pending_path == path) {
		spin_unlock_irq(&sess->lock);
		ibtrs_srv_path_fail(path, "request for chunk %u which is busy on this path",
				    op->id);
		return 0;
	}
	/* ACTIVE -> PENDING races the answer's ACTIVE -> FREE */
	if (state == IBTRS_OP_ACTIVE &&
	    atomic_cmpxchg(&op->state, IBTRS_OP_ACTIVE,
			   IBTRS_OP_PENDING) != IBTRS_OP_ACTIVE) {
		ret = -EAGAIN;
		goto out_unlock;
	}
	op->pending_path = path;
	op->pending_con = con;
	this_cpu_inc(path->stats->reqs);
	path->deferred++;
out_unlock:
	spin_unlock_irq(&sess->lock);
	return ret;
}

static void ibtrs_srv_io_req(struct ibtrs_srv_con *con, u32 id)
{
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_op *op = &path->sess->ops[id];

	while (atomic_cmpxchg(&op->state, IBTRS_OP_FREE,
			      IBTRS_OP_ACTIVE) != IBTRS_OP_FREE)
		if (!ibtrs_srv_io_req_busy(con, op))
			return;
	WRITE_ONCE(op->answering, false);
	WRITE_ONCE(op->path, path);
	op->con = con;
	this_cpu_inc(path->stats->reqs);
	ibtrs_srv_op_start(op, path, con->hdr);
}

/* ---------------------------------------------------------------- */
/* Receives, INFO, heartbeats                                        */

/* The first post of @iu: its receive work request is made here. */
int ibtrs_srv_post_recv(struct ibtrs_srv_con *con, struct ibtrs_srv_iu *iu)
{
	iu->sge.addr = iu->dma;
	iu->sge.length = TRS_MAX_RECV_MSG;
	iu->sge.lkey = con->path->pd->local_dma_lkey;
	iu->wr.wr_cqe = &iu->cqe;
	iu->wr.sg_list = &iu->sge;
	iu->wr.num_sge = 1;
	iu->wr.next = NULL;
	return ib_post_recv(con->qp, &iu->wr, NULL);
}

/*
 * Post the chain of consumed receives of @con. Only the CQ's own work
 * calls it (one handler at a time per CQ).
 */
void ibtrs_srv_recv_flush(struct ibtrs_srv_con *con)
{
	struct ib_recv_wr *first = ibtrs_rx_chain_take(&con->rx_chain);

	if (first && ib_post_recv(con->qp, first, NULL))
		ibtrs_srv_path_fail(con->path, "reposting receives failed");
}

/* @iu is consumed: re-post it with the next IBTRS_RX_BATCH - 1. */
static void ibtrs_srv_recv_again(struct ibtrs_srv_iu *iu)
{
	struct ibtrs_srv_con *con = iu->con;

	if (ibtrs_rx_chain_add(&con->rx_chain, &iu->wr, IBTRS_RX_BATCH))
		ibtrs_srv_recv_flush(con);
}

/* SEND_WITH_IMM without payload on connection 0. Under sess->lock. */
static int ibtrs_srv_post_imm(struct ibtrs_srv_path *path, u32 imm)
{
	struct ib_send_wr wr = {
		.wr_cqe = &path->hb_cqe,
		.opcode = IB_WR_SEND_WITH_IMM,
		.send_flags = IB_SEND_SIGNALED,
		.ex.imm_data = cpu_to_be32(imm),
	};

	if (path->closed || !path->cons[0].qp)
		return 0;
	return ib_post_send(path->cons[0].qp, &wr, NULL);
}

static void ibtrs_srv_info_req(struct ibtrs_srv_con *con, const void *msg,
			       u32 len)
{
	struct ibtrs_srv_path *path = con->path, *p;
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	char name[TRS_SESSNAME_MAX];
	struct ib_send_wr send_wr = {};
	struct ib_reg_wr reg_wr = {};
	struct ib_sge sge;
	struct trs_info info = {};
	struct ib_send_wr *head = &reg_wr.wr;
	/* chunk_mode rekey: every chunk's registration and the KEYS first */
	struct ib_reg_wr *regs = NULL;
	struct ib_send_wr *key_wrs = NULL;
	struct ib_sge *key_sges = NULL;
	const char *why = "";
	bool first;
	int err, n;

	if (con->cid != 0 || path->joined) {
		ibtrs_srv_path_fail(path, "unexpected INFO_REQ");
		return;
	}
	if (trs_info_req_decode(msg, len, name, &why)) {
		ibtrs_srv_path_fail(path, "bad INFO_REQ: %s", why);
		return;
	}

	/*
	 * The user learns of the session before the client can send it a
	 * request: INFO_RSP goes out only after link_ev() returned.
	 */
	mutex_lock(&ctx->mutex);
	if (!sess->named) {
		strscpy(sess->name, name, sizeof(sess->name));
		sess->named = true;
	} else if (strcmp(sess->name, name)) {
		pr_warn("sess %s: path from %s names itself '%s'\n",
			sess->name, path->addr, name);
	}
	first = !sess->link_up;
	sess->link_up = true;
	if (first && ctx->ops.link_ev)
		ctx->ops.link_ev(sess, IBTRS_SRV_LINK_EV_CONNECTED, sess->priv);
	mutex_unlock(&ctx->mutex);

	ib_update_fast_reg_key(path->mr, ib_inc_rkey(path->mr->rkey));
	info.queue_depth = sess->queue_depth;
	info.chunk_size = ctx->params.chunk_size;
	info.slot_size = ctx->slot_size;
	info.pool_addr = path->mr->iova;
	/* under rekey the pool has no remote key: each chunk has its own */
	info.pool_rkey = path->rekey ? 0 : path->mr->rkey;
	/* pulled writes (write_mode pull) on connections that offer READs */
	info.flags = TRS_INFO_F_PULL | (path->rekey ? TRS_INFO_F_REKEY : 0);
	trs_info_rsp_encode(con->txb.buf, &info);
	ib_dma_sync_single_for_device(path->dev, con->txb.dma,
				      sizeof(struct trs_msg_info_rsp),
				      DMA_TO_DEVICE);

	/* The pool's registration goes first on the same QP. */
	reg_wr.wr.opcode = IB_WR_REG_MR;
	reg_wr.wr.wr_cqe = &path->reg_cqe;
	reg_wr.wr.next = &send_wr;
	reg_wr.mr = path->mr;
	reg_wr.key = path->mr->rkey;
	reg_wr.access = IB_ACCESS_LOCAL_WRITE |
			(path->rekey ? 0 : IB_ACCESS_REMOTE_WRITE);
	sge.addr = con->txb.dma;
	sge.length = sizeof(struct trs_msg_info_rsp);
	sge.lkey = path->pd->local_dma_lkey;
	send_wr.wr_cqe = &con->send_cqe;
	send_wr.opcode = IB_WR_SEND;
	send_wr.send_flags = IB_SEND_SIGNALED;
	send_wr.sg_list = &sge;
	send_wr.num_sge = 1;
	if (path->rekey) {
		u32 nmsgs = ibtrs_srv_rekey_nmsgs(sess->queue_depth);

		regs = kcalloc(sess->queue_depth, sizeof(*regs), GFP_KERNEL);
		key_wrs = kcalloc(nmsgs, sizeof(*key_wrs), GFP_KERNEL);
		key_sges = kcalloc(nmsgs, sizeof(*key_sges), GFP_KERNEL);
		head = regs && key_wrs && key_sges ?
		       ibtrs_srv_rekey_join(path, con, regs, key_wrs, key_sges,
					    &reg_wr.wr) : ERR_PTR(-ENOMEM);
		if (IS_ERR(head)) {
			ibtrs_srv_path_fail(path, "chunk_mode rekey: no keys: %ld",
					    PTR_ERR(head));
			goto out_free_rekey;
		}
	}

	spin_lock_irq(&sess->lock);
	if (path->closed) {
		spin_unlock_irq(&sess->lock);
		goto out_free_rekey;
	}
	err = ib_post_send(con->qp, head, NULL);
	if (!err) {
		path->joined = true;
		ibtrs_srv_hb_start(path);
		/*
		 * Heartbeats start now. Only while the path is open: the close
		 * work marks it closed under this lock before it cancels the
		 * work, which must not be armed again after that.
		 */
		mod_delayed_work(ibtrs_srv_wq, &path->hb_work, 0);
	}
	spin_unlock_irq(&sess->lock);
	if (err) {
		ibtrs_srv_path_fail(path, "posting INFO_RSP: %d", err);
		goto out_free_rekey;
	}
	/* for the log: the paths that joined, this one included */
	n = 0;
	mutex_lock(&ctx->mutex);
	list_for_each_entry(p, &sess->paths, link)
		n += READ_ONCE(p->joined) &&
		     !test_bit(IBTRS_PATH_FAILED, &p->flags);
	mutex_unlock(&ctx->mutex);
	pr_info("sess %s: path from %s joined (%d path%s%s)\n", sess->name,
		path->addr, n, n > 1 ? "s" : "",
		path->rekey ? ", chunk_mode rekey" : "");
out_free_rekey:
	/* posted work requests were copied into the send queue */
	kfree(key_sges);
	kfree(key_wrs);
	kfree(regs);
}

/*
 * A message that is not a request (INFO_REQ): copied out of its buffer
 * before the buffer is posted again. Not inlined: its copy's stack (zeroed
 * by the kernel's INIT_STACK_ALL_ZERO) stays off the IO path.
 */
static noinline void ibtrs_srv_recv_msg(struct ibtrs_srv_iu *iu,
					const struct trs_rx_msg *m)
{
	struct ibtrs_srv_con *con = iu->con;
	u8 msg[TRS_MAX_RECV_MSG];

	memcpy(msg, iu->buf, m->len);
	ib_dma_sync_single_for_device(con->path->dev, iu->dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	ibtrs_srv_recv_again(iu);
	ibtrs_srv_recv_flush(con);
	ibtrs_srv_info_req(con, msg, m->len);
}

/* A heartbeat (answered) or its ack (only life). */
static noinline void ibtrs_srv_recv_hb(struct ibtrs_srv_con *con,
				       const struct trs_rx_msg *m)
{
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_sess *sess = path->sess;
	int err = 0;

	ibtrs_srv_recv_flush(con);
	if (m->kind != TRS_RX_HB)
		return;
	spin_lock_irq(&sess->lock);
	err = ibtrs_srv_post_imm(path, trs_to_imm(TRS_IMM_HB_ACK, m->id, 0));
	spin_unlock_irq(&sess->lock);
	if (err)
		ibtrs_srv_path_fail(path, "cannot answer a heartbeat: %d", err);
}

void ibtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_iu *iu = container_of(wc->wr_cqe, struct ibtrs_srv_iu,
					       cqe);
	struct ibtrs_srv_con *con = iu->con;
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_sess *sess = path->sess;
	struct trs_rx_wc w;
	struct trs_rx_msg m;
	const char *why = "";
	int err;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_srv_wr_error(path, wc, "receive");
		return;
	}
	if (test_bit(IBTRS_PATH_FAILED, &path->flags))
		return;		/* nothing more is served on a failed path */
	w.ok = true;
	if (wc->opcode == IB_WC_RECV)
		w.op = TRS_RX_OP_RECV;
	else if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
		w.op = TRS_RX_OP_RECV_RDMA_IMM;
	else
		w.op = TRS_RX_OP_OTHER;
	w.with_imm = wc->wc_flags & IB_WC_WITH_IMM;
	w.imm = w.with_imm ? be32_to_cpu(wc->ex.imm_data) : 0;
	w.with_inv = wc->wc_flags & IB_WC_WITH_INVALIDATE;
	w.inv_rkey = w.with_inv ? wc->ex.invalidate_rkey : 0;
	w.byte_len = wc->byte_len;

	ib_dma_sync_single_for_cpu(path->dev, iu->dma, TRS_MAX_RECV_MSG,
				   DMA_FROM_DEVICE);
	err = trs_rx_decode_srv(&w, iu->buf, sess->queue_depth, &m, &why);
	if (err) {
		ibtrs_srv_path_fail(path, "bad receive: %s (opcode %d, %u bytes)",
				    why, wc->opcode, wc->byte_len);
		return;
	}
	/* any receive is life; the heartbeat tick reads it */
	WRITE_ONCE(con->last_rx, jiffies);
	if (unlikely(m.kind == TRS_RX_MSG)) {	/* INFO_REQ, the only one */
		ibtrs_srv_recv_msg(iu, &m);
		return;
	}
	ib_dma_sync_single_for_device(path->dev, iu->dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	ibtrs_srv_recv_again(iu);

	switch (m.kind) {
	case TRS_RX_IO_REQ:
		if (!READ_ONCE(path->joined)) {
			ibtrs_srv_path_fail(path, "IO request before the path joined");
			break;
		}
		ibtrs_srv_io_req(con, m.id);
		break;
	case TRS_RX_HB:
	case TRS_RX_HB_ACK:	/* only life; the server keeps no RTT */
		ibtrs_srv_recv_hb(con, &m);
		break;
	default:
		ibtrs_srv_path_fail(path, "unexpected receive kind %d", m.kind);
	}
}

/*
 * The newest receive of any connection of @path, in microseconds (the
 * connections record it in jiffies; 0 while none was made).
 */
u64 ibtrs_srv_last_rx_us(struct ibtrs_srv_path *path, u64 now)
{
	unsigned long newest = 0, j;
	bool any = false;
	int i;

	for (i = 0; i < path->ncons; i++) {
		if (!READ_ONCE(path->cons[i].cm_id))
			continue;
		j = READ_ONCE(path->cons[i].last_rx);
		if (!any || time_after(j, newest))
			newest = j;
		any = true;
	}
	if (!any)
		return 0;
	/* capped: a path is dead long before that */
	j = min_t(unsigned long, jiffies - newest, 1000 * HZ);
	return now - min_t(u64, now, jiffies_to_usecs(j));
}

void ibtrs_srv_hb_work(struct work_struct *work)
{
	struct ibtrs_srv_path *path = container_of(to_delayed_work(work),
						   struct ibtrs_srv_path,
						   hb_work);
	struct ibtrs_srv_sess *sess = path->sess;
	u64 now = ibtrs_now_us(), tmo, idle;
	const char *why = NULL;
	int err = 0;
	u16 seq;

	spin_lock_irq(&sess->lock);
	if (path->closed) {
		spin_unlock_irq(&sess->lock);
		return;
	}
	trs_hb_on_rx(&path->hb, ibtrs_srv_last_rx_us(path, now));
	tmo = trs_hb_timeout_us(&path->hb);
	idle = trs_hb_idle_us(&path->hb, now);
	if (!path->joined) {
		/*
		 * A path that never joins is dropped, counted from its first
		 * connection: heartbeats do not keep an unjoined path (and its
		 * session's pool) alive.
		 */
		if (now - path->created_us > tmo + IBTRS_JOIN_GRACE_US) {
			why = "did not join in time";
			idle = now - path->created_us;
		}
	} else if (trs_hb_timed_out(&path->hb, now)) {
		why = "heartbeat timeout";
	} else if (trs_hb_due(&path->hb, now, &seq)) {
		err = ibtrs_srv_post_imm(path, trs_to_imm(TRS_IMM_HB, seq, 0));
		path->hb_sent++;
	}
	spin_unlock_irq(&sess->lock);
	if (why) {
		ibtrs_srv_path_fail(path, "%s: %s %llu ms", why,
				    path->joined ? "nothing received for" :
				    "connected", idle / USEC_PER_MSEC);
		return;
	}
	if (err) {
		ibtrs_srv_path_fail(path, "cannot post a heartbeat: %d", err);
		return;
	}
	queue_delayed_work(ibtrs_srv_wq, &path->hb_work,
			   msecs_to_jiffies(IBTRS_TICK_MS));
}
