// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-srv-path.c - the server's connections and paths: CQ, QP, receive
 * ring and message buffers of a connection, the chunk pool's registration
 * per path, a path's close work, and the RDMA CM handler that admits
 * connections into sessions.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/inet.h>
#include <rdma/ib_cm.h>
#include <net/ipv6.h>

#include "ibtrs-srv-pri.h"

/* ---------------------------------------------------------------- */
/* Connections and paths                                             */

/* Every failed work completion ends here; a flush is the teardown's echo. */
void ibtrs_srv_wr_error(struct ibtrs_srv_path *path, struct ib_wc *wc,
			const char *op)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR &&
	    test_bit(IBTRS_PATH_FAILED, &path->flags))
		return;
	ibtrs_srv_path_fail(path, "%s failed: %s", op,
			    ib_wc_status_msg(wc->status));
}

static void ibtrs_srv_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_con *con =
		container_of(wc->wr_cqe, struct ibtrs_srv_con, send_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_srv_wr_error(con->path, wc, "send");
}

static void ibtrs_srv_hb_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_path *path =
		container_of(wc->wr_cqe, struct ibtrs_srv_path, hb_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_srv_wr_error(path, wc, "heartbeat send");
}

static void ibtrs_srv_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_path *path =
		container_of(wc->wr_cqe, struct ibtrs_srv_path, reg_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_srv_wr_error(path, wc, "pool registration");
}

static void ibtrs_srv_qp_event(struct ib_event *ev, void *context)
{
	struct ibtrs_srv_con *con = context;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		/* a receive before the CM's RTU: let the CM move on */
		rdma_notify(con->cm_id, ev->event);
		break;
	case IB_EVENT_QP_LAST_WQE_REACHED:
	case IB_EVENT_SQ_DRAINED:
		break;
	default:
		ibtrs_srv_path_fail(con->path, "QP event %s",
				    ib_event_msg(ev->event));
	}
}

/* Undo ibtrs_srv_con_create(); the cm_id stays (its owner destroys it). */
static void ibtrs_srv_con_destroy(struct ibtrs_srv_con *con)
{
	struct ib_device *dev = con->path->dev;

	ibtrs_qp_cq_destroy(con->cm_id, &con->qp, &con->cq);
	ibtrs_dma_buf_free(dev, &con->rxb);
	ibtrs_dma_buf_free(dev, &con->txb);
	kfree(con->rx);
	con->rx = NULL;
	kfree(con->hdr);
	con->hdr = NULL;
}

