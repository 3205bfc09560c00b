// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt-io.c - the client's request path: requests posted on a
 * connection of the chosen path, receives (every message through
 * trs/common/rx.c), the end of an IO (one answer, remote or local
 * invalidation), heartbeats.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "ibtrs-clt-pri.h"

/* ---------------------------------------------------------------- */
/* IO end                                                            */

/*
 * Undo the mappings of a posted @io (ibtrs_clt_io_post()); once: a read
 * whose invalidation was deferred is unmapped before its path's MR pools
 * go, and not again when it ends.
 */
void ibtrs_clt_io_unmap(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_path *path = io->path;

	if (io->nents)
		ib_dma_unmap_sg(path->dev, io->sg, io->sg_cnt,
				io->dir == IBTRS_CLT_READ ? DMA_FROM_DEVICE :
				DMA_TO_DEVICE);
	io->nents = 0;
	if (io->hdr_len)
		ib_dma_unmap_single(path->dev, io->hdr_dma, io->hdr_len,
				    DMA_TO_DEVICE);
	io->hdr_len = 0;
	if (io->mr) {
		ib_mr_pool_put(io->con->qp, &io->con->qp->rdma_mrs, io->mr);
		io->mr = NULL;
	}
}

static void ibtrs_clt_io_end(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_sess *sess = io->sess;
	struct ibtrs_clt_path *path = io->path;
	u64 now = ibtrs_clt_now_us();
	unsigned long flags;
	int i;

	ibtrs_clt_io_unmap(io);
	spin_lock_irqsave(&path->lock, flags);
	trs_mp_lat_sample(&path->lat_ewma, now > io->start_us ?
			  now - io->start_us : 0);
	spin_unlock_irqrestore(&path->lock, flags);

	spin_lock_irqsave(&sess->lock, flags);
	io->inflight = false;
	sess->mp[path->idx].lat_ewma = path->lat_ewma;
	for (i = 0; i < sess->npaths; i++)
		if (i != path->idx && !sess->mp[i].inflight)
			trs_mp_lat_age(&sess->mp[i].lat_ewma);
	if (sess->mp[path->idx].inflight)
		sess->mp[path->idx].inflight--;
	spin_unlock_irqrestore(&sess->lock, flags);
	atomic_dec(&path->inflight);
	atomic_dec(&sess->inflight);
	io->conf(io->priv, io->status);
}

void ibtrs_clt_io_put(struct ibtrs_clt_io *io)
{
	if (atomic_dec_and_test(&io->ref))
		ibtrs_clt_io_end(io);
}

void ibtrs_clt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_io *io = container_of(wc->wr_cqe, struct ibtrs_clt_io,
					       send_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(io->path, wc, "request");
	ibtrs_clt_io_put(io);
}

void ibtrs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_io *io = container_of(wc->wr_cqe, struct ibtrs_clt_io,
					       inv_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_clt_wr_error(io->path, wc, "LOCAL_INV");
		io->status = -EIO;
	}
	ibtrs_clt_io_put(io);
}

void ibtrs_clt_ctl_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_con *con = cq->cq_context;

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(con->path, wc, "control send");
}

/* ---------------------------------------------------------------- */
/* Receive                                                           */

int ibtrs_clt_post_recv(struct ibtrs_clt_iu *iu)
{
	struct ibtrs_clt_con *con = iu->con;

	return ibtrs_post_recv_one(con->qp, con->path->pd, &iu->cqe, iu->b.dma,
				   TRS_MAX_RECV_MSG);
}

static int ibtrs_clt_post_imm(struct ibtrs_clt_con *con, u32 imm)
{
	struct ibtrs_clt_path *path = con->path;
	struct ib_send_wr wr = {};

	wr.wr_cqe = &con->ctl_cqe;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.imm_data = cpu_to_be32(imm);
	if (ib_post_send(con->qp, &wr, NULL))
		return -EIO;
	atomic64_inc(&path->msgs);
	return 0;
}

