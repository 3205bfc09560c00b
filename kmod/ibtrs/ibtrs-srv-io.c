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

/* Post the answer of @op (and a read's data before it). Under sess->lock. */
static int ibtrs_srv_post_resp(struct ibtrs_srv_op *op, int status, u32 len)
{
	struct ibtrs_srv_path *path = op->path;
	struct ibtrs_srv_con *con = op->con;
	struct ib_rdma_wr data_wr = {};
	struct ib_send_wr rsp_wr = {};
	const struct ib_send_wr *first = &rsp_wr;
	struct ib_sge data_sge, rsp_sge;
	u32 imm;

	if (op->req.type == TRS_MSG_IO_READ && !status && len) {
		/* what the block layer or the user put there, for the device */
		ibtrs_srv_sync_chunk(path, op->id, 0, len, false);
		data_sge.addr = path->mr->iova +
				(u64)op->id * op->sess->ctx->slot_size;
		data_sge.length = len;
		data_sge.lkey = path->mr->lkey;
		data_wr.wr.wr_cqe = &con->send_cqe;
		data_wr.wr.opcode = IB_WR_RDMA_WRITE;
		data_wr.wr.sg_list = &data_sge;
		data_wr.wr.num_sge = 1;
		data_wr.wr.next = &rsp_wr;
		data_wr.remote_addr = op->req.raddr;
		data_wr.rkey = op->req.rkey;
		first = &data_wr.wr;
	}
	rsp_wr.wr_cqe = &con->send_cqe;
	rsp_wr.send_flags = IB_SEND_SIGNALED;
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
		rsp_sge.addr = con->txb.dma + off;
		rsp_sge.length = sizeof(struct trs_msg_io_rsp);
		rsp_sge.lkey = path->pd->local_dma_lkey;
		rsp_wr.opcode = inv ? IB_WR_SEND_WITH_INV : IB_WR_SEND;
		rsp_wr.ex.invalidate_rkey = inv ? op->req.rkey : 0;
		rsp_wr.sg_list = &rsp_sge;
		rsp_wr.num_sge = 1;
	} else {
		if (trs_imm_pack(TRS_IMM_IO_RSP, op->id, status, &imm))
			imm = trs_to_imm(TRS_IMM_IO_RSP, op->id, EIO);
		rsp_wr.opcode = IB_WR_SEND_WITH_IMM;
		rsp_wr.ex.imm_data = cpu_to_be32(imm);
	}
	return ib_post_send(con->qp, first, NULL);
}

/* Drop @op's claim on its chunk. Under sess->lock; true: free the session. */
static bool ibtrs_srv_op_release(struct ibtrs_srv_op *op)
{
	struct ibtrs_srv_sess *sess = op->sess;

	op->state = IBTRS_OP_FREE;
	op->path = NULL;
	op->con = NULL;
	sess->active_ops--;
	return sess->dead && !sess->active_ops;
}

int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_path *path;
	unsigned long flags;
	bool free_sess = false;
	int err = 0, perr;
	u32 rlen;

	/* A read answer must cover the request (trs/common/proto.c). */
	rlen = len > U32_MAX ? U32_MAX : len;
	if (trs_io_resp_check(&op->req, &status, &rlen)) {
		pr_err_ratelimited("sess %s: read answer of chunk %u has %zu bytes, the request %u; failing the IO with EIO\n",
				   ibtrs_sess_name(sess), op->id, len,
				   op->req.sg_cnt ? op->req.rlen : 0);
		err = -EINVAL;
	}
	len = rlen;
	spin_lock_irqsave(&sess->lock, flags);
	if (WARN_ON_ONCE(op->state != IBTRS_OP_ACTIVE)) {
		spin_unlock_irqrestore(&sess->lock, flags);
		return -EINVAL;
	}
	path = op->path;
	if (path && !path->closed) {
		perr = ibtrs_srv_post_resp(op, status, len);
		if (!perr)
			path->rsps++;
		else
			ibtrs_srv_path_fail(path, "posting the answer of chunk %u: %d",
					    op->id, perr);
	}
	if (op->pending_path) {
		op->state = IBTRS_OP_QUEUED;
		op->path = NULL;
		op->con = NULL;
		queue_work(ibtrs_srv_io_wq, &op->start_work);
	} else {
		free_sess = ibtrs_srv_op_release(op);
	}
	spin_unlock_irqrestore(&sess->lock, flags);
	if (free_sess)
		queue_work(ibtrs_srv_wq, &sess->free_work);
	return err;
}
EXPORT_SYMBOL_GPL(ibtrs_srv_resp);