/* CQ, QP and receive ring of @con on its cm_id. */
static int ibtrs_srv_con_create(struct ibtrs_srv_con *con)
{
	struct ibtrs_srv_path *path = con->path;
	struct ib_device *dev = path->dev;
	u32 qd = path->sess->queue_depth;
	/*
	 * per IO: the RDMA_WRITE of read data (or a pulled write's READ) +
	 * the answer, + LOCAL_INV and REG_MR under chunk_mode rekey; the
	 * entries of answers not retired yet (one in IBTRS_SIG_EVERY is
	 * signaled); + HB, INFO, REG, and a rekey join's REG_MR per chunk and
	 * its KEYS (fewer than the per-IO entries)
	 */
	u32 per_io = path->rekey ? 4 : 2;
	u32 sq = per_io * (qd + IBTRS_SIG_EVERY) + 16;
	/* per IO: the client's WRITE_WITH_IMM; + HB, INFO_REQ, a repost batch */
	u32 rq = qd + IBTRS_RX_EXTRA + IBTRS_RX_BATCH;
	u32 i;
	int err;

	sq = min_t(u32, sq, dev->attrs.max_qp_wr - 1);
	rq = min_t(u32, rq, dev->attrs.max_qp_wr - 1);
	/* +1 each for ib_drain_qp()'s markers */
	con->cq = ib_alloc_cq(dev, con, sq + 1 + rq + 1,
			      con->cid % dev->num_comp_vectors,
			      IB_POLL_WORKQUEUE);
	if (IS_ERR(con->cq)) {
		err = PTR_ERR(con->cq);
		con->cq = NULL;
		return err;
	}
	err = ibtrs_rc_qp_create(con->cm_id, path->pd, con->cq, sq, rq, 1,
				 ibtrs_srv_qp_event, con, NULL);
	if (err)
		goto out_destroy;
	con->qp = con->cm_id->qp;

	con->nrx = rq;
	err = ibtrs_dma_buf_alloc(dev, &con->rxb, (size_t)rq * TRS_MAX_RECV_MSG,
				  DMA_FROM_DEVICE);
	if (err)
		goto out_destroy;
	err = ibtrs_dma_buf_alloc(dev, &con->txb, IBTRS_TX_RSP_OFF +
				  (size_t)qd * IBTRS_RSP_SLOT, DMA_TO_DEVICE);
	if (err)
		goto out_destroy;
	err = -ENOMEM;
	con->hdr = kmalloc(TRS_HDR_AREA, GFP_KERNEL);
	con->rx = kcalloc(rq, sizeof(*con->rx), GFP_KERNEL);
	if (!con->hdr || !con->rx)
		goto out_destroy;
	con->send_cqe.done = ibtrs_srv_send_done;
	atomic_set(&con->sig_cnt, 0);
	con->last_rx = jiffies;
	for (i = 0; i < rq; i++) {
		struct ibtrs_srv_iu *iu = &con->rx[i];

		iu->cqe.done = ibtrs_srv_recv_done;
		iu->con = con;
		iu->buf = con->rxb.buf + (size_t)i * TRS_MAX_RECV_MSG;
		iu->dma = con->rxb.dma + (size_t)i * TRS_MAX_RECV_MSG;
		err = ibtrs_srv_post_recv(con, iu);
		if (err)
			goto out_destroy;
	}
	return 0;

out_destroy:
	ibtrs_srv_con_destroy(con);
	return err;
}

/* Register the session's pool on the path's PD: one MR, one rkey. */
static int ibtrs_srv_path_map_pool(struct ibtrs_srv_path *path)
{
	struct ibtrs_srv_sess *sess = path->sess;
	unsigned int bsize = PAGE_SIZE << sess->order;
	struct scatterlist *sg;
	unsigned int b;
	int i, n, err;

	err = sg_alloc_table(&path->sgt, sess->nblocks, GFP_KERNEL);
	if (err)
		return err;
	for_each_sg(path->sgt.sgl, sg, sess->nblocks, i)
		sg_set_page(sg, sess->blocks[i], bsize, 0);
	n = ib_dma_map_sg(path->dev, path->sgt.sgl, sess->nblocks,
			  DMA_BIDIRECTIONAL);
	if (!n)
		return -ENOMEM;
	path->sg_mapped = n;
	/* each block's device address; an IOMMU may have merged blocks */
	path->blk_dma = kvmalloc_array(sess->nblocks, sizeof(u64), GFP_KERNEL);
	if (!path->blk_dma)
		return -ENOMEM;
	b = 0;
	for_each_sg(path->sgt.sgl, sg, n, i) {
		u64 off;

		for (off = 0; off < sg_dma_len(sg) && b < sess->nblocks;
		     off += bsize)
			path->blk_dma[b++] = sg_dma_address(sg) + off;
	}
	if (b != sess->nblocks)
		return -EINVAL;
	path->mr = ib_alloc_mr(path->pd, IB_MR_TYPE_MEM_REG, n);
	if (IS_ERR(path->mr)) {
		err = PTR_ERR(path->mr);
		path->mr = NULL;
		return err;
	}
	if (ib_map_mr_sg(path->mr, path->sgt.sgl, n, NULL, bsize) != n)
		return -EINVAL;
	/* chunk_mode rekey: an MR of its own for each chunk */
	return path->rekey ? ibtrs_srv_rekey_alloc(path) : 0;
}