static void ibtrs_clt_info_rsp(struct ibtrs_clt_path *path, const void *buf,
			       u32 len)
{
	const char *why = "";
	int err;

	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTING ||
	    completion_done(&path->info_done)) {
		ibtrs_clt_path_fail(path, "unexpected INFO_RSP");
		return;
	}
	err = trs_info_rsp_decode(buf, len, &path->params, &path->info, &why);
	if (err)
		ibtrs_clt_err(path, "bad INFO_RSP: %s\n", why);
	path->info_err = err;
	complete(&path->info_done);
}

/*
 * The answer of chunk @m->id. @is_msg: an IO_RSP message (@rsp_len its
 * length field), else an immediate.
 */
static void ibtrs_clt_io_answer(struct ibtrs_clt_con *con,
				const struct trs_rx_msg *m, bool is_msg,
				u32 rsp_len)
{
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = path->sess;
	struct ibtrs_clt_io *io = &sess->ios[m->id];
	const char *proto = NULL;
	bool local_inv = false;
	unsigned long flags;
	int status = m->status;

	spin_lock_irqsave(&sess->lock, flags);
	if (!io->inflight || io->con != con || io->answered) {
		spin_unlock_irqrestore(&sess->lock, flags);
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_path_fail(path, "protocol error: no request on the answer's connection");
		return;
	}
	io->answered = true;
	spin_unlock_irqrestore(&sess->lock, flags);
	atomic64_inc(&path->rsps);

	if (io->dir == IBTRS_CLT_READ) {
		if (!is_msg) {
			proto = "READ answered by an immediate";
			status = -EIO;
		} else if (!status && rsp_len != io->datalen) {
			proto = "successful READ answer shorter or longer than the request";
			status = -EIO;
		}
		if (io->mr) {
			if (m->inv && m->inv_rkey != io->mr->rkey) {
				proto = "invalidated rkey is not the request's";
				status = -EIO;
				local_inv = true;
			} else if (!m->inv) {
				local_inv = true;
			}
		}
	} else if (m->inv) {
		proto = "WRITE answer invalidated an rkey";
		status = -EIO;
	}
	io->status = status;
	if (local_inv) {
		struct ib_send_wr wr = {};
		int err = -ENOTCONN;

		wr.opcode = IB_WR_LOCAL_INV;
		wr.ex.invalidate_rkey = io->mr->rkey;
		wr.wr_cqe = &io->inv_cqe;
		wr.send_flags = IB_SEND_SIGNALED;
		/*
		 * Posted, like every WR of a path, under sess->lock while the
		 * path is up: the teardown sets FAILED under it before it
		 * drains, so a LOCAL_INV is never posted behind the drain
		 * marker (whose completion would be lost with the CQ).
		 */
		spin_lock_irqsave(&sess->lock, flags);
		if (path->state == IBTRS_CLT_PATH_CONNECTED) {
			atomic_inc(&io->ref);
			err = ib_post_send(con->qp, &wr, NULL);
			if (err)
				atomic_dec(&io->ref);
		}
		if (err) {
			/*
			 * The server may still write the buffer until the
			 * path's QPs and MRs are gone: the teardown ends the
			 * IO then (the answer's reference stays).
			 */
			io->inv_deferred = true;
			ibtrs_clt_path_fail_locked(path, "cannot post LOCAL_INV");
		}
		spin_unlock_irqrestore(&sess->lock, flags);
		if (!err) {
			atomic64_inc(&path->reg_wrs);
			atomic64_inc(&path->local_invs);
		}
	}
	if (proto) {
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_err(path, "protocol error: chunk %u: %s\n", io->id,
			      proto);
		ibtrs_clt_path_fail(path, "protocol error");
	}
	if (!io->inv_deferred)
		ibtrs_clt_io_put(io);
}