/* ---------------------------------------------------------------- */
/* Requests                                                          */

/*
 * @op is ACTIVE on @path: validate its header from a private copy (@hdr)
 * and hand it to the user. A malformed header fails the path.
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
	unsigned long flags;
	enum ibtrs_dir dir;
	size_t datalen;
	void *data;
	bool free_sess;
	int ret;

	/*
	 * The peer wrote the header area (and a write's data) by RDMA. Only
	 * the request header and its user header are copied and synced, not
	 * the whole area.
	 */
	ibtrs_srv_sync_chunk(path, op->id, p->chunk_size, hdr_len, true);
	invalidate_kernel_vmap_range(slot + p->chunk_size, hdr_len);
	hdr_len = trs_io_req_copy(hdr, slot + p->chunk_size, p->hdr_area,
				  p->max_usr_len);
	ret = trs_io_req_decode(hdr, hdr_len, p->chunk_size,
				p->max_usr_len, &op->req, &why);
	if (ret) {
		spin_lock_irqsave(&sess->lock, flags);
		op->pending_path = NULL;
		op->pending_con = NULL;
		free_sess = ibtrs_srv_op_release(op);
		spin_unlock_irqrestore(&sess->lock, flags);
		if (free_sess)
			queue_work(ibtrs_srv_wq, &sess->free_work);
		ibtrs_srv_path_fail(path, "invalid request in chunk %u: %s",
				    op->id, why);
		return;
	}
	if (op->req.type == TRS_MSG_IO_WRITE) {
		dir = IBTRS_WRITE;
		datalen = op->req.data_len;
		data = slot + p->chunk_size - datalen;
		ibtrs_srv_sync_chunk(path, op->id, p->chunk_size - datalen,
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

/* A retried request waited for the answer of its chunk's old one. */
void ibtrs_srv_op_start_work(struct work_struct *work)
{
	struct ibtrs_srv_op *op = container_of(work, struct ibtrs_srv_op,
					       start_work);
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_path *path;
	bool free_sess = false;
	u8 *hdr;

	spin_lock_irq(&sess->lock);
	path = op->pending_path;
	op->pending_path = NULL;
	if (!path || path->closed) {
		op->pending_con = NULL;
		free_sess = ibtrs_srv_op_release(op);
		spin_unlock_irq(&sess->lock);
		if (free_sess)
			ibtrs_srv_sess_free(sess);
		return;
	}
	op->state = IBTRS_OP_ACTIVE;
	op->path = path;
	op->con = op->pending_con;
	op->pending_con = NULL;
	spin_unlock_irq(&sess->lock);

	hdr = kmalloc(TRS_HDR_AREA, GFP_KERNEL);
	if (!hdr) {
		ibtrs_srv_resp(op, -ENOMEM, 0);
		return;
	}
	ibtrs_srv_op_start(op, path, hdr);
	kfree(hdr);
}

static void ibtrs_srv_io_req(struct ibtrs_srv_con *con, u32 id)
{
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_op *op = &sess->ops[id];
	unsigned long flags;

	spin_lock_irqsave(&sess->lock, flags);
	if (op->state != IBTRS_OP_FREE) {
		/* a client never re-sends a chunk on the path it is busy on */
		if (op->path == path || op->pending_path == path) {
			spin_unlock_irqrestore(&sess->lock, flags);
			ibtrs_srv_path_fail(path, "request for chunk %u which is busy on this path",
					    id);
			return;
		}
		/*
		 * A failed-over retry overtook the original's answer (ACTIVE),
		 * or the original was answered and an earlier retry waits to
		 * be started (QUEUED). The client re-sends a chunk only after
		 * it gave up the path it last sent it on, so the newest retry
		 * is the one it waits for: it replaces an earlier one, whose
		 * path we may not have seen fail yet.
		 */
		op->pending_path = path;
		op->pending_con = con;
		path->reqs++;
		path->deferred++;
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	op->state = IBTRS_OP_ACTIVE;
	op->path = path;
	op->con = con;
	sess->active_ops++;
	path->reqs++;
	spin_unlock_irqrestore(&sess->lock, flags);
	ibtrs_srv_op_start(op, path, con->hdr);
}

/* ---------------------------------------------------------------- */
/* Receives, INFO, heartbeats                                        */

int ibtrs_srv_post_recv(struct ibtrs_srv_con *con, struct ibtrs_srv_iu *iu)
{
	return ibtrs_post_recv_one(con->qp, con->path->pd, &iu->cqe, iu->dma,
				   TRS_MAX_RECV_MSG);
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
	info.pool_rkey = path->mr->rkey;
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
	reg_wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	sge.addr = con->txb.dma;
	sge.length = sizeof(struct trs_msg_info_rsp);
	sge.lkey = path->pd->local_dma_lkey;
	send_wr.wr_cqe = &con->send_cqe;
	send_wr.opcode = IB_WR_SEND;
	send_wr.send_flags = IB_SEND_SIGNALED;
	send_wr.sg_list = &sge;
	send_wr.num_sge = 1;

	spin_lock_irq(&sess->lock);
	if (path->closed) {
		spin_unlock_irq(&sess->lock);
		return;
	}
	err = ib_post_send(con->qp, &reg_wr.wr, NULL);
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
		return;
	}
	/* for the log: the paths that joined, this one included */
	n = 0;
	mutex_lock(&ctx->mutex);
	list_for_each_entry(p, &sess->paths, link)
		n += READ_ONCE(p->joined) &&
		     !test_bit(IBTRS_PATH_FAILED, &p->flags);
	mutex_unlock(&ctx->mutex);
	pr_info("sess %s: path from %s joined (%d path%s)\n", sess->name,
		path->addr, n, n > 1 ? "s" : "");
}

void ibtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_iu *iu = container_of(wc->wr_cqe, struct ibtrs_srv_iu,
					       cqe);
	struct ibtrs_srv_con *con = iu->con;
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_sess *sess = path->sess;
	struct trs_rx_wc w = {};
	struct trs_rx_msg m;
	u8 msg[TRS_MAX_RECV_MSG];
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
	if (m.kind == TRS_RX_MSG)
		memcpy(msg, iu->buf, m.len);
	ib_dma_sync_single_for_device(path->dev, iu->dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	err = ibtrs_srv_post_recv(con, iu);
	if (err) {
		ibtrs_srv_path_fail(path, "reposting a receive: %d", err);
		return;
	}

	spin_lock_irq(&sess->lock);
	trs_hb_on_rx(&path->hb, ibtrs_now_us());	/* any receive is life */
	if (m.kind == TRS_RX_HB)
		err = ibtrs_srv_post_imm(path, trs_to_imm(TRS_IMM_HB_ACK, m.id, 0));
	spin_unlock_irq(&sess->lock);
	if (err) {
		ibtrs_srv_path_fail(path, "cannot answer a heartbeat: %d", err);
		return;
	}

	switch (m.kind) {
	case TRS_RX_HB:
	case TRS_RX_HB_ACK:	/* only life; the server keeps no RTT */
		break;
	case TRS_RX_IO_REQ:
		if (!READ_ONCE(path->joined)) {
			ibtrs_srv_path_fail(path, "IO request before the path joined");
			break;
		}
		ibtrs_srv_io_req(con, m.id);
		break;
	case TRS_RX_MSG:	/* INFO_REQ, the only valid message */
		ibtrs_srv_info_req(con, msg, m.len);
		break;
	default:
		ibtrs_srv_path_fail(path, "unexpected receive kind %d", m.kind);
	}
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