static void ibtrs_srv_path_unmap_pool(struct ibtrs_srv_path *path)
{
	ibtrs_srv_rekey_free(path);
	if (path->mr)
		ib_dereg_mr(path->mr);
	if (path->sg_mapped)
		ib_dma_unmap_sg(path->dev, path->sgt.sgl, path->sess->nblocks,
				DMA_BIDIRECTIONAL);
	sg_free_table(&path->sgt);
	kvfree(path->blk_dma);
}

/*
 * The chunks of closing @path lose it: their answers are dropped, a retry
 * parked on it is forgotten. Under sess->lock.
 */
static void ibtrs_srv_path_orphan_ops(struct ibtrs_srv_path *path)
{
	struct ibtrs_srv_sess *sess = path->sess;
	u32 i;

	for (i = 0; i < sess->queue_depth; i++) {
		struct ibtrs_srv_op *op = &sess->ops[i];

		if (op->pending_path == path) {
			op->pending_path = NULL;
			op->pending_con = NULL;
		}
		if (READ_ONCE(op->path) == path) {
			WRITE_ONCE(op->path, NULL);
			op->con = NULL;
		}
	}
}

/* A closed path's memory, a grace period after its close. */
static void ibtrs_srv_path_free_rcu(struct rcu_head *rcu)
{
	struct ibtrs_srv_path *path = container_of(rcu, struct ibtrs_srv_path,
						   rcu);

	free_percpu(path->stats);
	kfree(path->cons);
	kfree(path);
}

static void ibtrs_srv_path_close_work(struct work_struct *work)
{
	struct ibtrs_srv_path *path = container_of(work, struct ibtrs_srv_path,
						   close_work);
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	unsigned long deadline, gp;
	bool last;
	u32 i;

	/*
	 * A connect request holds the context mutex while it adds a
	 * connection to a path: once we hold it, none is half made, and later
	 * ones see IBTRS_PATH_FAILED (set before this work was queued) and
	 * leave the path alone. From here on nobody posts on the path's QPs.
	 */
	mutex_lock(&ctx->mutex);
	spin_lock_irq(&sess->lock);
	WRITE_ONCE(path->closed, true);
	ibtrs_srv_path_orphan_ops(path);
	spin_unlock_irq(&sess->lock);
	mutex_unlock(&ctx->mutex);
	/*
	 * Answers post in RCU read sections that saw the path open: after a
	 * grace period none is running and none starts, so nothing is posted
	 * behind the drain markers below. The grace period runs while the
	 * peer's DREP is awaited.
	 */
	gp = start_poll_synchronize_rcu();
	cancel_delayed_work_sync(&path->hb_work);
	/* a deferred start may still use the path */
	for (i = 0; i < sess->queue_depth; i++)
		flush_work(&sess->ops[i].start_work);

	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].cm_id)
			rdma_disconnect(path->cons[i].cm_id);
	/*
	 * Destroying a cm_id cancels a DREQ still queued: give the peer's
	 * DREP (a round trip) a moment, so the client learns of the close
	 * now and not from its heartbeat. A dead peer costs the timeout,
	 * once for all connections.
	 */
	deadline = jiffies + msecs_to_jiffies(IBTRS_DISC_WAIT_MS);
	for (i = 0; i < path->ncons; i++) {
		long left = (long)(deadline - jiffies);

		if (path->cons[i].cm_id && left > 0)
			wait_for_completion_timeout(&path->cons[i].cm_done,
						    left);
	}
	cond_synchronize_rcu(gp);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].qp)
			ib_drain_qp(path->cons[i].qp);
	/*
	 * Every request of the path was received (its CQs are drained): the
	 * ones that took their chunk after the first pass are let go now. An
	 * answer may still read the path (and see it closed): it is freed
	 * after a grace period.
	 */
	spin_lock_irq(&sess->lock);
	ibtrs_srv_path_orphan_ops(path);
	spin_unlock_irq(&sess->lock);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].cm_id)
			ibtrs_srv_con_destroy(&path->cons[i]);
	/*
	 * QPs, CQs, the pool MR and the PD go before the cm_ids: a device
	 * removal waits for the cm_ids, and nothing of ours may be left on
	 * the device by then.
	 */
	ibtrs_srv_path_unmap_pool(path);
	if (path->pd)
		ib_dealloc_pd(path->pd);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].cm_id)
			rdma_destroy_id(path->cons[i].cm_id);

	mutex_lock(&ctx->mutex);
	list_del(&path->link);
	last = --sess->npaths == 0;
	if (last) {
		list_del(&sess->link);	/* a reconnect makes a new one */
		ctx->nsessions--;
	}
	mutex_unlock(&ctx->mutex);
	pr_info("sess %s: path from %s closed%s\n", ibtrs_sess_name(sess),
		path->addr, last ? ", no path left" : "");
	call_rcu(&path->rcu, ibtrs_srv_path_free_rcu);
	if (!last)
		return;
	if (sess->link_up && ctx->ops.link_ev)
		ctx->ops.link_ev(sess, IBTRS_SRV_LINK_EV_DISCONNECTED,
				 sess->priv);
	spin_lock_irq(&sess->lock);
	WRITE_ONCE(sess->dead, true);
	spin_unlock_irq(&sess->lock);
	smp_mb();	/* dead before the scan: see ibtrs_srv_op_freed() */
	ibtrs_srv_sess_dead_check(sess, true);
}