void ibtrs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_iu *iu = container_of(wc->wr_cqe, struct ibtrs_clt_iu,
					       cqe);
	struct ibtrs_clt_con *con = iu->con;
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = path->sess;
	struct trs_io_rsp_info r = {};
	u8 msg[TRS_MAX_RECV_MSG];
	struct trs_rx_wc w = {};
	struct trs_rx_msg m;
	const char *why = "";
	unsigned long flags;
	u64 rtt;
	int err;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_clt_wr_error(path, wc, "receive");
		return;
	}
	if (READ_ONCE(path->state) == IBTRS_CLT_PATH_FAILED)
		return;
	w.ok = true;
	w.op = wc->opcode == IB_WC_RECV ? TRS_RX_OP_RECV :
	       wc->opcode == IB_WC_RECV_RDMA_WITH_IMM ?
	       TRS_RX_OP_RECV_RDMA_IMM : TRS_RX_OP_OTHER;
	w.with_imm = wc->wc_flags & IB_WC_WITH_IMM;
	w.imm = w.with_imm ? be32_to_cpu(wc->ex.imm_data) : 0;
	w.with_inv = wc->wc_flags & IB_WC_WITH_INVALIDATE;
	w.inv_rkey = w.with_inv ? wc->ex.invalidate_rkey : 0;
	w.byte_len = wc->byte_len;
	ib_dma_sync_single_for_cpu(path->dev, iu->b.dma, TRS_MAX_RECV_MSG,
				   DMA_FROM_DEVICE);
	err = trs_rx_decode_clt(&w, iu->b.buf, READ_ONCE(sess->queue_depth), &m,
				&why);
	if (!err && m.kind == TRS_RX_IO_RSP && !w.with_imm)
		err = trs_io_rsp_decode(iu->b.buf, w.byte_len, sess->queue_depth,
					&r, &why);
	if (err) {
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_err(path, "bad receive: %s (opcode %d, %u bytes)\n",
			      why, wc->opcode, wc->byte_len);
		ibtrs_clt_path_fail(path, "protocol error");
		return;
	}
	if (m.kind == TRS_RX_MSG)
		memcpy(msg, iu->b.buf, m.len);
	ib_dma_sync_single_for_device(path->dev, iu->b.dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	err = ibtrs_clt_post_recv(iu);
	if (err) {
		ibtrs_clt_path_fail(path, "cannot repost a receive");
		return;
	}

	spin_lock_irqsave(&path->lock, flags);
	trs_hb_on_rx(&path->hb, ibtrs_clt_now_us());	/* any receive is life */
	if (m.kind == TRS_RX_HB_ACK &&
	    !trs_hb_on_ack(&path->hb, m.id, ibtrs_clt_now_us(), &rtt))
		path->hb_rtt_us = rtt;
	spin_unlock_irqrestore(&path->lock, flags);

	switch (m.kind) {
	case TRS_RX_HB:
		/* under sess->lock while up: never behind the drain marker */
		spin_lock_irqsave(&sess->lock, flags);
		if (path->state == IBTRS_CLT_PATH_CONNECTED &&
		    ibtrs_clt_post_imm(con, trs_to_imm(TRS_IMM_HB_ACK, m.id, 0)))
			ibtrs_clt_path_fail_locked(path, "cannot answer a heartbeat");
		spin_unlock_irqrestore(&sess->lock, flags);
		break;
	case TRS_RX_HB_ACK:
		break;
	case TRS_RX_IO_RSP:
		ibtrs_clt_io_answer(con, &m, !w.with_imm, r.len);
		break;
	case TRS_RX_MSG:	/* INFO_RSP, the only message, on cid 0 */
		if (con->cid)
			ibtrs_clt_path_fail(path, "INFO_RSP not on connection 0");
		else
			ibtrs_clt_info_rsp(path, msg, m.len);
		break;
	default:
		ibtrs_clt_path_fail(path, "unexpected receive");
	}
}

/* ---------------------------------------------------------------- */
/* Heartbeat                                                         */

void ibtrs_clt_hb_work(struct work_struct *work)
{
	struct ibtrs_clt_path *path = container_of(to_delayed_work(work),
						   struct ibtrs_clt_path,
						   hb_work);
	u64 now = ibtrs_clt_now_us();
	const char *why = NULL;
	unsigned long flags;
	u16 seq;

	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTED)
		return;
	spin_lock_irqsave(&path->lock, flags);
	if (trs_hb_timed_out(&path->hb, now)) {
		why = "heartbeat timeout";
	} else if (trs_hb_due(&path->hb, now, &seq)) {
		if (ibtrs_clt_post_imm(&path->cons[0],
				       trs_to_imm(TRS_IMM_HB, seq, 0)))
			why = "cannot post a heartbeat";
		else
			atomic64_inc(&path->hb_sent);
	}
	spin_unlock_irqrestore(&path->lock, flags);
	if (why) {
		ibtrs_clt_path_fail(path, why);
		return;
	}
	queue_delayed_work(ibtrs_clt_wq, &path->hb_work, IBTRS_CLT_HB_TICK);
}

/* ---------------------------------------------------------------- */
/* Requests                                                          */

int ibtrs_clt_get_permit(struct ibtrs_clt_sess *sess)
{
	unsigned long flags;
	int id;

	spin_lock_irqsave(&sess->lock, flags);
	id = trs_permit_get(&sess->permits);
	spin_unlock_irqrestore(&sess->lock, flags);
	return id;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_get_permit);

void ibtrs_clt_put_permit(struct ibtrs_clt_sess *sess, int permit)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&sess->lock, flags);
	ret = trs_permit_put(&sess->permits, permit);
	spin_unlock_irqrestore(&sess->lock, flags);
	WARN_ONCE(ret, "ibtrs-client: put of permit %d: %d\n", permit, ret);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_put_permit);

/* Map and post @io on @con. Under sess->lock. */
int ibtrs_clt_io_post(struct ibtrs_clt_io *io,
		      struct ibtrs_clt_con *con, size_t usrlen)
{
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = io->sess;
	struct ib_device *dev = path->dev;
	struct trs_io_req_info ri = {};
	struct ib_reg_wr reg_wr = {};
	struct ib_rdma_wr wr = {}, data_wr = {};
	const struct ib_send_wr *first = &wr.wr;
	u64 slot = path->info.pool_addr + (u64)io->id * sess->slot_size;
	int nsge = 0, i, n, ret;