static struct ibtrs_srv_path *
ibtrs_srv_path_create(struct ibtrs_srv_sess *sess,
		      const struct trs_conn_req_info *in, struct rdma_cm_id *id)
{
	struct ibtrs_srv_path *path;
	int err = -ENOMEM;

	path = kzalloc(sizeof(*path), GFP_KERNEL);
	if (!path)
		return ERR_PTR(-ENOMEM);
	path->cons = kcalloc(in->cid_num, sizeof(*path->cons), GFP_KERNEL);
	path->stats = alloc_percpu(struct ibtrs_srv_stats);
	if (!path->cons || !path->stats)
		goto out_free_cons;
	path->sess = sess;
	path->ncons = in->cid_num;
	path->recon_cnt = in->recon_cnt;
	memcpy(path->uuid, in->path_uuid, TRS_UUID_LEN);
	path->dev = id->device;
	/* rxe maps nothing: no chunk syncs */
	path->need_sync = !ib_uses_virt_dma(path->dev);
	path->rekey = READ_ONCE(ibtrs_srv_chunk_mode) == TRS_CHUNK_REKEY;
	path->reg_cqe.done = ibtrs_srv_reg_done;
	path->hb_cqe.done = ibtrs_srv_hb_done;
	INIT_DELAYED_WORK(&path->hb_work, ibtrs_srv_hb_work);
	INIT_WORK(&path->close_work, ibtrs_srv_path_close_work);
	snprintf(path->addr, sizeof(path->addr), "%pISc",
		 &id->route.addr.dst_addr);
	path->created_us = ibtrs_now_us();
	path->pd = ib_alloc_pd(path->dev, 0);
	if (IS_ERR(path->pd)) {
		err = PTR_ERR(path->pd);
		path->pd = NULL;
		goto out_free_cons;
	}
	err = ibtrs_srv_path_map_pool(path);
	if (err)
		goto out_unmap_pool;
	/* silence is counted from now on, also before the path joins */
	ibtrs_srv_hb_start(path);
	list_add_tail(&path->link, &sess->paths);
	sess->npaths++;
	queue_delayed_work(ibtrs_srv_wq, &path->hb_work,
			   msecs_to_jiffies(IBTRS_TICK_MS));
	return path;

out_unmap_pool:
	ibtrs_srv_path_unmap_pool(path);
	ib_dealloc_pd(path->pd);
out_free_cons:
	free_percpu(path->stats);
	kfree(path->cons);
	kfree(path);
	return ERR_PTR(err);
}