	io->nents = 0;
	if (io->sg_cnt) {
		n = ib_dma_map_sg(dev, io->sg, io->sg_cnt,
				  io->dir == IBTRS_CLT_READ ? DMA_FROM_DEVICE :
				  DMA_TO_DEVICE);
		if (!n)
			return -ENOMEM;
		io->nents = n;
	}
	ri.type = io->dir == IBTRS_CLT_READ ? TRS_MSG_IO_READ :
		  TRS_MSG_IO_WRITE;
	ri.usr_len = usrlen;
	ri.seq = ++sess->seq;
	if (io->dir == IBTRS_CLT_READ && io->nents) {
		io->mr = ib_mr_pool_get(con->qp, &con->qp->rdma_mrs);
		if (!io->mr) {
			ret = -EAGAIN;
			goto out_unmap_sg;
		}
		ib_update_fast_reg_key(io->mr, ib_inc_rkey(io->mr->rkey));
		n = ib_map_mr_sg(io->mr, io->sg, io->nents, NULL, PAGE_SIZE);
		if (n != io->nents || io->mr->length != io->datalen) {
			ret = -EINVAL;
			goto out_put_mr;
		}
		reg_wr.wr.opcode = IB_WR_REG_MR;
		reg_wr.wr.wr_cqe = &con->reg_cqe;
		reg_wr.wr.next = &wr.wr;
		reg_wr.mr = io->mr;
		reg_wr.key = io->mr->rkey;
		/* exactly the IO buffer, writable by the server, this IO only */
		reg_wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		first = &reg_wr.wr;
		ri.flags = TRS_IO_F_NEED_INV;
		ri.sg_cnt = 1;
		ri.raddr = io->mr->iova;
		ri.rkey = io->mr->rkey;
		ri.rlen = io->datalen;
	} else if (io->dir == IBTRS_CLT_WRITE) {
		struct scatterlist *sg;

		ri.data_len = io->datalen;
		for_each_sg(io->sg, sg, io->nents, i) {
			io->sge[nsge].addr = sg_dma_address(sg);
			io->sge[nsge].length = sg_dma_len(sg);
			io->sge[nsge].lkey = path->pd->local_dma_lkey;
			nsge++;
		}
	}
	trs_io_req_encode(io->hdr, &ri);
	io->hdr_len = sizeof(struct trs_msg_io_req) + usrlen;
	io->hdr_dma = ib_dma_map_single(dev, io->hdr, io->hdr_len,
					DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, io->hdr_dma)) {
		io->hdr_len = 0;
		ret = -ENOMEM;
		goto out_put_mr;
	}
	io->sge[nsge].addr = io->hdr_dma;
	io->sge[nsge].length = io->hdr_len;
	io->sge[nsge].lkey = path->pd->local_dma_lkey;
	nsge++;

	wr.wr.wr_cqe = &io->send_cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.ex.imm_data = cpu_to_be32(trs_to_imm(TRS_IMM_IO_REQ, io->id, 0));
	wr.wr.sg_list = io->sge;
	wr.wr.num_sge = nsge;
	/* write data right-aligned before the header: one WRITE for both */
	wr.remote_addr = slot + sess->chunk_size - ri.data_len;
	wr.rkey = path->info.pool_rkey;
	if (nsge > path->max_sge) {
		/*
		 * More data segments than fit beside the header (a 128 KiB
		 * write of 4 KiB pages on a 32-SGE device): the data goes in an
		 * unsignaled RDMA_WRITE chained in front, the header alone in
		 * the WRITE_WITH_IMM. RC places the data before the server
		 * sees the immediate. One more WR, not one more IO.
		 */
		data_wr.wr.opcode = IB_WR_RDMA_WRITE;
		data_wr.wr.sg_list = io->sge;
		data_wr.wr.num_sge = nsge - 1;
		data_wr.wr.next = &wr.wr;
		data_wr.remote_addr = wr.remote_addr;
		data_wr.rkey = wr.rkey;
		wr.wr.sg_list = &io->sge[nsge - 1];
		wr.wr.num_sge = 1;
		wr.remote_addr = slot + sess->chunk_size;
		first = &data_wr.wr;
	}

	atomic_set(&io->ref, 2);	/* send completion + answer */
	io->start_us = ibtrs_clt_now_us();
	ret = ib_post_send(con->qp, first, NULL);
	if (ret)
		goto out_unmap_hdr;
	atomic64_inc(&con->reqs);
	atomic64_inc(&path->reqs);
	atomic64_inc(&path->msgs);
	if (io->mr)
		atomic64_inc(&path->reg_wrs);
	return 0;

out_unmap_hdr:
	ib_dma_unmap_single(dev, io->hdr_dma, io->hdr_len, DMA_TO_DEVICE);
	io->hdr_len = 0;
out_put_mr:
	if (io->mr) {
		ib_mr_pool_put(con->qp, &con->qp->rdma_mrs, io->mr);
		io->mr = NULL;
	}
out_unmap_sg:
	if (io->nents)
		ib_dma_unmap_sg(dev, io->sg, io->sg_cnt,
				io->dir == IBTRS_CLT_READ ? DMA_FROM_DEVICE :
				DMA_TO_DEVICE);
	io->nents = 0;
	return ret;
}