/* ---------------------------------------------------------------- */
/* RDMA CM                                                           */

static int ibtrs_srv_reject(struct rdma_cm_id *id, int code, const char *why)
{
	struct trs_conn_params p = {
		.ver_major = TRS_PROTO_VER_MAJOR,
		.ver_minor = TRS_PROTO_VER_MINOR,
		.rej = code,
	};
	struct trs_msg_conn_rsp rsp;

	/* a flood of bad connects must not flood the log */
	pr_warn_ratelimited("rejecting a connection from %pISc: %s (%s)\n",
			    &id->route.addr.dst_addr, trs_rej_str(code), why);
	trs_conn_rsp_encode(&rsp, &p);
	rdma_reject(id, &rsp, sizeof(rsp), IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;	/* non-zero: the CM destroys the cm_id */
}

static bool ibtrs_srv_same_ip(const struct sockaddr *a,
			      const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	return false;
}

/*
 * Why a new session from @src would exceed max_sessions or
 * max_sessions_per_addr, or NULL. Under ctx->mutex.
 */
static const char *ibtrs_srv_sess_limit(struct ibtrs_srv_ctx *ctx,
					const struct sockaddr *src)
{
	struct ibtrs_srv_sess *sess;
	unsigned int n = 0;

	if (ctx->nsessions >= ibtrs_srv_max_sessions)
		return "max_sessions reached";
	list_for_each_entry(sess, &ctx->sessions, link)
		n += ibtrs_srv_same_ip((struct sockaddr *)&sess->src, src);
	if (n >= ibtrs_srv_max_sessions_per_addr)
		return "max_sessions_per_addr reached for this address";
	return NULL;
}

static int ibtrs_srv_connect_request(struct ibtrs_srv_ctx *ctx,
				     struct rdma_cm_id *id,
				     const struct rdma_conn_param *req)
{
	const void *pdata = req->private_data;
	u8 plen = req->private_data_len;
	struct trs_conn_params params = ctx->params;
	struct trs_conn_req_info in;
	struct trs_msg_conn_rsp rsp;
	struct rdma_conn_param cp = {
		.private_data = &rsp,
		.private_data_len = sizeof(rsp),
		.rnr_retry_count = 7,
	};
	struct sockaddr *src = (struct sockaddr *)&id->route.addr.dst_addr;
	struct ibtrs_srv_path *path = NULL, *p;
	struct ibtrs_srv_sess *sess;
	struct ibtrs_srv_con *con;
	const char *why = "";
	int rej, err;

	rej = trs_conn_req_decode(pdata, plen, &in, &why);
	if (rej)
		return ibtrs_srv_reject(id, rej, why);
	rej = trs_negotiate_version(in.ver_major, in.ver_minor,
				    &params.ver_minor);
	if (rej)
		return ibtrs_srv_reject(id, rej, "version");

	mutex_lock(&ctx->mutex);
	if (ctx->closing) {
		err = ibtrs_srv_reject(id, TRS_REJ_CLOSING, "module unloading");
		goto out_unlock;
	}
	list_for_each_entry(sess, &ctx->sessions, link)
		if (!memcmp(sess->uuid, in.sess_uuid, TRS_UUID_LEN))
			goto found;
	if (!(in.flags & TRS_CONN_F_FIRST)) {
		err = ibtrs_srv_reject(id, TRS_REJ_NO_SESS, "unknown session");
		goto out_unlock;
	}
	why = ibtrs_srv_sess_limit(ctx, src);
	if (why) {
		err = ibtrs_srv_reject(id, TRS_REJ_LIMIT, why);
		goto out_unlock;
	}
	sess = ibtrs_srv_sess_create(ctx, in.sess_uuid, id->device, src);
	if (IS_ERR(sess)) {
		err = ibtrs_srv_reject(id, TRS_REJ_NOMEM, "session allocation");
		goto out_unlock;
	}
found:
	list_for_each_entry(p, &sess->paths, link) {
		if (test_bit(IBTRS_PATH_FAILED, &p->flags) ||
		    memcmp(p->uuid, in.path_uuid, TRS_UUID_LEN))
			continue;
		if (p->recon_cnt != in.recon_cnt) {
			/* The client reconnected before we noticed: drop it. */
			ibtrs_srv_path_fail(p, "replaced by reconnect %u",
					    in.recon_cnt);
			continue;
		}
		path = p;
	}
	if (path && (path->ncons != in.cid_num || path->cons[in.cid].cm_id ||
		     path->dev != id->device)) {
		err = ibtrs_srv_reject(id, path->ncons != in.cid_num ?
				       TRS_REJ_BAD_CID : TRS_REJ_BUSY,
				       "connection index or device");
		goto out_unlock;
	}
	if (!path) {
		path = ibtrs_srv_path_create(sess, &in, id);
		if (IS_ERR(path)) {
			err = ibtrs_srv_reject(id, TRS_REJ_NOMEM,
					       "path allocation");
			if (!sess->npaths) {
				list_del(&sess->link);
				ctx->nsessions--;
				ibtrs_srv_sess_free(sess);
			}
			goto out_unlock;
		}
	}
	con = &path->cons[in.cid];
	con->path = path;
	con->cid = in.cid;
	con->cm_id = id;
	init_completion(&con->cm_done);
	err = ibtrs_srv_con_create(con);
	if (err)
		goto out_fail_con;
	id->context = con;
	err = rdma_set_ack_timeout(id, IBTRS_ACK_TIMEOUT);
	if (err)
		goto out_fail_con;
	/*
	 * write_mode pull: as many RDMA READs as the client takes (its
	 * responder resources, the event's initiator_depth), at most
	 * TRS_PULL_READS and what the device can issue.
	 */
	cp.initiator_depth = min_t(u32, req->initiator_depth, TRS_PULL_READS);
	cp.initiator_depth = min_t(u32, cp.initiator_depth,
				   id->device->attrs.max_qp_init_rd_atom);
	con->pull_depth = cp.initiator_depth;
	trs_conn_rsp_encode(&rsp, &params);
	err = rdma_accept(id, &cp);
	if (err)
		goto out_fail_con;
	mutex_unlock(&ctx->mutex);
	return 0;

out_fail_con:
	/* The CM destroys the cm_id when we return non-zero. */
	ibtrs_srv_con_destroy(con);
	con->cm_id = NULL;
	ibtrs_srv_path_fail(path, "setting up connection %u failed: %d",
			    in.cid, err);
	err = ibtrs_srv_reject(id, TRS_REJ_NOMEM, "connection setup");
out_unlock:
	mutex_unlock(&ctx->mutex);
	return err;
}

int ibtrs_srv_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct ibtrs_srv_ctx *ctx = ibtrs_srv_the_ctx;
	struct ibtrs_srv_con *con;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return ibtrs_srv_connect_request(ctx, id, &ev->param.conn);
	if (id == ctx->listen_id) {
		pr_warn("listener: %s (status %d)\n", rdma_event_msg(ev->event),
			ev->status);
		return 0;
	}
	con = id->context;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		/*
		 * The client may join and break a rule before the CM here has
		 * processed its RTU: the teardown's rdma_disconnect() then
		 * found no established connection to send a DREQ for.
		 */
		if (test_bit(IBTRS_PATH_FAILED, &con->path->flags))
			rdma_disconnect(id);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		complete(&con->cm_done);
		break;
	default:
		ibtrs_srv_path_fail(con->path, "%s (status %d)",
				    rdma_event_msg(ev->event), ev->status);
		complete(&con->cm_done);
	}
	return 0;
}