int ibtrs_clt_request(struct ibtrs_clt_sess *sess, enum ibtrs_clt_dir dir,
		      int permit, unsigned int hint, const void *usr,
		      size_t usrlen,
		      struct scatterlist *sg, unsigned int sg_cnt,
		      u32 datalen, ibtrs_clt_conf_fn conf, void *priv)
{
	struct ibtrs_clt_io *io;
	struct ibtrs_clt_path *path;
	unsigned long flags;
	int idx, ret;

	if (permit < 0 || permit >= sess->queue_depth ||
	    usrlen > sess->max_usr_len || datalen > sess->max_io ||
	    sg_cnt > sess->max_segs || (!sg_cnt != !datalen))
		return -EINVAL;
	io = &sess->ios[permit];
	io->dir = dir;
	io->sg = sg;
	io->sg_cnt = sg_cnt;
	io->datalen = datalen;
	io->usrlen = usrlen;
	io->conf = conf;
	io->priv = priv;
	io->hint = hint;
	io->status = 0;
	io->answered = false;
	io->expired = false;
	io->inv_deferred = false;
	io->mr = NULL;
	memcpy(io->hdr + sizeof(struct trs_msg_io_req), usr, usrlen);

	spin_lock_irqsave(&sess->lock, flags);
	if (WARN_ON_ONCE(io->inflight ||
			 !trs_permit_is_held(&sess->permits, permit))) {
		ret = -EINVAL;
		goto out_unlock;
	}
	idx = trs_mp_select(sess->mp_policy, sess->mp, sess->npaths,
			    &sess->rr_cursor, 0);
	if (idx < 0) {
		/* every path down: wait ibtrs_clt_ctrl_loss_tmo_ms for a reconnect */
		ret = !sess->closing && sess->all_down_at &&
		      time_before(jiffies, sess->all_down_at +
				  msecs_to_jiffies(ibtrs_clt_ctrl_loss_tmo_ms)) ?
		      -EAGAIN : -ENOTCONN;
		goto out_unlock;
	}
	path = sess->paths[idx];
	io->path = path;
	io->con = ibtrs_clt_con_of(path, hint);
	ret = ibtrs_clt_io_post(io, io->con, usrlen);
	if (ret)
		goto out_unlock;
	atomic_inc(&sess->inflight);
	atomic64_inc(&sess->nr_ios);
	atomic64_add(datalen, dir == IBTRS_CLT_READ ? &sess->read_bytes :
		     &sess->write_bytes);
	io->inflight = true;
	sess->mp[idx].inflight++;
	atomic_inc(&path->inflight);
out_unlock:
	spin_unlock_irqrestore(&sess->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_request);

void ibtrs_clt_request_timeout(struct ibtrs_clt_sess *sess, int permit,
			       void *priv, bool final)
{
	struct ibtrs_clt_path *path;
	struct ibtrs_clt_io *io;
	unsigned long flags;

	if (permit < 0 || permit >= sess->queue_depth)
		return;
	io = &sess->ios[permit];
	spin_lock_irqsave(&sess->lock, flags);
	if (!io->inflight || io->priv != priv) {	/* ended meanwhile */
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	if (final)
		io->expired = true;
	path = io->path;
	if (path) {
		/* the teardown re-posts it or (expired) ends it */
		ibtrs_clt_path_fail_locked(path, io->answered ?
					   "request timeout (answered, its LOCAL_INV pending)" :
					   "request timeout");
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	/* no path: it waits in sess->pending for one */
	if (!final || list_empty(&io->pending)) {
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	list_del_init(&io->pending);
	io->inflight = false;
	spin_unlock_irqrestore(&sess->lock, flags);
	io->status = -ETIMEDOUT;
	atomic_dec(&sess->inflight);
	io->conf(io->priv, io->status);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_request_timeout);
